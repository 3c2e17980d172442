"""Timing and number formatting shared by the benchmark sections."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# engine and env rates are timed in interleaved slices: load changes hit all alike
ROUNDS = 3


def timed(fn: Callable[[], int], seconds: float) -> tuple[float, int]:
    """Call ``fn`` (which does some work and returns how many units it did) until ``seconds``
    have passed; return (elapsed seconds, units).

    >>> elapsed, units = timed(lambda: 1, 0.001)
    >>> elapsed >= 0.001 and units >= 1
    True
    """
    gc.collect()
    units = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        units += fn()
        now = time.perf_counter()
        if now >= deadline:
            return now - start, units


def fmt_rate(x: float | None) -> str:
    """A rate for a table.

    >>> fmt_rate(1234567.8), fmt_rate(12.345), fmt_rate(None)
    ('1,234,568', '12.35', 'n/a')
    """
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.2f}"


def fmt_ratio(x: float | None) -> str:
    """A ratio for a table.

    >>> fmt_ratio(202.4), fmt_ratio(12.34), fmt_ratio(2.345), fmt_ratio(0.01234)
    ('202x', '12.3x', '2.35x', '0.012x')
    """
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    if x >= 0.1:
        return f"{x:.2f}x"
    return f"{x:.2g}x"


def fmt_seconds(s: float) -> str:
    """A duration for a table.

    >>> fmt_seconds(1.344), fmt_seconds(1218.0), fmt_seconds(7200.0)
    ('1.34 s', '20.3 min', '2.0 h')
    """
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.2f} s"
