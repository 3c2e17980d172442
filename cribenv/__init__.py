"""cribenv: Cribbage as a reinforcement-learning benchmark.

``cribenv.cards`` and ``cribenv.scoring`` score hands; ``cribenv.game`` is the rules engine;
``cribenv.env()`` / ``cribenv.raw_env()`` build the PettingZoo AEC environment.
"""

from __future__ import annotations

from typing import Any

from cribenv import cards, scoring

__version__ = "0.1.0"
__all__ = ["cards", "scoring", "env", "raw_env", "AEC_ENV_ID", "GYM_ENV_ID", "__version__"]


def env(**kwargs: Any):
    """The wrapped PettingZoo AEC environment (see :func:`cribenv.env.make_env`)."""
    from cribenv.aec import env as _env

    return _env(**kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped PettingZoo AEC environment."""
    from cribenv.aec import raw_env as _raw_env

    return _raw_env(**kwargs)


# The ids ``import cribenv`` registers, with lazy entry points (a "module:attribute" string: the
# env's module is imported by the first ``make``, never by ``import cribenv``).
AEC_ENV_ID = "cribenv/cribbage-v0"
GYM_ENV_ID = "cribenv/SingleAgentCribbage-v0"


def _register_with_pettingzoo() -> None:
    """Register ``cribenv/cribbage-v0`` with PettingZoo's registry (PettingZoo >= 1.25)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # an older PettingZoo without a registry
        return
    if AEC_ENV_ID not in aec_registry:
        register("aec", AEC_ENV_ID, entry_point="cribenv.aec:env")


def _register_with_gymnasium() -> None:
    """Register ``cribenv/SingleAgentCribbage-v0`` (the single-agent env of
    :mod:`cribenv.wrappers`): ``gymnasium.make`` and SB3's ``make_vec_env`` find it after
    ``import cribenv``."""
    import gymnasium

    if GYM_ENV_ID not in gymnasium.registry:
        gymnasium.register(GYM_ENV_ID, entry_point="cribenv.wrappers:SingleAgentCribbageEnv")


_register_with_pettingzoo()
_register_with_gymnasium()
