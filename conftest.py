"""Collection settings for the whole tree: pytest also imports every module of the packages to
run their docstring examples (``--doctest-modules`` in pyproject.toml), so a module whose
optional extra is not installed is left out instead of failing to import."""

from __future__ import annotations

import importlib.util

# glob (relative to this folder) -> the modules it needs (their extra)
NEEDS = {
    "train/*.py": ("torch", "stable_baselines3", "sb3_contrib"),   # the 'train' extra
    "cribenv/vector.py": ("numba",),                                # the 'vector' extra
    "cribenv/_vector*.py": ("numba",),
    "agents/web/app.py": ("fastapi",),                              # the 'web' extra
    "agents/web/command.py": ("fastapi",),
    "cribenv/render_image.py": ("PIL",),                            # the 'render' extra
    "cribenv/integrations/tianshou.py": ("tianshou", "torch"),      # the 'integrations' extra
    "cribenv/integrations/torchrl.py": ("torchrl", "tensordict", "torch"),
    "cribenv/integrations/rllib.py": ("ray", "torch"),                # the 'rllib' extra
    "train/rllib_trainer.py": ("ray", "torch"),
}

collect_ignore_glob = [
    pattern for pattern, modules in NEEDS.items()
    if any(importlib.util.find_spec(m) is None for m in modules)
]
