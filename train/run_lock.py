"""One run a run folder: an ``flock`` on the folder, held while a run writes in it.

The lock is let go when the process (and the workers it forked, which inherit it) end, a
``kill -9`` included, so a killed run never leaves a stale lock behind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def holding(run_dir: Path, what: str) -> Iterator[None]:
    """Hold the existing folder ``run_dir`` for a run of kind ``what`` (e.g. "training run");
    a second holder is refused with a ValueError naming the folder as in use."""
    try:
        import fcntl
    except ImportError:      # not a POSIX system: no lock
        yield
        return
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"--run-dir {str(run_dir)!r} is in use by another {what} (or its "
                             "workers, still ending): wait for it, or use another --run-dir"
                             ) from None
        yield
    finally:
        os.close(fd)
