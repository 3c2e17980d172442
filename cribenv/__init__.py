"""cribenv: Cribbage as a reinforcement-learning benchmark.

``cribenv.cards`` and ``cribenv.scoring`` score hands; ``cribenv.game`` is the rules engine;
``cribenv.env()`` / ``cribenv.raw_env()`` build the PettingZoo AEC environment.
"""

from __future__ import annotations

from typing import Any

from cribenv import cards, scoring

__version__ = "0.1.0"
__all__ = ["cards", "scoring", "env", "raw_env", "__version__"]


def env(**kwargs: Any):
    """The wrapped PettingZoo AEC environment (see :func:`cribenv.env.make_env`)."""
    from cribenv.aec import env as _env

    return _env(**kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped PettingZoo AEC environment."""
    from cribenv.aec import raw_env as _raw_env

    return _raw_env(**kwargs)


def _register_with_pettingzoo() -> None:
    """Register ``cribenv/cribbage-v0`` with PettingZoo's registry (PettingZoo >= 1.25)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # an older PettingZoo without a registry
        return
    if "cribenv/cribbage-v0" not in aec_registry:
        register("aec", "cribenv/cribbage-v0", entry_point="cribenv.aec:env")


_register_with_pettingzoo()
