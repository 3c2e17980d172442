"""The search's compiled kernels: the greedy bot compiled, the expert's pegging term, playouts
and the likelihood of the plays and throws seen, on rows of the batched engine.

:func:`greedy_card` is :class:`agents.greedy.GreedyAgent`'s choice (its docstring states the
rule; ``tests/test_positions.py`` proves the two equal on random positions), read from a row of
the batched engine's state. :func:`_lite_values` is the expert's main pegging term, ``now -
E[reply]`` (``tests/test_positions.py`` checks it against a plain Python version).
:func:`playout_rows` plays rows to the end of the hand they are in (or of the game), in one
call: the playouts of the search agent (:mod:`agents.search`); :func:`random_playout_rows`
plays them to the end of the game at random (the rollouts of :mod:`agents.openspiel`);
:func:`play_log_likelihood` and :func:`discard_log_likelihood` weigh the search's deals.
Rows, their columns and the function that steps one are the engine's public interface,
:mod:`cribenv.vector_kernels`; these kernels are compiled and cached (``cache=True``) as the
engine's are.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from cribenv import scoring
from cribenv import vector_kernels as K

jit = K.jit
_ONE = np.int64(1)

#: ``HAND4_POINTS`` and ``TWO_POINTS`` of :mod:`cribenv.scoring` as arrays (kernel arguments)
HAND4 = np.frombuffer(scoring.HAND4_POINTS, np.uint8).astype(np.int64)
TWO = np.frombuffer(scoring.TWO_POINTS, np.uint8).astype(np.int64)
#: the same as float64: the greedy throw model of :func:`discard_log_likelihood`
HAND4_F, TWO_F = HAND4.astype(np.float64), TWO.astype(np.float64)


@jit
def _score4(c0, c1, c2, c3, hand4):
    """:func:`cribenv.scoring.score4`: 4 cards alone (no starter)."""
    pts = hand4[(((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)]
    s = c0 & 3
    if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
        pts += 4
    return pts


@jit
def _card_list(cards, out):
    """Write the card ids of the set ``cards`` into ``out``, lowest first; return how many."""
    m = 0
    while cards:
        out[m] = trailing_zeros(cards)
        cards &= cards - 1
        m += 1
    return m


@jit
def _greedy_discard(st, cfg, i, p, hand4, two):
    """:func:`agents.greedy.greedy_discard` for seat ``p`` of row ``i``."""
    n = cfg[K.C_PLAYERS]
    own_set = st[i, K.HAND + p] | st[i, K.DISC + p]
    done = st[i, K.DISC + p]
    cards = np.empty(6, np.int64)
    m = _card_list(own_set, cards)
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


@jit
def _greedy_play(st, i, p):
    """:func:`agents.greedy.greedy_play` for seat ``p`` of row ``i``."""
    count = st[i, K.COUNT]
    hand = K.playable(st[i, K.HAND + p], count)
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
def _none_drawn(n, m, h):
    """The chance that ``h`` cards drawn from ``n`` hold none of ``m`` marked ones."""
    if m <= 0:
        return 1.0
    if h > n - m:
        return 0.0
    q = 1.0
    for j in range(h):
        q *= (n - m - j) / (n - j)
    return q


@jit
def _lite_values(st, cfg, i, p, values):
    """``values[c]`` for each card ``c`` seat ``p`` can lay in row ``i`` (the others -inf):
    the pegging points it makes less the expected best reply of the next seat, whose cards are
    a random set of those ``p`` has not seen (the expert's ``now - E[reply]``,
    :mod:`agents.expert`); 1000 for a card that pegs out. It reads only what ``p`` may know."""
    n = cfg[K.C_PLAYERS]
    count = st[i, K.COUNT]
    own = st[i, K.HAND + p]
    hand = K.playable(own, count)
    side = K.side_of(p, n)
    need = cfg[K.C_TARGET] - st[i, K.SCORES + side]
    k = st[i, K.N_PLAYED]
    start = st[i, K.SERIES_START]
    seen = own | st[i, K.DISC + p] | (_ONE << st[i, K.STARTER])
    for j in range(k):
        seen |= _ONE << st[i, K.PLAYED_CARD + j]
    unseen_rank = np.zeros(13, np.int64)
    n_unseen = 0
    for c in range(52):
        values[c] = -np.inf
        if not (seen >> c) & 1:
            unseen_rank[c >> 2] += 1
            n_unseen += 1
    q = (p + 1) % n
    held = st[i, K.HELD + q]
    opponent = K.side_of(q, n) != side
    series = np.empty(k - start + 2, np.int64)
    for j in range(k - start):
        series[j] = st[i, K.PLAYED_CARD + start + j]
    pts_r = np.zeros(13, np.int64)
    while hand:
        c = trailing_zeros(hand)
        hand &= hand - 1
        series[k - start] = c
        after = count + K.card_value(c)
        now = K.peg_points_last(series, k - start + 1, after)
        if now >= need:
            values[c] = 1000.0
            continue
        expected = 0.0
        if held > 0 and after < 31:
            top = 0
            for r in range(13):
                pts_r[r] = -1
                if unseen_rank[r] and K.card_value(4 * r) <= 31 - after:
                    series[k - start + 1] = 4 * r + ((c & 3) + 1) % 4   # a suit: ranks only
                    pts_r[r] = K.peg_points_last(series, k - start + 2,
                                                 after + K.card_value(4 * r))
                    if pts_r[r] > top:
                        top = pts_r[r]
            for t in range(1, top + 1):
                marked = 0
                for r in range(13):
                    if pts_r[r] >= t:
                        marked += unseen_rank[r]
                expected += 1.0 - _none_drawn(n_unseen, marked, held)
        values[c] = now - expected if opponent else now + expected


@jit
def _lite_play(st, cfg, i, p):
    """The card of :func:`_lite_values`' highest value (ties: the higher rank, then the lower
    id)."""
    values = np.empty(52, np.float64)
    _lite_values(st, cfg, i, p, values)
    best = -1
    for c in range(52):
        if values[c] > -np.inf:
            if best < 0 or values[c] > values[best] + 1e-9 or (
                    abs(values[c] - values[best]) <= 1e-9 and c >> 2 > best >> 2):
                best = c
    return best


@jit
def play_log_likelihood(st, cfg, rank_points, seat, temperature, floor, out):
    """``out[i]``: the log-chance, in row ``i``'s deal, of every card the other seats laid in
    this hand's play so far, each seat choosing by the softmax of :func:`_lite_values` at
    ``temperature`` mixed with ``floor`` of a uniform choice. The play is replayed from its
    start with the cards each seat held then (its hand now and the cards it laid since)."""
    n = cfg[K.C_PLAYERS]
    buf = np.empty((1, st.shape[1]), np.int64)
    mt = np.zeros((1, 624), np.uint32)
    values = np.empty(52, np.float64)
    for i in range(st.shape[0]):
        k_all = st[i, K.N_PLAYED]
        buf[0, :] = st[i, :]
        for q in range(n):
            buf[0, K.GO + q] = 0
            buf[0, K.SCORES + q % 3] = 0
        for j in range(k_all):
            c = st[i, K.PLAYED_CARD + j]
            q = st[i, K.PLAYED_BY + j]
            buf[0, K.HAND + q] |= _ONE << c
            buf[0, K.HELD + q] += 1
        buf[0, K.COUNT] = 0
        buf[0, K.SERIES_START] = 0
        buf[0, K.N_PLAYED] = 0
        buf[0, K.LAST] = -1
        total = 0.0
        for j in range(k_all):
            c = st[i, K.PLAYED_CARD + j]
            q = st[i, K.PLAYED_BY + j]
            if q != seat:
                buf[0, K.TO_ACT] = q
                _lite_values(buf, cfg, 0, q, values)
                top = -np.inf
                legal = 0
                for x in range(52):
                    if values[x] > -np.inf:
                        legal += 1
                        if values[x] > top:
                            top = values[x]
                z = 0.0
                for x in range(52):
                    if values[x] > -np.inf:
                        z += np.exp((values[x] - top) / temperature)
                pc = np.exp((values[c] - top) / temperature) / z if values[c] > -np.inf \
                    else 0.0
                total += np.log((1.0 - floor) * pc + floor / max(legal, 1))
            buf[0, K.TO_ACT] = q
            K.step_game(mt, buf, cfg, rank_points, 0, c)
        out[i] = total


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
    """Play every row until the hand it is in has been shown (the next hand is dealt) or the
    game is over: every seat discards as :func:`_greedy_discard` and plays
    :func:`_lite_play`."""
    for i in range(st.shape[0]):
        hand_no = st[i, K.HAND_NO]
        while st[i, K.TO_ACT] >= 0 and st[i, K.HAND_NO] == hand_no:
            p = st[i, K.TO_ACT]
            if st[i, K.PHASE] == 0:
                card = _greedy_discard(st, cfg, i, p, hand4, two)
            else:
                card = _lite_play(st, cfg, i, p)
            K.step_game(mt, st, cfg, rank_points, i, card)


@jit
def random_playout_rows(mt, st, cfg, rank_points):
    """Play every row to the end of its game, every seat laying a uniformly random legal card:
    the ``k``-th lowest of them, ``k`` drawn by the row's generator (``randrange``)."""
    for i in range(st.shape[0]):
        while st[i, K.TO_ACT] >= 0:
            p = st[i, K.TO_ACT]
            hand = st[i, K.HAND + p]
            if st[i, K.PHASE] == 1:
                hand = K.playable(hand, st[i, K.COUNT])
            n = 0
            rest = hand
            while rest:
                rest &= rest - 1
                n += 1
            for _ in range(K.randbelow(mt, st, i, n)):
                hand &= hand - 1
            K.step_game(mt, st, cfg, rank_points, i, trailing_zeros(hand))


