"""Plain, obviously-correct (and slow) scorers used to check the fast ones. No tables.

The tests compare :mod:`cribenv.scoring` against these, and ``cribenv bench`` uses them as the
baseline of its scoring ratios.
"""

from __future__ import annotations

from itertools import combinations

from cribenv.cards import JACK, rank, suit, value


def is_run(cards: tuple[int, ...]) -> bool:
    """True if the cards are distinct consecutive ranks (A low only)."""
    ranks = sorted(rank(c) for c in cards)
    return all(ranks[i + 1] == ranks[i] + 1 for i in range(len(ranks) - 1))


def ref_score_hand(hand: list[int], starter: int, is_crib: bool = False) -> int:
    """Show score of 4 card ids plus a starter id, straight from the rules."""
    five = [*hand, starter]
    points = 0
    for size in range(2, 6):
        for combo in combinations(five, size):
            if sum(value(c) for c in combo) == 15:
                points += 2
    for a, b in combinations(five, 2):
        if rank(a) == rank(b):
            points += 2
    for size in (5, 4, 3):  # count runs at their longest length only
        runs = [combo for combo in combinations(five, size) if is_run(combo)]
        if runs:
            points += size * len(runs)
            break
    if len({suit(c) for c in hand}) == 1:
        if suit(starter) == suit(hand[0]):
            points += 5
        elif not is_crib:
            points += 4
    if any(rank(c) == JACK and suit(c) == suit(starter) for c in hand):
        points += 1
    return points


def ref_peg_points(series: list[int]) -> int:
    """Points for the last card of a pegging series (go / last card not included)."""
    count = sum(value(c) for c in series)
    assert count <= 31
    points = 0
    if count == 15:
        points += 2
    if count == 31:
        points += 2
    same = 1
    while same < len(series) and rank(series[-1 - same]) == rank(series[-1]):
        same += 1
    points += {1: 0, 2: 2, 3: 6, 4: 12}[same]
    for k in range(len(series), 2, -1):  # the largest run only
        last = series[-k:]
        if len({rank(c) for c in last}) == k and is_run(tuple(last)):
            points += k
            break
    return points
