"""Shared tables and fast helpers for the heuristic bots (:mod:`agents.greedy`,
:mod:`agents.expert`).

Everything here is derived from the rules at import (some tens of milliseconds), nothing is
read from disk:

* :data:`HAND4_POINTS`: fifteens + pairs + runs of 4 cards alone (no starter), keyed by
  ``((r0 * 13 + r1) * 13 + r2) * 13 + r3`` (any order); :func:`score4` adds the 4-card flush.
  :func:`throw_points` scores 2 thrown cards alone (pair 2, fifteen 2).
* :func:`discard_evs`: the exact expected show value of every way to lay away 1 or 2 cards:
  the kept 4 over every unseen starter, and the crib over every way the other crib cards and
  the starter can fall among the unseen cards (uniformly random, the assumption of
  :mod:`cribenv.discard`). It works on rank counts with :data:`cribenv.scoring.RANK_POINTS`
  (fifteens, pairs and runs depend on ranks only; flush and nobs are exact suit-count terms),
  so all options of a decision cost a few numpy calls (~0.15 ms; less when cached) and match
  :func:`cribenv.discard.analyse_discards` to rounding.
  The rank-only parts are cached by the ranks involved (at most 50,000 entries).
* :func:`peg_add`: the pegging points for laying one more rank on a series of ranks (the same
  rules as :func:`cribenv.scoring.peg_points_ids`, on ranks, without building lists);
  :func:`peg_all`: the same for all 13 ranks at once, cached by series (at most 100,000).
"""

from __future__ import annotations

import itertools

import numpy as np

from cribenv.scoring import RANK_POINTS

__all__ = [
    "HAND4_POINTS",
    "VALUE",
    "discard_evs",
    "peg_add",
    "peg_all",
    "score4",
    "throw_points",
]

VALUE: tuple[int, ...] = tuple(min(r + 1, 10) for r in range(13))
"""Counting value of each rank index 0..12."""


# ------------------------------------------------------------------------------------------
# 4 cards without a starter (the greedy bot's discard)
# ------------------------------------------------------------------------------------------


def _points4(ranks: tuple[int, ...]) -> int:
    """Fifteens + pairs + runs of 4 ranks (no starter), straight from the rules."""
    pts = 0
    for size in (2, 3, 4):
        for combo in itertools.combinations(ranks, size):
            if sum(VALUE[r] for r in combo) == 15:
                pts += 2
    counts = [ranks.count(r) for r in range(13)]
    pts += sum(c * (c - 1) for c in counts)  # c of a rank: c*(c-1)/2 pairs of 2
    for length in (4, 3):  # the longest run only, times the multiplicities
        for start in range(13 - length + 1):
            window = counts[start:start + length]
            if all(window):
                mult = 1
                for c in window:
                    mult *= c
                pts += length * mult
                break
        else:
            continue
        break
    return pts


def _build_hand4() -> bytes:
    """Scores the 1820 sorted rank multisets, then maps every ordered 4-tuple to its sorted
    one."""
    by_key = np.zeros(13**4, dtype=np.uint8)
    for ranks in itertools.combinations_with_replacement(range(13), 4):
        by_key[((ranks[0] * 13 + ranks[1]) * 13 + ranks[2]) * 13 + ranks[3]] = _points4(ranks)
    r = np.sort(np.indices((13,) * 4).reshape(4, -1).T, axis=1)  # rows in key order
    return by_key[((r[:, 0] * 13 + r[:, 1]) * 13 + r[:, 2]) * 13 + r[:, 3]].tobytes()


HAND4_POINTS: bytes = _build_hand4()
"""Fifteens + pairs + runs of 4 ranks alone, indexed by ``((r0*13+r1)*13+r2)*13+r3``."""


