"""The benchmarks behind ``cribenv bench``: every rate printed beside baselines measured in the
same run, so the ratios compare like with like on whatever machine runs them.

A *section* is a module of this package whose name does not start with ``_``; it is found by
its presence (no list to edit) and has this shape::

    ORDER = 30              # optional: sections run and print in (ORDER, name) order; 100 if absent
    DEFAULT = True          # optional: False runs it only when asked (cribenv bench --only NAME)

    def run(seconds: float, progress: Progress) -> dict:
        '''Measure, spending about ``seconds`` on each measurement; call progress("what now")
        before each long step. Return plain data (it is written to --json as it is).'''

    def report(result: dict) -> None:
        '''Print the section's table from run()'s result: a title line, then the rows.'''

A section measures its baselines itself, in the same run, and skips a baseline that is not
installed with a note in its result rather than failing. ``train.benchmarks._timing`` holds the
shared helpers (``timed``, ``ROUNDS`` for interleaved slices, ``fmt_rate``, ``fmt_ratio``,
``fmt_seconds``); ``train.benchmarks.env.AECRandomPlay`` plays any AEC env the way users run one
(seeded once, then ``reset()`` without a seed). A long section (a training run) sets
``DEFAULT = False``. The sections today: ``scoring``
(hand scoring against the plain reference scorer), ``engine`` (the rules engine), ``env``
(the AEC env and the Gymnasium wrapper against PettingZoo's leduc and OpenSpiel's cribbage),
``openspiel`` (the ``python_cribenv`` OpenSpiel game against OpenSpiel's C++ cribbage) and
``search`` (the search agent beside its base). ``train.benchmarks.command`` is ``cribenv bench``
itself (its options), not a section.

    >>> from train import benchmarks
    >>> [name for name in benchmarks.section_names() if name in ("scoring", "engine", "env")]
    ['scoring', 'engine', 'env']
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

__all__ = ["Progress", "section_names", "load_section", "run_sections"]

Progress = Callable[[str], None]


def _modules() -> list[str]:
    """The sections' module names: every module of the package but the private ones and
    ``command`` (``cribenv bench`` itself)."""
    return [m.name for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_") and m.name != "command"]


def section_names(default_only: bool = False) -> list[str]:
    """The sections of this package, in the order they run (``default_only``: those that run
    when no section is named)."""
    names = _modules()
    modules = [load_section(name) for name in names]
    if default_only:
        modules = [m for m in modules if getattr(m, "DEFAULT", True)]
    modules.sort(key=lambda m: (getattr(m, "ORDER", 100), m.__name__))
    return [m.__name__.rpartition(".")[2] for m in modules]


def load_section(name: str) -> ModuleType:
    """The module of section ``name`` (a ``ValueError`` naming the sections if there is none)."""
    names = _modules()
    if name not in names:
        raise ValueError(f"no benchmark section {name!r}; the sections are {', '.join(names)}")
    return importlib.import_module(f"{__name__}.{name}")


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import numpy as np

    import cribenv

    return {"python": platform.python_version(), "numpy": np.__version__,
            "platform": f"{platform.system()} {platform.machine()}", "cpus": os.cpu_count(),
            "cribenv": cribenv.__version__}


def _stderr_progress(text: str) -> None:
    print(f"  ... {text}", file=sys.stderr, flush=True)


def run_sections(seconds: float, sections: Sequence[str] | None = None,
                 json_path: str | None = None, quiet: bool = False) -> dict[str, Any]:
    """Run ``sections`` (default: every default section) and print their tables; return the
    results by section name (with ``machine`` and ``seconds``), also written to ``json_path``."""
    if not seconds > 0:
        raise ValueError(f"--seconds must be positive, got {seconds}")
    for name in sections or ():
        load_section(name)                      # an unknown name is a ValueError here
    chosen = [name for name in section_names(default_only=not sections)
              if not sections or name in sections]
    progress: Progress = (lambda text: None) if quiet else _stderr_progress
    info = machine()
    print(f"cribenv bench: Python {info['python']}, numpy {info['numpy']}, "
          f"{info['platform']}, {info['cpus']} CPUs; {seconds:g} s per measurement")
    print("(every rate and ratio below was measured in this run)")
    out: dict[str, Any] = {"machine": info, "seconds": seconds}
    for name in chosen:
        section = load_section(name)
        result = section.run(seconds, progress)
        out[name] = result
        print()
        section.report(result)
        sys.stdout.flush()
    if json_path:
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
        print(f"\nwrote {json_path}")
    return out
