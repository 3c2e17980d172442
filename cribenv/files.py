"""Writing output files whole or not at all: a temporary name beside the target, then a rename.

A full disk (or any failed write) leaves the previous file as it was and no temporary file
behind; :func:`no_space` words the error for the command line.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_text(d / "a.json", "{}\\n").read_text()
'{}\\n'
>>> sorted(p.name for p in d.iterdir())
['a.json']
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["as_disk_error", "atomic_path", "cleaned_up_on_failure", "no_space", "save_figure",
           "sqlite_errors", "write_text", "write_with"]

#: A write that fails while the device has less than this left is taken for a full disk:
#: libraries word it their own way (torch "unexpected pos", safetensors "os error 28").
LOW_SPACE = 1 << 20


def as_disk_error(exc: BaseException, path: str | os.PathLike[str]) -> BaseException:
    """``exc`` as an ``OSError(ENOSPC)`` naming ``path`` when the write failed because the
    device holding ``path`` is full, else ``exc`` itself."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return exc
    if not isinstance(exc, Exception):
        return exc
    try:
        stat = os.statvfs(Path(path).parent)
    except OSError:
        return exc
    if stat.f_bavail * stat.f_frsize < LOW_SPACE:
        return OSError(errno.ENOSPC, "No space left on device", os.fspath(path))
    return exc


@contextmanager
def cleaned_up_on_failure(path: str | os.PathLike[str], clean_up: Callable[[], Any]):
    """On any error in the block: ``clean_up()`` (remove what was half-written), then raise the
    error, as ``ENOSPC`` naming ``path`` where the device is full (:func:`as_disk_error`,
    measured before the clean-up frees the partial file)."""
    try:
        yield
    except BaseException as exc:
        error = as_disk_error(exc, path)
        clean_up()
        if error is exc:
            raise
        raise error from exc


@contextmanager
def atomic_path(path: str | os.PathLike[str]):
    """Yield a temporary path beside ``path`` (same suffix) to write; on success it replaces
    ``path``, on any error it is removed and ``path`` is left untouched."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}{path.suffix}")
    with cleaned_up_on_failure(path, lambda: tmp.unlink(missing_ok=True)):
        yield tmp
        tmp.replace(path)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def save_figure(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """``fig.savefig(path, **kwargs)`` atomically (the format from ``path``'s suffix)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or None, **kwargs)
    return path


def write_with(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` then rename ``tmp`` to ``path`` (for writers that take a path)."""
    with atomic_path(path) as tmp:
        write(tmp)
    return Path(path)


@contextmanager
def sqlite_errors(path: str | os.PathLike[str], what: str):
    """SQLite's errors in the block as one ``ValueError`` naming ``path``: a full disk in
    :func:`no_space`'s words, a damaged or foreign file as not a usable ``what``."""
    import sqlite3

    try:
        yield
    except sqlite3.DatabaseError as exc:
        if "full" in str(exc).lower():   # SQLITE_FULL: the disk, not the database
            raise ValueError(no_space(OSError(errno.ENOSPC, "No space left on device",
                                              os.fspath(path)))) from None
        raise ValueError(f"{path} is not a usable {what} ({exc}); move it aside or choose "
                         f"another --db") from None


def no_space(exc: BaseException) -> str | None:
    """The command line's words for a full disk (``None`` for any other error).

    >>> print(no_space(OSError(errno.ENOSPC, "No space left on device", "runs/x.png"))[:49])
    no space left on the device holding runs/x.png: f
    """
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = exc.filename or "the output folder"
        return (f"no space left on the device holding {where}: free some space and run it "
                f"again (a run resumes where it stopped)")
    return None


@contextmanager
def locked(path: str | os.PathLike[str], busy: str | None = None):
    """Hold an ``flock`` on ``path`` (a folder, or a file made if missing) while the block
    runs. The lock is let go when the block ends or the process does (``kill -9`` included,
    once the children it forked, which inherit it, have ended too), so a killed run leaves no
    stale lock. ``busy``: when another holds it, raise ValueError(busy) at once; None: wait
    for it. Not a POSIX system: no lock.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with locked(d, busy="in use"):
    ...     with locked(d, busy="in use"):
    ...         pass
    Traceback (most recent call last):
    ValueError: in use
    """
    try:
        import fcntl
    except ImportError:      # not a POSIX system: no lock
        yield
        return
    flags = os.O_RDONLY if Path(path).is_dir() else os.O_RDWR | os.O_CREAT
    fd = os.open(path, flags, 0o644)
    try:
        if busy is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(busy) from None
        yield
    finally:
        os.close(fd)
