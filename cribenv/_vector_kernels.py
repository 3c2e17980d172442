"""Numba kernels of :mod:`cribenv.vector`: N games of :class:`cribenv.game.Game` in arrays.

Every function here repeats one method of ``Game`` (named in its docstring) on row ``i`` of the
state arrays, call for call, including CPython's random number generator (MT19937 seeded with
``init_by_array`` from the seed's 32-bit words, ``getrandbits``, ``_randbelow``, ``sample``), so
game ``i`` is dealt exactly as ``Game(rules, seed=seeds[i])``; ``tests/test_vector.py`` proves
them equal step by step. Scoring (card values, sides, show and pegging points) is the core's
kernels in :mod:`cribenv.scoring`, compiled here.

The state of all games is one ``int64`` array ``st`` (one row a game, the columns below), the
generators' words ``mt`` (``uint32`` ``(N, 624)``) and the rules ``cfg`` (``int64``, the ``C_``
indices). Hands, discards, kept hands and the crib are 52-bit card sets (bit ``c`` = card ``c``).
The batched entry points loop over the rows they are given and release the GIL (``nogil``), so
:class:`cribenv.vector.VectorGame` runs blocks of rows on several threads; every function is
compiled once and cached on disk (``cache=True``). The part that code built on the engine may
use (the state layout and the row functions) is documented in :mod:`cribenv.vector_kernels`.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from cribenv import cards, game, scoring

# ------------------------------------------------------------------------------------------
# State columns (one row of ``st`` per game)
# ------------------------------------------------------------------------------------------
TO_ACT = 0          # seat to act, -1 once the game is over
PHASE = 1           # 0 discard, 1 play, 2 game over (cribenv.game.Phase)
DEALER = 2
NEXT_DEALER = 3
HAND_NO = 4         # hand_number (0 for the first hand)
COUNT = 5           # running count of the play
SERIES_START = 6    # index into the played cards where the current series starts
N_PLAYED = 7        # cards laid this hand
LAST = 8            # seat that laid the last card (-1 none)
STARTER = 9         # starter card, -1 before it is turned
WINNER = 10         # winning side, -1 while playing (or when max_hands cut the game short)
GAME_POINTS = 11    # 0 while playing; 1, 2 or 3 once won
CRIB = 12           # card set of the crib
MTI = 13            # index of the next word of the generator (CPython's ``index``)
SCORES = 14         # 3 sides
HAND = 17           # 4 seats: card sets held now
DISC = 21           # 4 seats: card sets laid away to the crib
KEPT = 25           # 4 seats: card sets kept for the show
HELD = 29           # 4 seats: number of cards held
NDISC = 33          # 4 seats: number of cards laid away
GO = 37             # 4 seats: said Go in this series (0/1)
PLAYED_CARD = 41    # 16: cards laid this hand, in order
PLAYED_BY = 57      # 16: the seat that laid each
DECK = 73           # 52: this hand's shuffled deck
CRIB_SHOWN = 125    # 1 once this hand's crib has been counted in the show (0 before)
NCOL = 126

# Rules (``cfg``)
C_PLAYERS = 0
C_TARGET = 1
C_SKUNK = 2
C_DOUBLE_SKUNK = 3
C_EXACT = 4         # must_peg_out_exactly
C_MAX_HANDS = 5     # 0: no limit
C_HAND_SIZE = 6
C_NEED = 7          # discards per player
C_SIDES = 8
C_FIRST_DEALER = 9  # -1: cut for deal
C_REWARD = 10       # 0 "win", 1 "points"
C_SKUNKS = 11       # scale the win reward by the game points
NCFG = 12

# Observation offsets (cribenv.observation.OFFSETS; checked equal by tests/test_vector.py)
O_HAND = 0
O_DISC = 52
O_STARTER = 104
O_PLAYED = 156
O_SERIES = 364
O_ORDER = 416
O_COUNT = 468
O_GO = 500
O_HELD = 504
O_DMADE = 508
O_SCORES = 512
O_DEALER = 515
O_TO_ACT = 519
O_TEAM = 524
O_PHASE = 528
O_NPLAY = 531
O_SHORT = 534
O_HANDNO = 535
O_HRANK = 536
O_UNSEEN = 549
O_TAIL = 562
OBS_SIZE = 601

jit = numba.njit(cache=True, nogil=True)

_M32 = np.uint64(0xFFFFFFFF)
_ONE = np.int64(1)

# ------------------------------------------------------------------------------------------
# The core's scoring kernels (cribenv.scoring's "Kernels"), compiled: the one home of those rules
# ------------------------------------------------------------------------------------------
card_value = jit(cards.value)             # counting value of a card id
side_of = jit(game.seat_side)             # (seat, num_players) -> side
show_points = jit(scoring.show_points)    # (c0, c1, c2, c3, starter, is_crib, RANK_POINTS)
peg_points_last = jit(scoring.peg_points_last)   # (series, n, count incl. the last card)


# ------------------------------------------------------------------------------------------
# CPython's random.Random (MT19937), one generator per row of ``mt``
# ------------------------------------------------------------------------------------------
def _init_genrand(s: int) -> np.ndarray:
    """CPython's ``init_genrand(s)``: the 624 words ``init_by_array`` starts from."""
    mt = [s]
    for k in range(1, 624):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + k) & 0xFFFFFFFF)
    return np.array(mt, np.uint32)


