"""An entrant's ladder rating: Bradley-Terry on the Elo scale against anchors of fixed rating.

With anchor ``a`` rated ``R_a``, an agent rated ``r`` wins a game against it with probability
``p_a(r) = 1 / (1 + 10 ** ((R_a - r) / 400))``. The rating is the ``r`` that makes the games
most likely (one concave equation, solved by Newton's method): a difference of 400 means
winning 10 games to 1, and since the anchors' ratings are fixed constants of the deal set, a
number means the same in every run. Its 95% interval is ``r +- 1.96 se`` with a robust
(sandwich) standard error over duplicate units: the two games of a deal against an anchor are
one unit, as they share their cards.

>>> anchors = {"weak": 1000.0, "strong": 1600.0}
>>> units = {"weak": [(2, 2)] * 9 + [(1, 2)], "strong": [(1, 2)] * 8 + [(0, 2)] * 2}
>>> r, low, high = fixed_anchor_rating(anchors, units)
>>> 1300 < r < 1600 and low < r < high
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["fixed_anchor_rating", "win_probability"]

_C = math.log(10.0) / 400.0
Z95 = 1.959963984540054


def win_probability(rating: float, anchor: float) -> float:
    """The chance that an agent rated ``rating`` beats one rated ``anchor``.

    >>> round(win_probability(1900, 1500), 4)
    0.9091
    """
    return 1.0 / (1.0 + 10.0 ** ((anchor - rating) / 400.0))


def fixed_anchor_rating(anchors: Mapping[str, float],
                        units: Mapping[str, Sequence[tuple[int, int]]]
                        ) -> tuple[float, float, float]:
    """``(rating, low, high)`` from ``units[anchor]``: the ``(wins, games)`` of each duplicate
    unit against that anchor. With no loss (or no win) at all the rating is ``+inf``
    (``-inf``), its interval open on that side."""
    wins = sum(w for unit in units.values() for w, _ in unit)
    games = sum(n for unit in units.values() for _, n in unit)
    if games == 0:
        raise ValueError("no games against the anchors")
    if wins == games or wins == 0:
        edge = math.inf if wins else -math.inf
        bound = (max if wins else min)(anchors[a] for a in units if units[a])
        return (edge, bound, edge) if wins else (edge, edge, bound)
    totals = {a: (sum(w for w, _ in u), sum(n for _, n in u)) for a, u in units.items()}
    r = 1500.0
    for _ in range(200):
        grad = info = 0.0
        for a, (w, n) in totals.items():
            p = win_probability(r, anchors[a])
            grad += _C * (w - n * p)
            info += _C * _C * n * p * (1.0 - p)
        step = max(-400.0, min(400.0, grad / info))
        r += step
        if abs(step) < 1e-9:
            break
    spread = 0.0
    for a, unit in units.items():
        p = win_probability(r, anchors[a])
        for w, n in unit:
            spread += (_C * (w - n * p)) ** 2
    info = sum(_C * _C * n * win_probability(r, anchors[a]) * (1 - win_probability(r, anchors[a]))
               for a, (_, n) in totals.items())
    se = math.sqrt(spread) / info
    return r, r - Z95 * se, r + Z95 * se
