"""One run a run folder: an ``flock`` on the folder, held while a run writes in it.

The lock is let go when the process (and the workers it forked, which inherit it) end, a
``kill -9`` included, so a killed run never leaves a stale lock behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cribenv.files import locked


@contextmanager
def holding(run_dir: Path, what: str) -> Iterator[None]:
    """Hold the existing folder ``run_dir`` for a run of kind ``what`` (e.g. "training run");
    a second holder is refused with a ValueError naming the folder as in use."""
    with locked(run_dir, busy=f"--run-dir {str(run_dir)!r} is in use by another {what} (or "
                "its workers, still ending): wait for it, or use another --run-dir"):
        yield