_GENRAND_19650218 = _init_genrand(19650218)   # the same for every seed: computed once


@jit
def seed_generator(mt, st, i, key, keylen):
    """``random.Random(seed)``: ``init_by_array`` on the 32-bit words of ``abs(seed)``."""
    mt[i, :] = _GENRAND_19650218
    a = 1
    b = 0
    k = 624 if 624 > keylen else keylen
    while k > 0:
        prev = np.uint64(mt[i, a - 1])
        x = (np.uint64(mt[i, a]) ^ (((prev ^ (prev >> np.uint64(30))) * np.uint64(1664525))
                                    & _M32))
        mt[i, a] = (x + np.uint64(key[b]) + np.uint64(b)) & _M32
        a += 1
        b += 1
        if a >= 624:
            mt[i, 0] = mt[i, 623]
            a = 1
        if b >= keylen:
            b = 0
        k -= 1
    k = 623
    while k > 0:
        prev = np.uint64(mt[i, a - 1])
        x = (np.uint64(mt[i, a]) ^ (((prev ^ (prev >> np.uint64(30))) * np.uint64(1566083941))
                                    & _M32))
        mt[i, a] = (x - np.uint64(a)) & _M32
        a += 1
        if a >= 624:
            mt[i, 0] = mt[i, 623]
            a = 1
        k -= 1
    mt[i, 0] = np.uint32(0x80000000)
    st[i, MTI] = 624


@jit
def _twist(mt, i):
    upper = np.uint32(0x80000000)
    lower = np.uint32(0x7FFFFFFF)
    mag = np.uint32(0x9908B0DF)
    for kk in range(624):
        y = (mt[i, kk] & upper) | (mt[i, (kk + 1) % 624] & lower)
        v = mt[i, (kk + 397) % 624] ^ (y >> np.uint32(1))
        if y & np.uint32(1):
            v ^= mag
        mt[i, kk] = v


@jit
def genrand_uint32(mt, st, i):
    """The next 32-bit word of game ``i``'s generator (CPython's ``genrand_uint32``)."""
    idx = st[i, MTI]
    if idx >= 624:
        _twist(mt, i)
        idx = 0
    y = mt[i, idx]
    st[i, MTI] = idx + 1
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return np.int64(y)


@jit
def bit_length(n):
    k = 0
    while n:
        n >>= 1
        k += 1
    return k


@jit
def getrandbits(mt, st, i, k):
    """``Random.getrandbits(k)`` for ``1 <= k <= 32``."""
    return genrand_uint32(mt, st, i) >> (32 - k)


@jit
def randbelow(mt, st, i, n):
    """``Random._randbelow_with_getrandbits(n)`` (``randrange(n)``) for ``n >= 1``."""
    k = bit_length(n)
    r = getrandbits(mt, st, i, k)
    while r >= n:
        r = getrandbits(mt, st, i, k)
    return r


