"""cribenv: Cribbage as a reinforcement-learning benchmark.

``cribenv.cards`` and ``cribenv.scoring`` score hands; ``cribenv.game`` is the rules engine;
``cribenv.env()`` / ``cribenv.raw_env()`` build the PettingZoo AEC environment.
"""

from __future__ import annotations

import importlib
from typing import Any

from cribenv.registration import AEC_ENV_ID, GYM_ENV_ID
from cribenv.registration import register_envs as _register_envs

__version__ = "0.1.0"
__all__ = ["cards", "scoring", "env", "raw_env", "AEC_ENV_ID", "GYM_ENV_ID", "__version__"]


def __getattr__(name: str) -> Any:
    """``cribenv.cards`` and ``cribenv.scoring`` without an import, loaded on first use (so
    ``import cribenv``, and every command's ``--help``, stays quick)."""
    if name in ("cards", "scoring"):
        return importlib.import_module(f"cribenv.{name}")
    raise AttributeError(f"module 'cribenv' has no attribute {name!r}")


def env(**kwargs: Any):
    """The wrapped PettingZoo AEC environment (:func:`cribenv.aec.env`: its arguments)."""
    from cribenv.aec import env as _env

    return _env(**kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped PettingZoo AEC environment."""
    from cribenv.aec import raw_env as _raw_env

    return _raw_env(**kwargs)


_register_envs()
