"""The old homes of the packages that left ``agents/`` (2026-12-05): the tournament and the
ladder are :mod:`tournament` and :mod:`tournament.ladder`, the web table is :mod:`webtable`.
An import by an old name still works, warns once with the new name, and gives the very module
of the new home (so objects, pickles and ``isinstance`` checks are the same either way).

    >>> import sys, warnings
    >>> _ = sys.modules.pop("agents.tournament.statistics", None)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     from agents.tournament.statistics import wilson_interval
    >>> import tournament.statistics
    >>> wilson_interval is tournament.statistics.wilson_interval
    True
    >>> print(caught[-1].message)
    agents.tournament.statistics moved to tournament.statistics; import it from there
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: old package -> its new home (the longest match wins: agents.ladder is not agents.l...)
MOVED = {"agents.tournament": "tournament", "agents.ladder": "tournament.ladder",
         "agents.web": "webtable"}


def new_name(name: str) -> str | None:
    """The new home of a module by its old name, or ``None`` if it did not move.

    >>> new_name("agents.ladder.deals"), new_name("agents.web"), new_name("agents.base")
    ('tournament.ladder.deals', 'webtable', None)
    """
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module of its new home: the import system returns whatever
    ``sys.modules`` holds under the name once ``exec_module`` is done."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = new_name(old)
        assert new is not None
        warnings.warn(f"{old} moved to {new}; import it from there", DeprecationWarning,
                      stacklevel=2)
        sys.modules[old] = importlib.import_module(new)


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED` (installed by ``import agents``)."""

    def find_spec(self, fullname, path=None, target=None):
        if new_name(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias())


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
