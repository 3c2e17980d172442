"""Numba kernels of :func:`agents.features.legal_features`: the ``expert-prior`` card features of
a batch of observation rows, read from the rows themselves (no :class:`~cribenv.game.PlayerView`,
no Python per row).

:func:`legal_rows` repeats, call for call, what the Python path
(:func:`agents.features.legal_features_reference`) does on each row: :func:`_read_row` is
:func:`cribenv.observation.decode` (the fields the features read), :func:`_discard_row` is
:meth:`agents.expert.ExpertAgent.rank_throws` with :func:`cribenv.discard.discard_evs` and
:func:`agents.features.best_throws`, :func:`_play_row` is
:meth:`~agents.expert.ExpertAgent.play_values` (:func:`_reply_value`, :func:`_solo`,
:func:`_p_none` are the expert's helpers of the same names), and both write the feature rows
of :func:`agents.features.card_features`. ``tests/test_feature_kernels.py`` proves the arrays
equal on rows of real games (2, 3 and 4 players, 121 and 61 points, the expert's endgame).

Everything that is a number of the expert (its knobs, the learned pegging values of
:mod:`agents.peg_values`) or of the feature layout comes in as an argument
(:func:`kernel_args`), read from the ``ExpertAgent(peg_weight=1.0)`` of
:mod:`agents.features`, so the numbers keep one home; the observation offsets are
:mod:`cribenv._vector_kernels`' ``O_*`` (``tests/test_vector.py`` checks them against
:data:`cribenv.observation.OFFSETS`).

The numbers are the Python path's, computed the same way (the same float operations in the
same order: the kept hand's mean, the flush and nobs terms, the endgame probability, every term
of the play), with two differences:

* the crib's fifteens, pairs and runs (``crib_rank`` of :func:`~cribenv.discard.discard_evs`):
  numpy dots a row of its Moebius tables with the rank-count products divided by the number of
  ordered draws (BLAS sums in its own order); here the same sum is taken exactly, in whole
  numbers, over the sorted rank multisets of the drawn cards (each with its number of
  orderings and the falling factorials of the rank counts), then divided once: a few ulps apart, far
  below the float32 of the features (the pegging values are looked up in
  :meth:`agents.peg_values.PegValues.table`, the very floats the expert adds);
* ties between throws. Two throws can be worth exactly the same (a Jack kept, or thrown to the
  seat's own crib: its nobs counts either way), and then the Python ranking is decided by
  rounding noise: BLAS gives identical rows of the crib table results a few ulps apart,
  depending on their place in the matrix. Here values closer than :data:`TIE` are equal and
  the expert's documented tie-break decides: the higher kept-hand mean, then the lower cards
  thrown. Such ties are rare (one row in 133,000 of random play went the other way).

Every function is compiled on first use and cached on disk (``cache=True``); importing this
module imports numba but compiles nothing.
"""

from __future__ import annotations

import itertools
from typing import Any

import numba
import numpy as np

from cribenv import _vector_kernels as K
from cribenv import scoring
from cribenv.cards import JACK, RANK_VALUES

jit = K.jit
_peg_points_last = K.peg_points_last
_show_points = K.show_points

# indices into the knob vector (:func:`knob_vector`)
KN_COUNTER = 0
KN_DEFEND = 1
KN_PARTNER = 2
KN_NEED = 3
KN_END_W = 4
KN_ALLOW = 5
KN_CRIB3 = 6
KN_REPLY = 7
KN_LOW_KEEP = 8
KN_PEG_W = 9
NKNOBS = 10

# indices into the feature-layout vector (agents.features' column offsets)
L_SCALARS = 0
L_RANK = 1
L_KEPT = 2
L_OTHER = 3
L_BIAS = 4

#: values of two throws closer than this are a tie: equal values come out of float sums ~1e-14
#: apart, distinct ones differ by 4e-9 at the least (fractions over the deals counted, 46 x 45 x
#: 44 or 47 x 46 x 45 x 44, plus pegging values of 5 decimals)
TIE = 1e-9

# errors reported by legal_rows (with the row)
E_NOT_HELD = 1      # a legal card the row's hand does not hold
E_BAD_ROW = 2       # not an observation vector (no number of players, phase or count)


