"""The exact expected show value of every discard, the one home of the discard analysis.

:func:`discard_evs` (the bots' fast path): for every way to lay away ``k`` cards (2 of 6 with
2 players, 1 of 5 with 3 or 4), the exact mean show score of the kept 4 over every unseen
starter, and of the crib over every way the other crib cards and the starter can fall among the
unseen cards, taken as uniformly random. It works on rank counts with
:data:`cribenv.scoring.RANK_POINTS` (fifteens, pairs and runs depend on ranks only; flush and
nobs are exact suit-count terms), so all options of a decision cost a few numpy calls (~0.15 ms;
less when cached). The rank-only parts are cached by the ranks involved (at most 50,000
entries).

:func:`analyse_discards` ranks the 15 discards of a 2-player hand with it:

* ``hand_ev``: the exact mean show score of the kept 4 over the 46 unseen starters (with the
  worst and best of them);
* ``crib_ev``: the exact mean crib score over every pair the opponent might throw and every
  starter from the 44 cards left. **Assumption**: the opponent's throw is a uniformly random
  pair of the 46 unseen cards (C(46, 2) = 1035 pairs, x 44 starters = 45,540 cribs per
  option). Real opponents throw better (or worse) than random, so treat this as a baseline.
* ``expected = hand_ev + crib_ev`` for the dealer (the crib is theirs), ``hand_ev - crib_ev``
  for the pone.

Pegging is ignored. The tests check both against a full enumeration of the starters and cribs.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from cribenv.cards import JACK, Card, parse_distinct, to_str_many
from cribenv.scoring import RANK_POINTS, score_hands

__all__ = ["DiscardOption", "analyse_discards", "discard_evs"]


@dataclass(frozen=True)
class DiscardOption:
    """One way to discard: the kept 4, the thrown 2, and their expected values."""

    keep: tuple[int, int, int, int]
    throw: tuple[int, int]
    hand_ev: float  # mean show score of ``keep`` over the unseen starters
    crib_ev: float  # mean crib score given ``throw`` (random opponent throw, random starter)
    expected: float  # hand_ev + crib_ev (dealer) or hand_ev - crib_ev (pone)
    hand_min: int  # worst show score of ``keep`` over the starters
    hand_max: int  # best show score of ``keep`` over the starters

    def __str__(self) -> str:
        return (
            f"keep {to_str_many(self.keep)}  throw {to_str_many(self.throw)}  "
            f"hand {self.hand_ev:6.3f} ({self.hand_min}-{self.hand_max})  "
            f"crib {self.crib_ev:6.3f}  expected {self.expected:+7.3f}"
        )


def analyse_discards(six_cards: str | Iterable[str | int], is_dealer: bool) -> list[DiscardOption]:
    """All 15 discards of a 2-player 6-card hand (ids or strings), best ``expected`` first.

    Raises ``ValueError`` unless given exactly 6 distinct valid cards.

    >>> best = analyse_discards("5S 4S 2S 8D 6H 8C", is_dealer=True)[0]
    >>> to_str_many(best.throw), round(best.hand_ev, 3), (best.hand_min, best.hand_max)
    ('8D 8C', 8.5, (5, 14))
    """
    if not isinstance(six_cards, str):
        six_cards = [int(c) if isinstance(c, np.integer) else c for c in six_cards]
    cards: list[Card] = parse_distinct(six_cards, count=6)
    keeps, throws, hand_ev, crib_ev = discard_evs(cards, None, 2)
    known = set(cards)
    unseen = np.array([c for c in range(52) if c not in known], dtype=np.int32)
    shows = score_hands(np.repeat(np.array(keeps, dtype=np.int32), unseen.size, axis=0),
                        np.tile(unseen, len(keeps)), validate=False).reshape(len(keeps), -1)
    options = [
        DiscardOption(
            keep=keep,  # type: ignore[arg-type]
            throw=throw,  # type: ignore[arg-type]
            hand_ev=h,
            crib_ev=c,
            expected=h + c if is_dealer else h - c,
            hand_min=int(row.min()),
            hand_max=int(row.max()),
        )
        for keep, throw, h, c, row in zip(keeps, throws, hand_ev, crib_ev, shows)
    ]
    options.sort(key=lambda o: (-o.expected, -o.hand_ev, o.throw))
    return options


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
            if c >> 2 == JACK:
                jack_suits.remove(c & 3)
    else:
        n = len(unseen)
        rc = [0] * 13
        sc = [0] * 4
        jack_suits = []
        for c in unseen:
            rc[c >> 2] += 1
            sc[c & 3] += 1
            if c >> 2 == JACK:
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
            if c >> 2 == JACK:
                e += sc[c & 3]  # nobs: the starter has the Jack's suit
        hand_ev.append(e / n)

    # Nobs from an unseen Jack among the other crib cards, the starter of its suit (the same
    # for every option).
    nobs_other = sum(sc[s] - 1 for s in jack_suits) * (draws - 1) / (n * (n - 1))
    # Every crib mean is a whole number of points over the equally likely draws (the other
    # crib cards as a set, then the starter): recover that fraction, so that equal means are
    # equal floats whatever order BLAS summed in (the expert's ranking and its ties, on any
    # machine, depend on it).
    outcomes = math.comb(n, draws - 1) * (n - draws + 1)
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
            if c >> 2 == JACK:
                e += sc[c & 3] / n  # nobs: a thrown Jack, the starter of its suit
        crib_ev.append(round((r + e) * outcomes) / outcomes)
    return keeps, throws, hand_ev, crib_ev


@functools.cache
def average_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(hand4, crib2)``: the fifteens, pairs and runs a throw is worth on average when
    nothing else is known, by ranks alone. ``hand4[((r0*13+r1)*13+r2)*13+r3]`` is the mean
    show of 4 kept ranks over a starter from the other 48 cards; ``crib2[r0*13+r1]`` the mean
    crib of 2 thrown ranks with 3 cards from the other 50 (a model of a thrower's view, for
    the search agent's ``discard_likelihood``, ``agents/search/playouts.py``).

    >>> hand4, crib2 = average_tables()
    >>> round(float(hand4[((4 * 13 + 4) * 13 + 4) * 13 + 4]), 2)   # four 5s: 20 + a starter
    22.67
    >>> float(crib2[4 * 13 + 4]) > float(crib2[12 * 13 + 0])       # 5-5 beats K-A
    True
    """
    ranks = np.indices((13,) * 4).reshape(4, -1).T
    counts = np.zeros((len(ranks), 13))
    for j in range(4):
        counts[np.arange(len(ranks)), ranks[:, j]] += 1
    starters = (4 - counts) / 48.0
    rp = RANK_POINTS.reshape(-1, 13).astype(np.float64)
    hand4 = (rp * starters).sum(1)
    crib2 = np.empty(169)
    for r0 in range(13):
        for r1 in range(13):
            a = np.full(13, 4.0)
            a[r0] -= 1
            a[r1] -= 1
            crib2[r0 * 13 + r1] = _CRIB2[r0 * 13 + r1] @ _draw_vector(a, 3)
    return hand4, crib2