# ------------------------------------------------------------------------------------------
# The game (each function is the Game method of the same name, on row i)
# ------------------------------------------------------------------------------------------
@jit
def _score(st, cfg, i, side, pts):
    """``Game._score``: add a scoring unit; return True if it ends the game."""
    target = cfg[C_TARGET]
    new = st[i, SCORES + side] + pts
    if cfg[C_EXACT] and new > target:
        return False
    st[i, SCORES + side] = new
    if new < target:
        return False
    st[i, WINNER] = side
    best = -1
    for s in range(cfg[C_SIDES]):
        if s != side and st[i, SCORES + s] > best:
            best = st[i, SCORES + s]
    if best < cfg[C_DOUBLE_SKUNK]:
        st[i, GAME_POINTS] = 3
    elif best < cfg[C_SKUNK]:
        st[i, GAME_POINTS] = 2
    else:
        st[i, GAME_POINTS] = 1
    st[i, PHASE] = 2
    st[i, TO_ACT] = -1
    return True


@jit
def _cut_for_deal(mt, st, cfg, i):
    """``Game._cut_for_deal``: ``rng.sample(range(52), k)`` per round; lowest rank deals."""
    n = cfg[C_PLAYERS]
    contenders = 0           # bit s: seat s still cuts
    for s in range(n):
        contenders |= 1 << s
    while True:
        # rng.sample(range(52), k), k <= 4: the "selected set" branch of sample()
        picked = np.int64(0)     # bit j: card j drawn this round
        low = 99
        cut = 0                  # the seats whose card has the lowest rank
        for s in range(n):
            if not (contenders >> s) & 1:
                continue
            j = randbelow(mt, st, i, 52)
            while (picked >> j) & 1:
                j = randbelow(mt, st, i, 52)
            picked |= _ONE << j
            r = j >> 2
            if r < low:
                low = r
                cut = 1 << s
            elif r == low:
                cut |= 1 << s
        contenders = cut
        if contenders & (contenders - 1) == 0:
            return trailing_zeros(np.int64(contenders))


@jit
def _new_hand(mt, st, cfg, i):
    """``Game._new_hand`` (random deals): shuffle, rotate the deal, deal from the dealer's left."""
    n = cfg[C_PLAYERS]
    st[i, HAND_NO] += 1
    st[i, CRIB_SHOWN] = 0
    for c in range(52):
        st[i, DECK + c] = c
    for a in range(51, 0, -1):     # Game._shuffle (random.shuffle)
        j = randbelow(mt, st, i, a + 1)
        t = st[i, DECK + a]
        st[i, DECK + a] = st[i, DECK + j]
        st[i, DECK + j] = t
    dealer = st[i, NEXT_DEALER]
    st[i, DEALER] = dealer
    st[i, NEXT_DEALER] = (dealer + 1) % n
    size = cfg[C_HAND_SIZE]
    for s in range(4):
        st[i, HAND + s] = 0
        st[i, DISC + s] = 0
        st[i, KEPT + s] = 0
        st[i, HELD + s] = 0
        st[i, NDISC + s] = 0
        st[i, GO + s] = 0
    for a in range(size * n):
        seat = (dealer + 1 + a % n) % n
        st[i, HAND + seat] |= _ONE << st[i, DECK + a]
    for s in range(n):
        st[i, HELD + s] = size
    st[i, CRIB] = (_ONE << st[i, DECK + 51]) if n == 3 else 0
    st[i, STARTER] = -1
    st[i, N_PLAYED] = 0
    st[i, SERIES_START] = 0
    st[i, COUNT] = 0
    st[i, LAST] = -1
    st[i, PHASE] = 0
    st[i, TO_ACT] = (dealer + 1) % n


@jit
def start_game(mt, st, cfg, i, key, keylen):
    """``Game(rules, seed)``: seed the generator, cut for the first deal (unless
    ``first_dealer``), deal the first hand."""
    seed_generator(mt, st, i, key, keylen)
    for c in range(NCOL):
        if c != MTI:
            st[i, c] = 0
    st[i, WINNER] = -1
    st[i, HAND_NO] = -1
    dealer = cfg[C_FIRST_DEALER]
    if dealer < 0:
        dealer = _cut_for_deal(mt, st, cfg, i)
    st[i, NEXT_DEALER] = dealer
    _new_hand(mt, st, cfg, i)