@jit
def discard_log_likelihood(st, cfg, seat, temperature, floor, hand_table, crib_table, out):
    """``out[i]``: the log-chance, in row ``i``'s deal, of the throws the other seats made,
    each seat choosing among the ways to lay away its dealt cards by the softmax (at
    ``temperature`` points) of the greedy bot's value (the kept cards' points alone, plus the
    thrown cards' points when the crib is its side's, minus them otherwise), mixed with
    ``floor`` of a uniform choice. 2 players (one throw of two cards a seat)."""
    n = cfg[K.C_PLAYERS]
    need = cfg[K.C_NEED]
    cards = np.empty(6, np.int64)
    values = np.empty(15, np.float64)
    for i in range(st.shape[0]):
        total = 0.0
        for q in range(n):
            if q == seat or st[i, K.NDISC + q] < need or need != 2:
                continue
            thrown = st[i, K.DISC + q]
            dealt = thrown | (st[i, K.KEPT + q] if st[i, K.PHASE] == 1 else st[i, K.HAND + q])
            m = _card_list(dealt, cards)
            own = K.side_of(st[i, K.DEALER], n) == K.side_of(q, n)
            t = 0
            actual = -1
            for a in range(m):
                for b in range(a + 1, m):
                    keep = np.empty(4, np.int64)
                    j = 0
                    for x in range(m):
                        if x != a and x != b:
                            keep[j] = cards[x]
                            j += 1
                    k0, k1, k2, k3 = keep[0], keep[1], keep[2], keep[3]
                    pts = hand_table[(((k0 >> 2) * 13 + (k1 >> 2)) * 13 + (k2 >> 2)) * 13
                                     + (k3 >> 2)]
                    if (k0 & 3) == (k1 & 3) == (k2 & 3) == (k3 & 3):
                        pts += 4.0
                    tp = crib_table[(cards[a] >> 2) * 13 + (cards[b] >> 2)]
                    values[t] = (pts + tp if own else pts - tp) / temperature
                    if ((thrown >> cards[a]) & 1) and ((thrown >> cards[b]) & 1):
                        actual = t
                    t += 1
            top = values[:t].max()
            z = 0.0
            for x in range(t):
                z += np.exp(values[x] - top)
            p = np.exp(values[actual] - top) / z
            total += np.log((1.0 - floor) * p + floor / t)
        out[i] = total