def knob_vector(knobs: Any) -> np.ndarray:
    """The expert's knobs (an :class:`agents.expert.ExpertKnobs`) the kernels read, as float64
    (``KN_*`` indices)."""
    out = np.zeros(NKNOBS, np.float64)
    out[KN_COUNTER] = knobs.counter_weight
    out[KN_DEFEND] = knobs.defend_weight
    out[KN_PARTNER] = knobs.partner_weight
    out[KN_NEED] = knobs.endgame_need
    out[KN_END_W] = knobs.endgame_weight
    out[KN_ALLOW] = knobs.peg_allowance
    out[KN_CRIB3] = knobs.crib_weight_3p
    out[KN_REPLY] = knobs.reply_weight_multi
    out[KN_LOW_KEEP] = knobs.low_keep_weight
    out[KN_PEG_W] = knobs.peg_weight
    return out


def _draw_tables(draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The crib's rank tables for ``draws`` (3 or 4) cards drawn to the thrown ones, over every
    sorted multiset ``m`` of the drawn ranks: ``(ranks (M, draws), earlier (M, draws),
    orderings (M,), points (13 ** (5 - draws), M))``. ``earlier[m, t]`` counts the ranks before
    position ``t`` equal to its own (so the ordered draws of ``m`` from rank counts ``a`` are
    ``orderings[m] * prod(a[ranks[m, t]] - earlier[m, t])``); ``points[row, m]`` are the
    fifteens, pairs and runs of the thrown ranks (``row``: their rank key) with ``m``. Whole
    numbers as float64, so the kernels' dot products are exact in any order."""
    combos = list(itertools.combinations_with_replacement(range(13), draws))
    ranks = np.array(combos, np.int64)
    earlier = np.array([[c[:t].count(c[t]) for t in range(draws)] for c in combos], np.int64)
    orderings = np.array([len(set(itertools.permutations(c))) for c in combos], np.float64)
    key = np.zeros(len(combos), np.int64)
    for t in range(draws):
        key = key * 13 + ranks[:, t]
    thrown = 13 ** (5 - draws)
    points = np.asarray(scoring.RANK_POINTS).reshape(thrown, 13**draws)[:, key]
    return ranks, earlier, orderings, np.ascontiguousarray(points, np.float64)


def kernel_args(knobs: Any, peg_table: np.ndarray | None, feature_columns: tuple[int, ...],
                prior_clip: float) -> tuple:
    """The arguments of :func:`legal_rows` after the rows and the outputs (and before
    ``err``): the knobs, the pegging-value table (zeros without one), the feature layout and
    the prior's clip, and the scoring tables."""
    if peg_table is None:
        peg_table = np.zeros((2, 13**4), np.float64)
    return (knob_vector(knobs), np.ascontiguousarray(peg_table, np.float64),
            np.array(feature_columns, np.int64), float(prior_clip),
            np.asarray(scoring.RANK_POINTS), np.array(RANK_VALUES, np.int64),
            np.array(scoring.PEG_COUNT_POINTS, np.int64),
            np.array(scoring.PEG_PAIR_POINTS, np.int64), *_draw_tables(3), *_draw_tables(4))


@numba.njit(cache=True, nogil=True, fastmath=True)
def _dot(a, b):
    """``a @ b`` for whole numbers held as float64 (every partial sum exact below 2**53, so
    the order fastmath sums them in changes nothing)."""
    total = 0.0
    for j in range(a.shape[0]):
        total += a[j] * b[j]
    return total


# ------------------------------------------------------------------------------------------
# The expert's play (agents.expert)
# ------------------------------------------------------------------------------------------

@jit
def _p_none(n, m, h):
    """``agents.expert._p_none``: probability that ``h`` cards drawn from ``n`` include none
    of ``m`` marked ones."""
    if m <= 0:
        return 1.0
    p = 1.0
    for i in range(h):
        if n - i <= 0:
            return 0.0
        p *= (n - m - i) / (n - i)
        if p <= 0.0:
            return 0.0
    return p


@jit
def _peg_all(ser, ns, count, values, out):
    """``cribenv.scoring.peg_all``: ``out[r]`` = points of laying rank ``r`` on the series
    ``ser[:ns]`` (cards ``rank << 2``) at ``count`` (0 where it does not fit); writes
    ``ser[ns]``."""
    for r in range(13):
        out[r] = 0
    for r in range(13):
        c = count + values[r]
        if c > 31:
            break
        ser[ns] = r << 2
        out[r] = _peg_points_last(ser, ns + 1, c)


@jit
def _solo(ser, ns, count, rest, nrest, values):
    """``agents.expert._solo``: points of laying the ranks ``rest[:nrest]`` alone on the series
    ``ser[:ns]`` in the best order, then the go / last card (none after a 31). ``rest`` is
    reordered and restored; ``ser[ns:]`` is scratch."""
    best = -1
    for i in range(nrest):
        r = rest[i]
        v = values[r]
        if count + v > 31:
            continue
        ser[ns] = r << 2
        pts = _peg_points_last(ser, ns + 1, count + v)
        if count + v == 31:
            total = pts
        else:
            last = nrest - 1
            rest[i], rest[last] = rest[last], rest[i]
            total = pts + _solo(ser, ns + 1, count + v, rest, last, values)
            rest[i], rest[last] = rest[last], rest[i]
        if total > best:
            best = total
    return 1 if best < 0 else best


@jit
def _reply_value(ser, ns, k1, rest, nrest, nr, n_unseen, rep_held, rep_partner, rep_need,
                 nrep, two, knobs, values, peg_count, peg_pair, reply, by_points):
    """``ExpertAgent._reply_value`` after laying a card that leaves the series ``ser[:ns]``
    at count ``k1``: minus the expected replies, plus the counter and go terms, minus the
    risk. The repliers are ``rep_*[:nrep]`` in turn order."""
    room = 31 - k1
    for q in range(by_points.shape[0]):
        by_points[q] = 0
    playable = 0
    counter = 0.0
    cw = knobs[KN_COUNTER] if two else 0.0
    _peg_all(ser, ns, k1, values, reply)
    last = ser[ns - 1] >> 2
    tail = 1
    while tail < ns and (ser[ns - 1 - tail] >> 2) == last:
        tail += 1
    for x in range(13):
        cnt = nr[x]
        if cnt <= 0:
            continue
        vx = values[x]
        if vx > room:
            break
        playable += cnt
        q = reply[x]
        if q:
            by_points[q] += cnt
        if cw != 0.0 and nrest > 0 and k1 + vx < 31:
            k2 = k1 + vx
            same = tail + 1 if x == last else 1
            best = 0
            for j in range(nrest):
                m = rest[j]
                k3 = k2 + values[m]
                if k3 > 31:
                    continue
                p = peg_count[k3]
                if m == x:
                    p += peg_pair[same + 1]
                if p > best:
                    best = p
            counter += cnt * best
    value = 0.0
    reach = 1.0
    for t in range(nrep):
        held = rep_held[t]
        e_reply = 0.0
        p_win = 0.0
        at_least = 0
        for q in range(by_points.shape[0] - 1, 0, -1):
            if by_points[q] == 0:
                continue
            at_least += by_points[q]
            p_ge = 1.0 - _p_none(n_unseen, at_least, held)
            nxt = 0
            for q2 in range(q - 1, 0, -1):
                if by_points[q2] != 0:
                    nxt = q2
                    break
            e_reply += p_ge * (q - nxt)
            if q >= rep_need[t]:
                p_win = p_ge
        if rep_partner[t]:
            value += reach * knobs[KN_PARTNER] * e_reply
        else:
            value -= reach * ((1.0 if two else knobs[KN_REPLY]) * e_reply
                              + knobs[KN_DEFEND] * p_win)
        p_none = _p_none(n_unseen, playable, held)
        if cw != 0.0 and playable:
            value += cw * reach * (1.0 - p_none) * counter / playable
        reach *= p_none
        if reach <= 0.0:
            break
    if reach > 0.0:
        value += reach * _solo(ser, ns, k1, rest, nrest, values)
    return value


# ------------------------------------------------------------------------------------------
# One row
# ------------------------------------------------------------------------------------------

@jit
def _first(o, start, size):
    """The index of the first nonzero entry of ``o[start:start + size]`` (-1: none)."""
    for j in range(size):
        if o[start + j] != 0.0:
            return j
    return -1


@jit
def _read_row(o, hand, disc, laid, said_go, held, scores, info):
    """:func:`cribenv.observation.decode` of the observation ``o``, the fields the features
    read (seat 0 observes; seat k is the player k places to its left): ``hand`` and ``disc``
    (sorted card ids), ``laid`` (the cards laid this hand in the order laid; the current series
    is its tail), ``said_go``, ``held``, ``scores`` (per side), and ``info`` = ``[players,
    target, phase, dealer, count, starter (-1: none), hand size, discards, cards laid, series
    length]``. Returns -1 for a vector that is not an observation, else 0."""
    n = _first(o, K.O_NPLAY, 3)
    phase = _first(o, K.O_PHASE, 3)
    count = _first(o, K.O_COUNT, 32)
    dealer = _first(o, K.O_DEALER, 4)
    if n < 0 or phase < 0 or count < 0 or dealer < 0:
        return -1
    n += 2
    target = 61 if o[K.O_SHORT] != 0.0 else 121
    nh = 0
    nd = 0
    for c in range(52):
        if o[K.O_HAND + c] != 0.0:
            hand[nh] = c
            nh += 1
        if o[K.O_DISC + c] != 0.0:
            disc[nd] = c
            nd += 1
    starter = _first(o, K.O_STARTER, 52)
    # the cards laid, sorted as decode sorts them: by (order, relative seat, card)
    nl = 0
    order = np.empty(16, np.float64)
    seat = np.empty(16, np.int64)
    for k in range(4):
        for c in range(52):
            if o[K.O_PLAYED + 52 * k + c] != 0.0 and nl < 16:
                oc = float(o[K.O_ORDER + c])
                j = nl
                while j > 0 and (order[j - 1] > oc or (order[j - 1] == oc and (
                        seat[j - 1] > k or (seat[j - 1] == k and laid[j - 1] > c)))):
                    order[j] = order[j - 1]
                    seat[j] = seat[j - 1]
                    laid[j] = laid[j - 1]
                    j -= 1
                order[j] = oc
                seat[j] = k
                laid[j] = c
                nl += 1
    start = nl     # decode: the first card laid that is in the series starts it
    for j in range(nl):
        if o[K.O_SERIES + laid[j]] != 0.0:
            start = j
            break
    for k in range(4):
        said_go[k] = False
        held[k] = 0
    for k in range(n):
        said_go[k] = o[K.O_GO + k] != 0.0
        held[k] = np.int64(np.rint(float(o[K.O_HELD + k]) * 6))
    sides = 2 if n == 2 or n == 4 else 3
    for k in range(3):
        scores[k] = 0
    for k in range(sides):
        scores[k] = np.int64(np.rint(float(o[K.O_SCORES + k]) * target))
    info[0] = n
    info[1] = target
    info[2] = phase
    info[3] = dealer
    info[4] = count
    info[5] = starter
    info[6] = nh
    info[7] = nd
    info[8] = nl
    info[9] = nl - start
    return 0


@jit
def _discard_row(i, hand, nh, disc, nd, n, crib_own, dealer_is_me, need, legal, nl, knobs,
                 peg_table, cols, rank_points, values, r3, e3, o3, c3, r4, e4, o4, c4, prior,
                 feats):
    """:func:`agents.features.best_throws` (:meth:`ExpertAgent.rank_throws` over the throws
    that hold the cards already laid away) and the discard's feature rows of row ``i``.
    Returns ``E_NOT_HELD`` for a legal card no throw lays away, ``E_BAD_ROW`` for a seat
    holding other than 5 or 6 cards in all, else 0."""
    n_own = nh + nd
    if n_own > 6 or n_own < 5:
        return E_BAD_ROW
    own = np.empty(6, np.int64)          # sorted(hand + discards)
    a = 0
    b = 0
    for j in range(n_own):
        if b >= nd or (a < nh and hand[a] < disc[b]):
            own[j] = hand[a]
            a += 1
        else:
            own[j] = disc[b]
            b += 1
    k = 2 if n == 2 else 1
    draws = 5 - k
    # discard_evs(own, None, k): the unseen are the cards not held
    n_un = 52 - n_own
    rc = np.full(13, 4, np.int64)
    sc = np.full(4, 13, np.int64)
    jack = np.ones(4, np.bool_)
    for j in range(n_own):
        c = own[j]
        rc[c >> 2] -= 1
        sc[c & 3] -= 1
        if c >> 2 == JACK:
            jack[c & 3] = False
    # ordered draws of each sorted rank multiset of the drawn cards (falling factorials)
    if draws == 3:
        mr, me, mo, crib = r3, e3, o3, c3
    else:
        mr, me, mo, crib = r4, e4, o4, c4
    weights = np.empty(mr.shape[0], np.float64)
    for j in range(mr.shape[0]):
        w = mo[j]
        for t in range(draws):
            w *= rc[mr[j, t]] - me[j, t]
        weights[j] = w
    if draws == 3:
        denom = float(n_un * (n_un - 1) * (n_un - 2))
    else:
        denom = float(n_un * (n_un - 1) * (n_un - 2) * (n_un - 3))
    jack_other = 0
    for s in range(4):
        if jack[s]:
            jack_other += sc[s] - 1
    nobs_other = jack_other * (draws - 1) / (n_un * (n_un - 1))
    if crib_own:
        sign = 1.0
    elif n == 3:
        sign = -knobs[KN_CRIB3]
    else:
        sign = -1.0
    endgame = need <= knobs[KN_NEED] and not crib_own
    short = need - knobs[KN_ALLOW]
    unseen = np.empty(52, np.int64)
    nu = 0
    if endgame:
        held_ = np.zeros(52, np.bool_)
        for j in range(n_own):
            held_[own[j]] = True
        for c in range(52):
            if not held_[c]:
                unseen[nu] = c
                nu += 1

    # every throw (positions into ``own``, itertools.combinations order) that holds the
    # cards already laid away
    tv = np.empty(15, np.float64)          # value
    th = np.empty(15, np.float64)          # hand_ev
    tt = np.full((15, 2), -1, np.int64)    # thrown cards (-1: none)
    tk = np.empty((15, 4), np.int64)       # kept cards
    pos = np.full((15, 2), -1, np.int64)
    npos = 0
    for p0 in range(n_own):
        if k == 1:
            pos[npos, 0] = p0
            npos += 1
        else:
            for p1 in range(p0 + 1, n_own):
                pos[npos, 0] = p0
                pos[npos, 1] = p1
                npos += 1
    nt = 0
    for q in range(npos):
        p0 = pos[q, 0]
        p1 = pos[q, 1]
        t0 = own[p0]
        t1 = own[p1] if p1 >= 0 else -1
        ok = True
        for j in range(nd):
            if disc[j] != t0 and disc[j] != t1:
                ok = False
        if not ok:
            continue
        m = 0
        for j in range(n_own):
            if j != p0 and j != p1:
                tk[nt, m] = own[j]
                m += 1
        c0, c1, c2, c3 = tk[nt, 0], tk[nt, 1], tk[nt, 2], tk[nt, 3]
        kr = (((c0 >> 2) * 13 + (c1 >> 2)) * 13 + (c2 >> 2)) * 13 + (c3 >> 2)
        # the kept hand: fifteens, pairs, runs over the starters' ranks, flush and nobs
        e = 0
        for x in range(13):
            e += rank_points[kr * 13 + x] * rc[x]
        s = c0 & 3
        if (c1 & 3) == s and (c2 & 3) == s and (c3 & 3) == s:
            e += 4 * n_un + sc[s]
        for c in (c0, c1, c2, c3):
            if c >> 2 == JACK:
                e += sc[c & 3]
        hand_ev = e / n_un
        # the crib: the thrown ranks with every draw of the other cards, exactly
        thrown = (t0 >> 2) * 13 + (t1 >> 2) if k == 2 else t0 >> 2
        crib_rank = _dot(crib[thrown], weights) / denom
        ce = nobs_other
        s = t0 & 3
        if k == 1 or (t1 & 3) == s:
            pf = 5.0
            for d in range(draws):
                pf *= (sc[s] - d) / (n_un - d)
            ce += pf
        if t0 >> 2 == JACK:
            ce += sc[t0 & 3] / n_un
        if k == 2 and t1 >> 2 == JACK:
            ce += sc[t1 & 3] / n_un
        crib_ev = crib_rank + ce
        value = hand_ev + sign * crib_ev
        if n == 2 and knobs[KN_PEG_W] != 0.0:
            value = value + knobs[KN_PEG_W] * peg_table[1 if dealer_is_me else 0, kr]
        if endgame:
            hits = 0
            for j in range(nu):
                if _show_points(c0, c1, c2, c3, unseen[j], False, rank_points) >= short:
                    hits += 1
            value = value + knobs[KN_END_W] * (hits / nu)
        tv[nt] = value
        th[nt] = hand_ev
        tt[nt, 0] = t0
        tt[nt, 1] = t1
        nt += 1

    # each legal card: the best throw that lays it away (rank_throws' order: the higher
    # value, then the higher hand_ev, then the lower thrown cards; values within TIE are
    # equal, see the module docstring)
    for j in range(nl):
        c = legal[j]
        best = -1
        for t in range(nt):
            if tt[t, 0] != c and tt[t, 1] != c:
                continue
            if best < 0:
                best = t
                continue
            d = tv[t] - tv[best]
            if d > TIE or d < -TIE:
                better = d > 0.0
            elif th[t] != th[best]:
                better = th[t] > th[best]
            elif tt[t, 0] != tt[best, 0]:
                better = tt[t, 0] < tt[best, 0]
            else:
                better = tt[t, 1] < tt[best, 1]
            if better:
                best = t
        if best < 0:
            return E_NOT_HELD
        value = tv[best]
        hand_ev = th[best]
        row = feats[i, j]
        prior[i, j] = value
        row[0] = value / 10.0
        row[1] = hand_ev / 10.0
        row[2] = (value - hand_ev) / 10.0
        row[4] = values[c >> 2] / 10.0
        row[5] = (nh - 1) / 6.0
        for m in range(4):
            row[cols[L_KEPT] + (tk[best, m] >> 2)] += 0.25
        for m in range(2):
            t = tt[best, m]
            if t >= 0 and t != c:
                row[cols[L_OTHER] + (t >> 2)] = 1.0
    return 0


@jit
def _play_row(i, hand, nh, disc, nd, starter, laid, n_laid, ns, count, n, said_go, held,
              scores, target, legal, nl, knobs, cols, prior_clip, values, peg_count,
              peg_pair, prior, feats):
    """:meth:`ExpertAgent.play_values` and the play's feature rows of row ``i``; ``laid`` holds
    the cards laid this hand in order, the last ``ns`` the current series. Returns
    ``E_NOT_HELD`` for a legal card the hand does not hold, else 0."""
    two = n == 2
    my_need = target - scores[0]
    nr = np.full(13, 4, np.int64)
    for j in range(nh):
        nr[hand[j] >> 2] -= 1
    for j in range(nd):
        nr[disc[j] >> 2] -= 1
    if starter >= 0:
        nr[starter >> 2] -= 1
    for j in range(n_laid):
        nr[laid[j] >> 2] -= 1
    n_unseen = 0
    for r in range(13):
        n_unseen += nr[r]
    rep_held = np.empty(3, np.int64)
    rep_partner = np.empty(3, np.bool_)
    rep_need = np.empty(3, np.int64)
    nrep = 0
    for q in range(1, n):
        if held[q] and not said_go[q]:
            side = q % 2 if n == 4 else q
            rep_held[nrep] = held[q]
            rep_partner[nrep] = side == 0
            rep_need[nrep] = target - scores[side]
            nrep += 1
    ser = np.empty(40, np.int64)          # the series as cards rank << 2, then scratch
    for j in range(ns):
        ser[j] = (laid[n_laid - ns + j] >> 2) << 2
    now_all = np.empty(13, np.int64)
    _peg_all(ser, ns, count, values, now_all)
    reply = np.empty(13, np.int64)
    by_points = np.empty(32, np.int64)
    rest = np.empty(16, np.int64)
    for j in range(nl):
        c = legal[j]
        r = c >> 2
        k1 = count + values[r]
        now = now_all[r]
        nrest = 0
        removed = False
        found = False
        for m in range(nh):
            if hand[m] == c:
                found = True
            hr = hand[m] >> 2
            if hr == r and not removed:
                removed = True
                continue
            rest[nrest] = hr
            nrest += 1
        if not found:
            return E_NOT_HELD
        ser[ns] = r << 2
        if now >= my_need:
            value = 1000.0 + now
        elif k1 == 31:
            value = float(now)
        elif nrep == 0:
            value = float(now + _solo(ser, ns + 1, k1, rest, nrest, values))
        else:
            value = now + _reply_value(ser, ns + 1, k1, rest, nrest, nr, n_unseen, rep_held,
                                       rep_partner, rep_need, nrep, two, knobs, values,
                                       peg_count, peg_pair, reply, by_points)
        if not two and values[r] <= 4 and nrest > 0:
            value -= knobs[KN_LOW_KEEP] * (5 - values[r])
        # agents.features.card_features
        value = max(-prior_clip, min(prior_clip, value))
        prior[i, j] = value + 1e-3 * r - 1e-5 * c
        after = count + values[r]
        row = feats[i, j]
        row[0] = value / 10.0
        row[1] = now / 10.0
        row[2] = after / 31.0
        row[3] = 1.0 if after == 15 or after == 31 else 0.0
        row[4] = values[r] / 10.0
        row[5] = (nh - 1) / 6.0
        for m in range(nh):
            row[cols[L_KEPT] + (hand[m] >> 2)] += 0.25
        row[cols[L_KEPT] + r] -= 0.25
        if ns:
            row[cols[L_OTHER] + (laid[n_laid - 1] >> 2)] = 1.0
    return 0


# ------------------------------------------------------------------------------------------
# The batch
# ------------------------------------------------------------------------------------------

@jit
def legal_rows(obs, masks, ids, prior, feats, knobs, peg_table, cols, prior_clip, rank_points,
               values, peg_count, peg_pair, r3, e3, o3, c3, r4, e4, o4, c4, err):
    """:func:`agents.features.legal_features` of the rows ``obs`` (float32 ``(N, OBS_SIZE)``)
    with the masks ``masks`` (bool ``(N, 52)``) into ``ids`` (filled with -1), ``prior`` and
    ``feats`` (zeros), each row's legal cards in ascending order. Returns -1, or the first row
    that could not be read, its error (``E_*``) in ``err[0]``."""
    hand = np.empty(52, np.int64)
    disc = np.empty(52, np.int64)
    laid = np.empty(16, np.int64)
    info = np.empty(10, np.int64)
    said_go = np.empty(4, np.bool_)
    held = np.empty(4, np.int64)
    scores = np.empty(3, np.int64)
    legal = np.empty(52, np.int64)
    common = np.empty(cols[L_SCALARS], np.float64)
    for i in range(obs.shape[0]):
        nl = 0
        for c in range(52):
            if masks[i, c]:
                legal[nl] = c
                nl += 1
        if nl == 0:
            continue
        if _read_row(obs[i], hand, disc, laid, said_go, held, scores, info) < 0:
            err[0] = E_BAD_ROW
            return i
        n, target, phase, dealer, count = info[0], info[1], info[2], info[3], info[4]
        starter, nh, nd, n_laid, ns = info[5], info[6], info[7], info[8], info[9]
        # seat 0's side is 0; the crib is its side's when it or its partner deals
        crib_own = (dealer % 2 == 0) if n == 4 else dealer == 0
        sides = 2 if n == 2 or n == 4 else 3
        other = scores[1]
        for s in range(2, sides):
            if scores[s] > other:
                other = scores[s]
        need = target - scores[0]
        ftarget = float(target)
        for s in range(common.shape[0]):
            common[s] = 0.0
        common[6] = 1.0 if phase == 0 else 0.0
        common[7] = 1.0 if phase == 1 else 0.0
        common[8] = 1.0 if crib_own else 0.0
        common[9] = scores[0] / ftarget
        common[10] = other / ftarget
        common[11] = min(need, 31) / 31.0
        common[12] = held[1 % n] / 6.0
        common[13] = 1.0 if said_go[1 % n] else 0.0
        common[14] = nd / 2.0
        for j in range(nl):
            c = legal[j]
            ids[i, j] = c
            row = feats[i, j]
            for s in range(common.shape[0]):
                row[s] = common[s]
            row[cols[L_BIAS]] = 1.0
            row[cols[L_RANK] + (c >> 2)] = 1.0
        if phase == 0:
            code = _discard_row(i, hand, nh, disc, nd, n, crib_own, dealer == 0, need, legal,
                                nl, knobs, peg_table, cols, rank_points, values, r3, e3, o3,
                                c3, r4, e4, o4, c4, prior, feats)
        else:
            code = _play_row(i, hand, nh, disc, nd, starter, laid, n_laid, ns, count, n,
                             said_go, held, scores, target, legal, nl, knobs, cols,
                             prior_clip, values, peg_count, peg_pair, prior, feats)
        if code:
            err[0] = code
            return i
    return -1
