"""Numba kernels of :mod:`cribenv.vector` for search: the greedy bot compiled, and playouts.

:func:`greedy_card` is :class:`agents.greedy.GreedyAgent`'s choice (its docstring states the
rule; ``tests/test_playouts.py`` proves the two equal on random positions), read from a row of
the batched engine's state. :func:`playout_rows` plays rows to the end of the hand they are in
(or of the game) with every seat greedy, in one call: the playouts of the search agent
(:mod:`agents.search`). Rows and state columns are :mod:`cribenv._vector_kernels`'.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from cribenv import _vector_kernels as K
from cribenv import scoring

jit = K.jit
_ONE = np.int64(1)

#: ``HAND4_POINTS`` and ``TWO_POINTS`` of :mod:`cribenv.scoring` as arrays (kernel arguments)
HAND4 = np.frombuffer(scoring.HAND4_POINTS, np.uint8).astype(np.int64)
TWO = np.frombuffer(scoring.TWO_POINTS, np.uint8).astype(np.int64)


@jit
def seed_rows(mt, st, rows, keys, keylens):
    """Seed the generator of row ``rows[j]`` as ``random.Random(seed)`` (the seed's words
    ``keys[j, :keylens[j]]``), leaving the rest of the row alone."""
    for j in range(rows.shape[0]):
        K.seed_generator(mt, st, rows[j], keys[j], keylens[j])


@jit
def _score4(c0, c1, c2, c3, hand4):
    """:func:`cribenv.scoring.score4`: 4 cards alone (no starter)."""
    pts = hand4[(((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)]
    s = c0 & 3
    if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
        pts += 4
    return pts


@jit
def _greedy_discard(st, cfg, i, p, hand4, two):
    """:func:`agents.greedy.greedy_discard` for seat ``p`` of row ``i``."""
    n = cfg[C_PLAYERS]
    own_set = st[i, K.HAND + p] | st[i, K.DISC + p]
    done = st[i, K.DISC + p]
    cards = np.empty(6, np.int64)
    m = 0
    s = own_set
    while s:
        cards[m] = trailing_zeros(s)
        s &= s - 1
        m += 1
    own = K.side_of(st[i, K.DEALER], n) == K.side_of(p, n)
    k = cfg[K.C_NEED]
    best_value = -1000
    best_hi = -1
    best_lo = -1
    best_a = -1
    best_b = -1
    for a in range(m):
        for b in range(a + 1 if k == 2 else m, m if k == 2 else m + 1):
            throw = (_ONE << cards[a]) | ((_ONE << cards[b]) if k == 2 else 0)
            if (done & throw) != done:
                continue
            keep = np.empty(4, np.int64)
            j = 0
            for x in range(m):
                if x != a and (k == 1 or x != b):
                    keep[j] = cards[x]
                    j += 1
            pts = _score4(keep[0], keep[1], keep[2], keep[3], hand4)
            tp = two[(cards[a] >> 2) * 13 + (cards[b] >> 2)] if k == 2 else 0
            value = pts + tp if own else pts - tp
            hi = cards[b] >> 2 if k == 2 else cards[a] >> 2   # ranks, highest card first
            lo = cards[a] >> 2 if k == 2 else -1
            better = value > best_value
            if value == best_value:
                if hi != best_hi:
                    better = hi > best_hi
                elif lo != best_lo:
                    better = lo > best_lo
                else:   # lower card ids: the first thrown card, then the second
                    better = cards[a] < best_a or (cards[a] == best_a and k == 2
                                                   and cards[b] < best_b)
            if better:
                best_value, best_hi, best_lo = value, hi, lo
                best_a = cards[a]
                best_b = cards[b] if k == 2 else -1
    if (done >> best_a) & 1:
        return best_b
    return best_a


C_PLAYERS = K.C_PLAYERS


@jit
def _greedy_play(st, i, p):
    """:func:`agents.greedy.greedy_play` for seat ``p`` of row ``i``."""
    count = st[i, K.COUNT]
    hand = K._playable(st[i, K.HAND + p], count)
    k = st[i, K.N_PLAYED]
    start = st[i, K.SERIES_START]
    series = np.empty(k - start + 1, np.int64)
    for j in range(k - start):
        series[j] = st[i, K.PLAYED_CARD + start + j]
    best = -1
    best_pts = -1
    while hand:
        c = trailing_zeros(hand)
        hand &= hand - 1
        series[k - start] = c
        pts = K.peg_points_last(series, k - start + 1, count + K.card_value(c))
        # ties: the highest rank, then the lowest id (cards come lowest id first)
        if pts > best_pts or (pts == best_pts and c >> 2 > best >> 2):
            best_pts = pts
            best = c
    return best


@jit
def greedy_card(st, cfg, i, hand4, two):
    """The greedy bot's card for the seat to act in row ``i`` (-1 once the game is over)."""
    p = st[i, K.TO_ACT]
    if p < 0:
        return -1
    if st[i, K.PHASE] == 0:
        return _greedy_discard(st, cfg, i, p, hand4, two)
    return _greedy_play(st, i, p)


@jit
def greedy_cards(st, cfg, hand4, two, out):
    """``out[i]`` = :func:`greedy_card` of every row."""
    for i in range(st.shape[0]):
        out[i] = greedy_card(st, cfg, i, hand4, two)


@jit
def playout_rows(mt, st, cfg, rank_points, hand4, two):
    """Play every row, all seats greedy, until the hand it is in has been shown (the next
    hand is dealt) or the game is over."""
    for i in range(st.shape[0]):
        hand_no = st[i, K.HAND_NO]
        while st[i, K.TO_ACT] >= 0 and st[i, K.HAND_NO] == hand_no:
            K.step_game(mt, st, cfg, rank_points, i, greedy_card(st, cfg, i, hand4, two))
