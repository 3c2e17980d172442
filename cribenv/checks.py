"""The validators every boundary uses: constructors, ``reset`` options, ``step``, CLI arguments.

Each returns the checked value (normalised: a numpy integer becomes an ``int``) or raises an
error whose message names the setting and the bad value; the CLI turns a ``ValueError`` into
exit status 2. They are cheap, and the hot path (``step``) asks only :func:`card_id`, and only
for values that are not already a plain ``int``.

    >>> exact_int(np.int64(3), "seats")
    3
    >>> exact_int(2.0, "seats")
    Traceback (most recent call last):
    ...
    TypeError: seats must be an int, got 2.0 (float)
    >>> exact_bool("no", "must_peg_out_exactly")
    Traceback (most recent call last):
    ...
    TypeError: must_peg_out_exactly must be True or False, got 'no' (str)
"""

from __future__ import annotations

import argparse
import math
import operator
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["exact_int", "exact_bool", "real_number", "card_id", "int_at_least", "int_arg",
           "writable_file", "writable_dir"]


def _shown(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def exact_int(value: Any, name: str) -> int:
    """``value`` as an ``int``: ints and numpy integers only (no bools, floats or strings)."""
    if type(value) is int:
        return value
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {_shown(value)}")
    return operator.index(value)


def int_at_least(value: Any, name: str, low: int) -> int:
    """An ``int`` of at least ``low`` (ValueError naming it otherwise).

        >>> int_at_least(0, "--workers", 1)
        Traceback (most recent call last):
        ...
        ValueError: --workers must be at least 1, got 0
    """
    value = exact_int(value, name)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    return value


def int_arg(low: int) -> Callable[[str], int]:
    """An argparse ``type`` for an int of at least ``low``: a bad value is argparse's usage
    error (exit status 2) naming it.

        >>> int_arg(1)("3")
        3
        >>> int_arg(1)("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected an integer of at least 1, got '0'
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer of at least {low}, got "
                                             f"{text!r}")
        return value

    parse.__name__ = f"int >= {low}"
    return parse


def int_range_arg(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type`` for an int from ``low`` to ``high``: a bad value is argparse's
    usage error (exit status 2) naming it.

        >>> int_range_arg(0, 65535)("8000")
        8000
        >>> int_range_arg(0, 65535)("99999")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected an integer from 0 to 65535, got '99999'
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got "
                                             f"{text!r}")
        return value

    parse.__name__ = f"int {low}..{high}"
    return parse


def exact_bool(value: Any, name: str) -> bool:
    """``True`` or ``False`` (a numpy bool too); anything else is refused, ``"no"`` included."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_shown(value)}")


def real_number(value: Any, name: str) -> float:
    """A finite ``float`` from an int or float (no bools, strings, NaN or infinity)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer
                                                            | np.floating):
        raise TypeError(f"{name} must be a number, got {_shown(value)}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def card_id(action: Any) -> int:
    """An action as a card id: an ``int`` or numpy integer (range checked by the game).

    ``5.7``, ``5.0``, ``"5"``, ``True`` and ``None`` are refused rather than truncated.
    """
    if type(action) is int:
        return action
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise TypeError(f"an action is a card id, an int 0..51 (cribenv.cards), got "
                        f"{_shown(action)}")
    return operator.index(action)


def writable_file(path: str | Path, what: str) -> Path:
    """Check, before any long work, that ``path`` can be written as a file: not a folder, its
    folder writable (or creatable: the nearest existing one is writable). Creates nothing."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a folder; name a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{what} {str(path)!r} is not writable")
    writable_dir(path.parent, f"the folder of {what}")
    return path


def writable_dir(path: str | Path, what: str) -> Path:
    """Check that folder ``path`` is writable, or can be created (its nearest existing parent
    is a writable folder). Creates nothing; the writer makes the folder when it writes."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a file, not a folder")
    probe = path.absolute()
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{what} {str(path)!r} cannot be created: {str(probe)!r} is a file")
    try:  # a real write: permission bits, read-only mounts and ACLs all answer here
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        where = "" if probe == path.absolute() else f" ({str(probe)!r} is not writable)"
        raise ValueError(f"{what} {str(path)!r} is not writable{where}: {exc.strerror}"
                         ) from None
    return path