@jit
def playable(hand, count):
    """The cards of a card set that can be laid without passing 31."""
    room = 31 - count
    if room >= 10:
        return hand
    return hand & ((_ONE << (4 * room)) - 1)


@jit
def _four_points(cards, starter, is_crib, rank_points):
    """Show points of the 4-card set ``cards`` (lowest card first) with ``starter``."""
    c0 = trailing_zeros(cards)
    cards &= cards - 1
    c1 = trailing_zeros(cards)
    cards &= cards - 1
    c2 = trailing_zeros(cards)
    cards &= cards - 1
    return show_points(c0, c1, c2, trailing_zeros(cards), starter, is_crib, rank_points)


@jit
def _show(mt, st, cfg, rank_points, i):
    """``Game._show``: count the hands from the dealer's left, then the crib."""
    n = cfg[C_PLAYERS]
    dealer = st[i, DEALER]
    starter = st[i, STARTER]
    st[i, TO_ACT] = -1
    for k in range(1, n + 2):
        if k <= n:
            seat = (dealer + k) % n
            hand = st[i, KEPT + seat]
        else:
            seat = dealer
            hand = st[i, CRIB]
            st[i, CRIB_SHOWN] = 1
        pts = _four_points(hand, starter, k > n, rank_points)
        if pts and _score(st, cfg, i, side_of(seat, n), pts):
            return
    if cfg[C_MAX_HANDS] > 0 and st[i, HAND_NO] + 1 >= cfg[C_MAX_HANDS]:
        st[i, PHASE] = 2     # cut short: no winner
        return
    _new_hand(mt, st, cfg, i)


@jit
def _end_series(mt, st, cfg, rank_points, i, go):
    """``Game._end_series``: a Go (1 point, or last card) or 31 ends the series. Returns the
    seat the play continues from, or -1 when the hand (show) or the game is over."""
    n = cfg[C_PLAYERS]
    last = st[i, LAST]
    finished = True
    for s in range(n):
        if st[i, HAND + s]:
            finished = False
    if go and _score(st, cfg, i, side_of(last, n), 1):
        return -1
    if finished:
        _show(mt, st, cfg, rank_points, i)
        return -1
    st[i, COUNT] = 0
    st[i, SERIES_START] = st[i, N_PLAYED]
    for s in range(4):
        st[i, GO + s] = 0
    return (last + 1) % n


@jit
def _continue_play(mt, st, cfg, rank_points, i, seat):
    """``Game._continue_play``: the next seat from ``seat`` on that can lay a card; Go passes
    (the series ends when nobody can lay a card, and the play goes on after it)."""
    n = cfg[C_PLAYERS]
    while seat >= 0:
        count = st[i, COUNT]
        for k in range(n):
            q = (seat + k) % n
            hand = st[i, HAND + q]
            if not hand:
                continue
            if playable(hand, count):
                st[i, TO_ACT] = q
                return
            st[i, GO + q] = 1
        seat = _end_series(mt, st, cfg, rank_points, i, True)


@jit
def _cut_position(mt, st, cfg, i):
    """The deck position of the starter the cut turns: a draw of game ``i``'s generator
    among the cards past the hands (and, with 3 players, the crib's card)."""
    n = cfg[C_PLAYERS]
    first = cfg[C_HAND_SIZE] * n
    return first + randbelow(mt, st, i, 52 - first - (1 if n == 3 else 0))


@jit
def _turn_starter(mt, st, cfg, rank_points, i):
    """``Game._turn_starter``: keep the hands, cut the starter (2 for his heels)."""
    n = cfg[C_PLAYERS]
    for s in range(n):
        st[i, KEPT + s] = st[i, HAND + s]
    starter = st[i, DECK + _cut_position(mt, st, cfg, i)]
    st[i, STARTER] = starter
    st[i, PHASE] = 1
    dealer = st[i, DEALER]
    if starter >> 2 == 10 and _score(st, cfg, i, side_of(dealer, n), 2):
        return
    _continue_play(mt, st, cfg, rank_points, i, (dealer + 1) % n)