def score4(c0: int, c1: int, c2: int, c3: int) -> int:
    """Points of 4 cards alone (no starter): fifteens, pairs, runs, a 4-card flush; no nobs."""
    pts = HAND4_POINTS[(((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)]
    s = c0 & 3
    if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
        pts += 4
    return pts


def throw_points(cards: tuple[int, ...] | list[int]) -> int:
    """Points of 1 or 2 thrown cards alone: a pair 2, a fifteen 2 (a single card scores 0)."""
    if len(cards) != 2:
        return 0
    a, b = cards[0] >> 2, cards[1] >> 2
    return (2 if a == b else 0) + (2 if VALUE[a] + VALUE[b] == 15 else 0)


# ------------------------------------------------------------------------------------------
# Exact discard expectations from rank counts
# ------------------------------------------------------------------------------------------

_RP = RANK_POINTS.reshape((13,) * 5).astype(np.float64)
_I = np.arange(13)


def _crib_rank_tables() -> tuple[np.ndarray, np.ndarray]:
    """Rank-point tables for the crib expectations of :func:`discard_evs`.

    The number of ordered ways to draw distinct cards with ranks ``(x1, .., xk)`` from cards with
    rank counts ``a`` is a sum over the set partitions of the k positions (Moebius inversion):
    for k = 3, ``a_x a_y a_z - [x=y] a_x a_z - [x=z] a_x a_y - [y=z] a_x a_y + 2 [x=y=z] a_x``.
    Rank points are symmetric in their arguments, so each kind of partition needs one table;
    a row of these tables dotted with the matching products of ``a`` gives the exact sum.
    """
    # 2 thrown ranks (row r0 * 13 + r1) and 3 drawn: partitions 111 (+1), 21 (-1, x3), 3 (+2).
    t111 = _RP.reshape(169, 13**3)
    t21 = _RP[:, :, _I[:, None], _I[:, None], _I[None, :]].reshape(169, 169)
    t3 = _RP[:, :, _I, _I, _I].reshape(169, 13)
    two = np.concatenate([t111, -3 * t21, 2 * t3], axis=1)
    # 1 thrown rank and 4 drawn: 1111 (+1), 211 (-1, x6), 22 (+1, x3), 31 (+2, x4), 4 (-6).
    x, y, z = _I[:, None, None], _I[None, :, None], _I[None, None, :]
    t1111 = _RP.reshape(13, 13**4)
    t211 = _RP[:, x, x, y, z].reshape(13, 13**3)
    t22 = _RP[:, _I[:, None], _I[:, None], _I[None, :], _I[None, :]].reshape(13, 169)
    t31 = _RP[:, _I[:, None], _I[:, None], _I[:, None], _I[None, :]].reshape(13, 169)
    t4 = _RP[:, _I, _I, _I, _I].reshape(13, 13)
    one = np.concatenate([t1111, -6 * t211, 3 * t22, 8 * t31, -6 * t4], axis=1)
    return np.ascontiguousarray(two), np.ascontiguousarray(one)


_CRIB2, _CRIB1 = _crib_rank_tables()
def _draw_vector(a: np.ndarray, k: int) -> np.ndarray:
    """The products of rank counts that :func:`_crib_rank_tables` rows are dotted with,
    divided by the number of ordered draws, for ``k`` = 3 or 4 drawn cards."""
    n = a.sum()
    aa = np.multiply.outer(a, a)
    aaa = np.multiply.outer(aa, a)
    if k == 3:
        return np.concatenate([aaa.ravel(), aa.ravel(), a]) / (n * (n - 1) * (n - 2))
    aaaa = np.multiply.outer(aaa, a)
    return np.concatenate([aaaa.ravel(), aaa.ravel(), aa.ravel(), aa.ravel(), a]) / (
        n * (n - 1) * (n - 2) * (n - 3))


_EV_CACHE: dict[tuple, tuple[list[float], list[float]]] = {}
_EV_CACHE_MAX = 50_000


def _positions(n: int, k: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(throw, keep) positions of every way to lay ``k`` of ``n`` cards away, in
    ``itertools.combinations`` order of the throw."""
    got = _POSITIONS.get((n, k))
    if got is None:
        got = [(t, tuple(i for i in range(n) if i not in t))
               for t in itertools.combinations(range(n), k)]
        _POSITIONS[(n, k)] = got
    return got


_POSITIONS: dict[tuple[int, int], list[tuple[tuple[int, ...], tuple[int, ...]]]] = {}


def discard_evs(cards: list[int], unseen: list[int] | None, k: int) -> tuple[
        list[tuple[int, ...]], list[tuple[int, ...]], list[float], list[float]]:
    """Exact expected values of every way to lay ``k`` (1 or 2) of ``cards`` away.

    ``unseen`` are the cards this seat cannot see (the starter and every other crib card come
    from them, uniformly); ``None`` means every card not in ``cards``. Returns ``(keeps,
    throws, hand_ev, crib_ev)``, one entry per option in ``itertools.combinations(cards, k)``
    order of the throw: the kept cards, the thrown cards, the mean show score of the kept 4 over
    the unseen starters and the mean crib score (the other ``4 - k`` crib cards and the starter
    drawn from ``unseen``). The rank-only parts are cached by the ranks involved.
    """
    if unseen is None:
        n = 52 - len(cards)
        rc = [4] * 13
        sc = [13] * 4
        jack_suits = [0, 1, 2, 3]
        for c in cards:
            rc[c >> 2] -= 1
            sc[c & 3] -= 1
            if c >> 2 == 10:
                jack_suits.remove(c & 3)
    else:
        n = len(unseen)
        rc = [0] * 13
        sc = [0] * 4
        jack_suits = []
        for c in unseen:
            rc[c >> 2] += 1
            sc[c & 3] += 1
            if c >> 2 == 10:
                jack_suits.append(c & 3)
    positions = _positions(len(cards), k)
    if k == 2:
        throws = [(cards[a], cards[b]) for (a, b), _ in positions]
    else:
        throws = [(cards[t[0]],) for t, _ in positions]
    keeps = [(cards[a], cards[b], cards[c], cards[d]) for _, (a, b, c, d) in positions]
    draws = 5 - k  # drawn from the unseen: the other crib cards and the starter
    rank_key = (tuple(c >> 2 for c in cards), tuple(rc))
    cached = _EV_CACHE.get(rank_key)
    if cached is None:
        # Fifteens, pairs and runs depend on ranks only: the kept hand through RANK_POINTS and
        # the starter's rank counts, the crib through the drawn ranks' probabilities.
        rank_counts = np.array(rc, dtype=np.float64)
        base = [((((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)) * 13
                for c0, c1, c2, c3 in keeps]
        hand_rank = (RANK_POINTS[np.add.outer(np.array(base), _I)] @ rank_counts).tolist()
        weights = _draw_vector(rank_counts, draws)
        if k == 2:
            rows = [(a >> 2) * 13 + (b >> 2) for a, b in throws]
            crib_rank = (_CRIB2[rows] @ weights).tolist()
        else:
            crib_rank = (_CRIB1[[t[0] >> 2 for t in throws]] @ weights).tolist()
        if len(_EV_CACHE) >= _EV_CACHE_MAX:
            _EV_CACHE.clear()
        cached = _EV_CACHE[rank_key] = (hand_rank, crib_rank)
    hand_rank, crib_rank = cached

    # The kept hand: flush and nobs from the suit counts of the unseen starters.
    hand_ev = []
    for (c0, c1, c2, c3), r in zip(keeps, hand_rank):
        s = c0 & 3
        e = r
        if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
            e += 4 * n + sc[s]  # 4 always, 5 with a starter of the suit
        for c in (c0, c1, c2, c3):
            if c >> 2 == 10:
                e += sc[c & 3]  # nobs: the starter has the Jack's suit
        hand_ev.append(e / n)

    # Nobs from an unseen Jack among the other crib cards, the starter of its suit (the same
    # for every option).
    nobs_other = sum(sc[s] - 1 for s in jack_suits) * (draws - 1) / (n * (n - 1))
    crib_ev = []
    for t, r in zip(throws, crib_rank):
        e = nobs_other
        s = t[0] & 3
        if k == 1 or (t[1] & 3) == s:  # a 5-card flush: every drawn card has the suit
            p = 5.0
            for i in range(draws):
                p *= (sc[s] - i) / (n - i)
            e += p
        for c in t:
            if c >> 2 == 10:
                e += sc[c & 3] / n  # nobs: a thrown Jack, the starter of its suit
        crib_ev.append(r + e)
    return keeps, throws, hand_ev, crib_ev


# ------------------------------------------------------------------------------------------
# Pegging on ranks
# ------------------------------------------------------------------------------------------


def peg_add(ranks: list[int], count: int, r: int) -> int:
    """Points for laying a card of rank ``r`` on a series with ranks ``ranks`` and running
    ``count`` (fifteen/31 2, pairs 2/6/12, runs). The caller makes sure the card fits."""
    c = count + VALUE[r]
    pts = 2 if c == 15 or c == 31 else 0
    i = len(ranks) - 1
    same = 0
    while i >= 0 and ranks[i] == r:
        same += 1
        i -= 1
    if same:
        return pts + (same + 1) * same
    n = len(ranks)
    if n >= 2:
        seen = 1 << r
        lo = hi = r
        best = 0
        for i in range(n - 1, -1, -1):
            q = ranks[i]
            bit = 1 << q
            if seen & bit:
                break
            seen |= bit
            if q < lo:
                lo = q
            elif q > hi:
                hi = q
            length = n - i + 1
            if length >= 3 and hi - lo == length - 1:
                best = length
        pts += best
    return pts


_PEG_CACHE: dict[tuple[int, ...], tuple[int, ...]] = {}
_PEG_CACHE_MAX = 100_000


def peg_all(ranks: tuple[int, ...], count: int) -> tuple[int, ...]:
    """:func:`peg_add` for all 13 ranks at once: points for laying each rank on the series
    ``ranks`` at running ``count`` (0 for ranks that do not fit). Results are cached."""
    got = _PEG_CACHE.get(ranks)
    if got is not None:
        return got
    pts = [0] * 13
    room = 31 - count
    for r in range(13):
        v = VALUE[r]
        if v > room:
            break
        if count + v == 15 or count + v == 31:
            pts[r] = 2
    n = len(ranks)
    if n:
        last = ranks[-1]
        same = 1
        i = n - 2
        while i >= 0 and ranks[i] == last:
            same += 1
            i -= 1
        if VALUE[last] <= room:
            pts[last] += (same + 1) * same
        # Runs: the last j cards (distinct) plus the new rank make j + 1 consecutive ranks.
        if n >= 2:
            run = [0] * 13
            seen = 0
            lo = hi = ranks[-1]
            for j in range(1, n + 1):
                q = ranks[n - j]
                bit = 1 << q
                if seen & bit:
                    break
                seen |= bit
                if q < lo:
                    lo = q
                elif q > hi:
                    hi = q
                if j < 2:
                    continue
                span = hi - lo + 1
                if span == j:
                    if lo > 0:
                        run[lo - 1] = j + 1
                    if hi < 12:
                        run[hi + 1] = j + 1
                elif span == j + 1:
                    for r in range(lo + 1, hi):
                        if not seen >> r & 1:
                            run[r] = j + 1
                            break
            for r in range(13):
                if run[r] and VALUE[r] <= room and r != last:
                    pts[r] += run[r]
    result = tuple(pts)
    if len(_PEG_CACHE) >= _PEG_CACHE_MAX:
        _PEG_CACHE.clear()
    _PEG_CACHE[ranks] = result
    return result
