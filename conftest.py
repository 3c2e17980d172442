"""Collection settings for the whole tree: pytest also imports every module of the packages to
run their docstring examples (``--doctest-modules`` in pyproject.toml), so a module whose
optional extra is not installed is left out instead of failing to import.

Outside CI, tests of an extra that is not installed skip, saying which extra. CI (``CI`` set, as
``.ci/run`` does) installs every extra, so there a missing one stops the run before any test.
"""

from __future__ import annotations

import gc
import importlib.util
import os

# glob (relative to this folder) -> the modules it needs (their extra)
NEEDS = {
    "train/*.py": ("torch", "stable_baselines3", "sb3_contrib"),   # the 'train' extra
    "cribenv/vector.py": ("numba",),                                # the 'vector' extra
    "cribenv/_vector*.py": ("numba",),
    "cribenv/vector_kernels.py": ("numba",),
    "agents/search/playouts.py": ("numba",),
    "agents/search/kernels.py": ("numba",),
    "webtable/app.py": ("fastapi",),                              # the 'web' extra
    "webtable/server.py": ("fastapi",),
    "webtable/routes/*.py": ("fastapi",),
    "webtable/command.py": ("fastapi",),
    "webtable/templating.py": ("jinja2",),                         # the pages' templates
    "webtable/render.py": ("jinja2",),
    "webtable/views.py": ("jinja2",),
    "webtable/review_page.py": ("jinja2",),
    "cribenv/render_image.py": ("PIL",),                            # the 'render' extra
    "cribenv/integrations/tianshou.py": ("tianshou", "torch"),      # the 'integrations' extra
    "cribenv/integrations/tianshou_batched.py": ("tianshou", "torch", "numba"),
    "cribenv/integrations/torchrl.py": ("torchrl", "tensordict", "torch"),
    "cribenv/integrations/torchrl_batched.py": ("torchrl", "tensordict", "torch", "numba"),
    "cribenv/integrations/rllib.py": ("ray", "torch"),                # the 'rllib' extra
    "cribenv/integrations/sb3.py": ("stable_baselines3", "sb3_contrib", "torch"),
    "cribenv/integrations/openspiel.py": ("pyspiel",),                # the 'openspiel' extra
    "agents/openspiel.py": ("pyspiel",),
    "train/rllib_trainer.py": ("ray", "torch"),
}

collect_ignore_glob = [
    pattern for pattern, modules in NEEDS.items()
    if any(importlib.util.find_spec(m) is None for m in modules)
]

# every extra's modules (module -> extra): all of them must be importable in CI
CI_NEEDS = {
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train",
    "tensorboard": "train", "numba": "vector", "safetensors": "bots", "scipy": "tournament",
    "choix": "tournament", "matplotlib": "tournament", "tqdm": "tournament", "fastapi": "web",
    "jinja2": "web", "uvicorn": "web", "httpx": "web", "PIL": "render", "supersuit": "integrations",
    "tianshou": "integrations", "torchrl": "integrations", "tensordict": "integrations",
    "ray": "rllib", "shimmy": "bench", "pyspiel": "openspiel", "rlcard": "bench",
    "pyinstrument": "bench", "playwright": "dev", "hypothesis": "dev", "xdist": "dev",
    "mkdocs": "docs", "material": "docs", "mkdocstrings_handlers": "docs", "nbclient": "docs",
    "nbformat": "docs", "ipykernel": "docs",
}


def pytest_configure(config) -> None:
    if not os.environ.get("CI"):
        return
    missing = [f"{m} ('{extra}' extra)" for m, extra in CI_NEEDS.items()
               if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(f"CI runs every test, but these extras are not installed: "
                           f"{', '.join(missing)}")


def pytest_sessionfinish(session) -> None:
    """In a pytest-xdist worker: collect the garbage now, then freeze what is left.

    A worker tells the controller it has finished right after this hook; the controller then
    gives it 5 s (execnet's grace) to wind down, and a worker still busy after that is sent
    SIGINT. What it did in that time was pytest's last garbage collections (the
    unraisable-exception check at unconfigure), which traverse the whole heap: after a full
    run on a loaded 2-core machine they took longer, and the KeyboardInterrupt surfaced in the
    first Python code after a collection, hypothesis' gc callback, printed as a traceback after
    a passing run. Collected here, while the controller still waits (and while pytest still
    reports unraisable exceptions), and frozen, the later collections have nothing to
    traverse."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        gc.collect()
        gc.freeze()