@jit
def is_legal(st, i, card):
    """Whether the seat to act in game ``i`` may lay ``card`` (False once the game is over)."""
    p = st[i, TO_ACT]
    if p < 0 or card < 0 or card >= 52:
        return False
    hand = st[i, HAND + p]
    if st[i, PHASE] == 1:
        hand = playable(hand, st[i, COUNT])
    return ((hand >> card) & 1) == 1


@jit
def step_game(mt, st, cfg, rank_points, i, card):
    """``Game.step(card)`` for a legal card (``_discard`` or ``_play``)."""
    n = cfg[C_PLAYERS]
    p = st[i, TO_ACT]
    bit = _ONE << card
    st[i, HAND + p] &= ~bit
    st[i, HELD + p] -= 1
    if st[i, PHASE] == 0:   # Game._discard
        st[i, DISC + p] |= bit
        st[i, NDISC + p] += 1
        st[i, CRIB] |= bit
        need = cfg[C_NEED]
        if st[i, NDISC + p] < need:
            return
        for k in range(1, n + 1):
            q = (p + k) % n
            if st[i, NDISC + q] < need:
                st[i, TO_ACT] = q
                return
        _turn_starter(mt, st, cfg, rank_points, i)
        return
    # Game._play
    count = st[i, COUNT] + card_value(card)
    st[i, COUNT] = count
    k = st[i, N_PLAYED]
    st[i, PLAYED_CARD + k] = card
    st[i, PLAYED_BY + k] = p
    st[i, N_PLAYED] = k + 1
    st[i, LAST] = p
    start = st[i, SERIES_START]
    pts = peg_points_last(st[i, PLAYED_CARD + start:PLAYED_CARD + k + 1], k + 1 - start, count)
    if pts and _score(st, cfg, i, side_of(p, n), pts):
        return
    if count == 31:
        _continue_play(mt, st, cfg, rank_points, i,
                       _end_series(mt, st, cfg, rank_points, i, False))
        return
    _continue_play(mt, st, cfg, rank_points, i, (p + 1) % n)


# ------------------------------------------------------------------------------------------
# Batched entry points (called by cribenv.vector)
# ------------------------------------------------------------------------------------------
@jit
def start_games(mt, st, cfg, rows, keys, keylens):
    """Start game ``rows[j]`` from the seed words ``keys[j, :keylens[j]]``."""
    for j in range(rows.shape[0]):
        start_game(mt, st, cfg, rows[j], keys[j], keylens[j])


@jit
def seed_rows(mt, st, rows, keys, keylens):
    """Seed the generator of row ``rows[j]`` as ``random.Random(seed)`` (the seed's words
    ``keys[j, :keylens[j]]``), leaving the rest of the row alone."""
    for j in range(rows.shape[0]):
        seed_generator(mt, st, rows[j], keys[j], keylens[j])


@jit
def first_illegal(st, actions):
    """The first game whose action is illegal (-1 if none); finished games are skipped."""
    for i in range(st.shape[0]):
        if st[i, TO_ACT] >= 0 and not is_legal(st, i, actions[i]):
            return i
    return -1


@jit
def _rewards_of_step(st, cfg, i, b0, b1, b2, rewards, cumulative, shaping, actor):
    """The AEC env's ``rewards`` of one step (``_apply_points`` and ``_finish``) and its
    ``_cumulative_rewards`` (reset for the seat that acted, then accumulated)."""
    n = cfg[C_PLAYERS]
    sides = cfg[C_SIDES]
    g0 = st[i, SCORES] - b0
    g1 = st[i, SCORES + 1] - b1
    g2 = st[i, SCORES + 2] - b2
    total = g0 + g1 + g2
    weight = 1.0 if cfg[C_REWARD] == 1 else shaping
    over = st[i, TO_ACT] < 0
    winner = st[i, WINNER]
    scale = np.float64(st[i, GAME_POINTS]) if cfg[C_SKUNKS] else 1.0
    for seat in range(n):
        side = side_of(seat, n)
        r = 0.0
        if weight != 0.0 and total != 0:
            own = g0 if side == 0 else (g1 if side == 1 else g2)
            r = weight * (own - (total - own) / (sides - 1))
        if over and winner >= 0 and cfg[C_REWARD] == 0:
            if side == winner:
                r += scale
            else:
                r += -scale / (sides - 1)
        rewards[i, seat] = r
        if seat == actor:
            cumulative[i, seat] = r
        else:
            cumulative[i, seat] += r


