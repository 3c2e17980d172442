"""Registering the env ids with Gymnasium and PettingZoo, without importing either.

``import cribenv`` makes ``gymnasium.make("cribenv/SingleAgentCribbage-v0")`` and
``pettingzoo.make("aec", "cribenv/cribbage-v0")`` work, yet it imports neither framework (they
cost ~0.2 s, and ``cribenv score`` or any command's ``--help`` needs neither): a framework
already imported gets the ids at once, one imported later gets them as soon as its package has
run (an import hook watches for it, then removes itself). The entry points are lazy strings, so
the env modules load at the first ``make``.

    >>> import gymnasium, cribenv
    >>> gymnasium.spec(cribenv.GYM_ENV_ID).entry_point
    'cribenv.wrappers:SingleAgentCribbageEnv'
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType

AEC_ENV_ID = "cribenv/cribbage-v0"
GYM_ENV_ID = "cribenv/SingleAgentCribbage-v0"


def register_with_gymnasium(gymnasium: ModuleType) -> None:
    """Register ``cribenv/SingleAgentCribbage-v0`` (:class:`cribenv.wrappers.
    SingleAgentCribbageEnv`): ``gymnasium.make`` and SB3's ``make_vec_env`` find it, and
    ``gymnasium.make_vec`` builds the batched engine's env
    (:func:`cribenv.vector_env.make_vector_env`; ``vectorization_mode="sync"`` for copies of
    the single env)."""
    if GYM_ENV_ID not in gymnasium.registry:
        gymnasium.register(GYM_ENV_ID, entry_point="cribenv.wrappers:SingleAgentCribbageEnv",
                           vector_entry_point="cribenv.vector_env:make_vector_env")


def register_with_pettingzoo(pettingzoo: ModuleType) -> None:
    """Register ``cribenv/cribbage-v0`` with PettingZoo's registry (PettingZoo >= 1.25)."""
    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and AEC_ENV_ID not in registry:
        pettingzoo.register("aec", AEC_ENV_ID, entry_point="cribenv.aec:env")


REGISTER: dict[str, Callable[[ModuleType], None]] = {
    "gymnasium": register_with_gymnasium, "pettingzoo": register_with_pettingzoo}


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a framework being imported, it has the other finders locate
    the package and wraps its loader so that the ids are registered once the package has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in REGISTER or fullname in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_package = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_package(module)
            _pending.discard(fullname)
            if not _pending and _HOOK in sys.meta_path:
                sys.meta_path.remove(_HOOK)
            REGISTER[fullname](module)

        spec.loader.exec_module = exec_module  # this package's own loader object
        return spec


_HOOK = _RegisterOnImport()
_pending: set[str] = set()


def register_envs() -> None:
    """Register the ids with every framework imported now, and with the others on import."""
    for name, register in REGISTER.items():
        if name in sys.modules:
            register(sys.modules[name])
        else:
            _pending.add(name)
    if _pending and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