@jit
def step_games(mt, st, cfg, rank_points, actions, rewards, cumulative, shaping):
    """Step every game still playing with its action (all legal: see :func:`first_illegal`)
    and write the step's rewards; finished games are left alone with zero rewards."""
    for i in range(st.shape[0]):
        p = st[i, TO_ACT]
        if p < 0:
            for s in range(rewards.shape[1]):
                rewards[i, s] = 0.0
            continue
        b0 = st[i, SCORES]
        b1 = st[i, SCORES + 1]
        b2 = st[i, SCORES + 2]
        step_game(mt, st, cfg, rank_points, i, actions[i])
        _rewards_of_step(st, cfg, i, b0, b1, b2, rewards, cumulative, shaping, p)


@jit
def legal_masks(st, out):
    """``out[i, c]`` = card ``c`` is legal in game ``i`` (all False once it is over)."""
    for i in range(st.shape[0]):
        p = st[i, TO_ACT]
        hand = np.int64(0)
        if p >= 0:
            hand = st[i, HAND + p]
            if st[i, PHASE] == 1:
                hand = playable(hand, st[i, COUNT])
        for c in range(52):
            out[i, c] = ((hand >> c) & 1) == 1


@jit
def encode_row(st, cfg, i, me, obs):
    """``observation.encode(game.view(me))`` of game ``i`` into the zeroed vector ``obs``."""
    n = cfg[C_PLAYERS]
    target = cfg[C_TARGET]
    me_side = side_of(me, n)
    for k in range(n):
        if side_of((me + k) % n, n) == me_side:
            obs[O_TEAM + k] = 1.0
    obs[O_NPLAY + n - 2] = 1.0
    if target == 61:
        obs[O_SHORT] = 1.0
    for r in range(13):
        obs[O_UNSEEN + r] = 1.0
    hand = st[i, HAND + me]
    disc = st[i, DISC + me]
    while hand:
        c = trailing_zeros(hand)
        hand &= hand - 1
        obs[O_HAND + c] = 1.0
        obs[O_HRANK + (c >> 2)] += 0.25
        obs[O_UNSEEN + (c >> 2)] -= 0.25
    while disc:
        c = trailing_zeros(disc)
        disc &= disc - 1
        obs[O_DISC + c] = 1.0
        obs[O_UNSEEN + (c >> 2)] -= 0.25
    starter = st[i, STARTER]
    if starter >= 0:
        obs[O_STARTER + starter] = 1.0
        obs[O_UNSEEN + (starter >> 2)] -= 0.25
    n_played = st[i, N_PLAYED]
    series_start = st[i, SERIES_START]
    for j in range(n_played):
        card = st[i, PLAYED_CARD + j]
        p = st[i, PLAYED_BY + j]
        obs[O_PLAYED + 52 * ((p - me) % n) + card] = 1.0
        obs[O_UNSEEN + (card >> 2)] -= 0.25
        obs[O_ORDER + card] = np.float32((j + 1) / 16)
        if j >= series_start:
            obs[O_SERIES + card] = 1.0
    tail = n_played - series_start
    for j in range(min(tail, 3)):
        obs[O_TAIL + 13 * j + (st[i, PLAYED_CARD + n_played - 1 - j] >> 2)] = 1.0
    obs[O_COUNT + st[i, COUNT]] = 1.0
    for k in range(n):
        p = (me + k) % n
        if st[i, GO + p]:
            obs[O_GO + k] = 1.0
        obs[O_HELD + k] = np.float32(st[i, HELD + p] / 6)
        obs[O_DMADE + k] = np.float32(st[i, NDISC + p] / 2)
    sides = cfg[C_SIDES]
    for k in range(sides):
        obs[O_SCORES + k] = np.float32(st[i, SCORES + (me_side + k) % sides] / target)
    obs[O_DEALER + (st[i, DEALER] - me) % n] = 1.0
    to_act = st[i, TO_ACT]
    obs[O_TO_ACT + (4 if to_act < 0 else (to_act - me) % n)] = 1.0
    obs[O_PHASE + st[i, PHASE]] = 1.0
    obs[O_HANDNO] = np.float32(st[i, HAND_NO] / 255)


@jit
def encode_rows(st, cfg, seats, out):
    """Row ``i`` of ``out`` = the observation of seat ``seats[i]`` in game ``i``."""
    for i in range(st.shape[0]):
        row = out[i]
        row[:] = 0.0
        encode_row(st, cfg, i, seats[i], row)


# What a seat cannot see (:meth:`cribenv.vector.VectorGame.hidden`): 52 entries for each
# other seat's hand (in seat order after it; 3 blocks, unused ones zero), the crib so far, the
# starter (turned, or the one the cut will turn), then the show to come: the points / 29 of
# each seat's four kept cards with that starter (the observer first, then in seat order; 0
# until the seat has laid away its cards) and of the crib (0 until it is complete)
H_HANDS = 0
H_CRIB = 156
H_STARTER = 208
H_SHOW = 260
HIDDEN_SIZE = 265


@jit
def _set_cards(row, offset, cards):
    """``row[offset + c] = 1`` for every card ``c`` of the card set ``cards``."""
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        row[offset + c] = 1.0


@jit
def hidden_rows(mt, st, cfg, rank_points, seats, out):
    """Row ``i`` of ``out``: what seat ``seats[i]`` of game ``i`` cannot see (``H_`` blocks).
    Before the cut, the starter is the card ``_turn_starter`` will turn: the next draw of the
    game's generator, made here on a copy of it."""
    n = cfg[C_PLAYERS]
    words = np.empty((1, 624), np.uint32)
    tmp = np.zeros((1, NCOL), np.int64)
    for i in range(st.shape[0]):
        row = out[i]
        row[:] = 0.0
        me = seats[i]
        for k in range(1, n):
            _set_cards(row, H_HANDS + 52 * (k - 1), st[i, HAND + (me + k) % n])
        _set_cards(row, H_CRIB, st[i, CRIB])
        starter = st[i, STARTER]
        phase = st[i, PHASE]
        if starter < 0 and phase == 0:
            words[0, :] = mt[i]
            tmp[0, MTI] = st[i, MTI]
            starter = st[i, DECK + _cut_position(words, tmp, cfg, 0)]
        if starter < 0:
            continue
        row[H_STARTER + starter] = 1.0
        for k in range(n):
            seat = (me + k) % n
            if phase == 1:                       # the play: the kept cards
                kept = st[i, KEPT + seat]
            elif st[i, HELD + seat] == 4:        # laid away already (or the game ended so)
                kept = st[i, HAND + seat]
            else:
                continue
            row[H_SHOW + k] = _four_points(kept, starter, False, rank_points) / 29.0
        if phase != 0:                           # the last discard completes the crib
            row[H_SHOW + 4] = _four_points(st[i, CRIB], starter, True, rank_points) / 29.0


@jit
def sample_masks(mask, u, out):
    """``out[i]`` = the ``floor(u[i] * k)``-th of the ``k`` True cards of ``mask[i]`` (0 if
    none): a uniform choice for ``u`` uniform in [0, 1)."""
    for i in range(mask.shape[0]):
        k = 0
        for c in range(52):
            if mask[i, c]:
                k += 1
        out[i] = 0
        if k == 0:
            continue
        j = np.int64(u[i] * k)
        if j >= k:
            j = k - 1
        for c in range(52):
            if mask[i, c]:
                if j == 0:
                    out[i] = c
                    break
                j -= 1


@jit
def draw_bits(key, keylen, ks):
    """``[random.Random(seed).getrandbits(k) for k in ks]`` for the seed of ``key`` (tests)."""
    mt = np.zeros((1, 624), np.uint32)
    st = np.zeros((1, NCOL), np.int64)
    seed_generator(mt, st, 0, key, keylen)
    out = np.empty(len(ks), np.int64)
    for j in range(len(ks)):
        out[j] = getrandbits(mt, st, 0, ks[j])
    return out
