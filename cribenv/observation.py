"""Encode a seat's :class:`~cribenv.game.PlayerView` as a fixed-size vector, and decode it back.

The vector is seat-relative: "seat +k" is the player k places to the left of the observer, so
the same policy serves every seat. Its layout (``LAYOUT``, also tabulated in
docs/observation.md) is the same for 2, 3 and 4 players; unused seat slots stay zero. The
encoding is lossless with respect to the view: ``decode(encode(view)) == view`` (perfect recall
of the current hand), and it is a function of the view alone, so hidden cards can never leak
into it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

import numpy as np

from cribenv.game import Game, Phase, PlayerView, legal_cards, seat_side, side_count

MAX_SEATS = 4
MAX_SIDES = 3
MAX_CARDS_PER_HAND = 16   # cards laid in the play of one hand (4 players x 4)
MAX_HAND_NUMBER = 255

# (name, size, meaning) in order; offsets are computed below.
LAYOUT: list[tuple[str, int, str]] = [
    ("hand", 52, "cards this seat holds now (before discarding: all dealt cards)"),
    ("own_discards", 52, "cards this seat laid away to the crib"),
    ("starter", 52, "the starter, once turned"),
    ("played_by", 52 * MAX_SEATS, "cards laid this hand by seat +0, +1, +2, +3 (52 each)"),
    ("in_series", 52, "cards of the current series (since the count last reset)"),
    ("play_order", 52, "order laid this hand: (i + 1) / 16 for the i-th card laid, else 0"),
    ("count", 32, "one-hot running count 0..31"),
    ("said_go", MAX_SEATS, "seat +k has said Go in the current series"),
    ("cards_held", MAX_SEATS, "cards held by seat +k, divided by 6"),
    ("discards_made", MAX_SEATS, "cards laid away by seat +k this hand, divided by 2"),
    ("scores", MAX_SIDES, "score of side +0 (own), +1, +2, divided by the target"),
    ("dealer", MAX_SEATS, "one-hot: the dealer is seat +k"),
    ("to_act", MAX_SEATS + 1, "one-hot: seat +k acts; last slot: nobody (game over)"),
    ("teammate", MAX_SEATS, "seat +k is on the observer's side (itself, and partner in 4p)"),
    ("phase", 3, "one-hot: discard, play, game over"),
    ("num_players", 3, "one-hot: 2, 3, 4 players"),
    ("short_game", 1, "1 for a 61-point game, 0 for 121"),
    ("hand_number", 1, "hands dealt before this one, divided by 255"),
    # Derived features: redundant (computable from the blocks above, ignored by decode), there
    # to make card ranks easy to learn for a network.
    ("hand_ranks", 13, "derived: cards of each rank A..K this seat holds, divided by 4"),
    ("unseen_ranks", 13, "derived: cards of each rank this seat has not seen, divided by 4"),
    ("series_tail", 39, "derived: one-hot ranks of the last 3 cards of the series, newest first"),
]

OFFSETS: dict[str, slice] = {}
_pos = 0
for _name, _size, _ in LAYOUT:
    OFFSETS[_name] = slice(_pos, _pos + _size)
    _pos += _size
OBS_SIZE = _pos
del _pos, _name, _size

_HAND = OFFSETS["hand"].start
_DISC = OFFSETS["own_discards"].start
_STARTER = OFFSETS["starter"].start
_PLAYED = OFFSETS["played_by"].start
_SERIES = OFFSETS["in_series"].start
_ORDER = OFFSETS["play_order"].start
_COUNT = OFFSETS["count"].start
_GO = OFFSETS["said_go"].start
_HELD = OFFSETS["cards_held"].start
_DMADE = OFFSETS["discards_made"].start
_SCORES = OFFSETS["scores"].start
_DEALER = OFFSETS["dealer"].start
_TO_ACT = OFFSETS["to_act"].start
_TEAM = OFFSETS["teammate"].start
_PHASE = OFFSETS["phase"].start
_NPLAY = OFFSETS["num_players"].start
_SHORT = OFFSETS["short_game"].start
_HANDNO = OFFSETS["hand_number"].start
_HRANK = OFFSETS["hand_ranks"].start
_UNSEEN = OFFSETS["unseen_ranks"].start
_TAIL = OFFSETS["series_tail"].start

_TARGETS = {True: 61, False: 121}


def _static_part(n: int, me: int, target: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """What never changes for one observer in one game: the template vector (teammates, number
    of players, game length) and, per absolute seat, the offset of its ``played_by`` block."""
    key = (n, me, target)
    cached = _STATIC.get(key)
    if cached is None:
        tmpl = np.zeros(OBS_SIZE, np.float32)
        me_side = seat_side(me, n)
        for k in range(n):
            if seat_side((me + k) % n, n) == me_side:
                tmpl[_TEAM + k] = 1.0
        tmpl[_NPLAY + n - 2] = 1.0
        if target == 61:
            tmpl[_SHORT] = 1.0
        tmpl[OFFSETS["unseen_ranks"]] = 1.0
        tmpl.setflags(write=False)
        played_off = tuple(_PLAYED + 52 * ((seat - me) % n) for seat in range(n))
        cached = _STATIC[key] = (tmpl, played_off)
    return cached


_STATIC: dict[tuple[int, int, int], tuple[np.ndarray, tuple[int, ...]]] = {}


def encode_fields(seat: int, num_players: int, target: int, phase: int, dealer: int,
                  current_player: int | None, hand: Iterable[int], discards: Iterable[int],
                  starter: int | None, played: Sequence[tuple[int, int]], series_start: int,
                  count: int, said_go: Sequence[bool], scores: Sequence[int],
                  cards_held: Sequence[int], discards_made: Sequence[int], hand_number: int,
                  out: np.ndarray | None = None) -> np.ndarray:
    """:func:`encode` from the fields of a :class:`PlayerView`, without building one.

    The arguments are exactly the view's fields (``hand`` and ``discards`` in any order), so the
    vector is still a function of what ``seat`` may know; the environment calls this on the
    game's state to skip the view's copies and sorts. ``out`` (float32, ``OBS_SIZE``) is
    overwritten and returned; by default a new vector is made.
    """
    n = num_players
    me = seat
    static = _STATIC.get((n, me, target))
    tmpl, played_off = static if static is not None else _static_part(n, me, target)
    if out is None:
        obs = tmpl.copy()
    else:
        obs = out
        obs[:] = tmpl
    # writes go through a memoryview of the vector: a float32 item there costs a third of a
    # numpy scalar write (and rounds the same way)
    v = memoryview(obs)
    for c in hand:
        v[_HAND + c] = 1.0
        v[_HRANK + (c >> 2)] += 0.25
        v[_UNSEEN + (c >> 2)] -= 0.25
    for c in discards:
        v[_DISC + c] = 1.0
        v[_UNSEEN + (c >> 2)] -= 0.25
    if starter is not None:
        v[_STARTER + starter] = 1.0
        v[_UNSEEN + (starter >> 2)] -= 0.25
    i = 0
    for p, card in played:
        v[played_off[p] + card] = 1.0
        v[_UNSEEN + (card >> 2)] -= 0.25
        i += 1
        v[_ORDER + card] = i / MAX_CARDS_PER_HAND
        if i > series_start:
            v[_SERIES + card] = 1.0
    tail = len(played) - series_start
    for j in range(min(tail, 3)):
        v[_TAIL + 13 * j + (played[-1 - j][1] >> 2)] = 1.0
    v[_COUNT + count] = 1.0
    k = 0
    for p in range(me, me + n):
        if p >= n:
            p -= n
        if said_go[p]:
            v[_GO + k] = 1.0
        v[_HELD + k] = cards_held[p] / 6
        v[_DMADE + k] = discards_made[p] / 2
        k += 1
    if n == 2:
        v[_SCORES] = scores[me] / target
        v[_SCORES + 1] = scores[1 - me] / target
    else:
        sides = side_count(n)
        my_side = seat_side(me, n)
        for k in range(sides):
            v[_SCORES + k] = scores[(my_side + k) % sides] / target
    v[_DEALER + (dealer - me) % n] = 1.0
    v[_TO_ACT + (MAX_SEATS if current_player is None else (current_player - me) % n)] = 1.0
    v[_PHASE + phase] = 1.0
    v[_HANDNO] = hand_number / MAX_HAND_NUMBER
    return obs


def encode_game(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """``encode(game.view(seat))``, read from the game's state without building the view.

    It passes exactly the view's fields to :func:`encode_fields`, so the vector is still a
    function of what ``seat`` may know (the no-leak tests check this path).
    """
    return encode_fields(
        seat, game.rules.num_players, game.rules.target, game.phase, game.dealer,
        game.current_player, game.hands[seat], game.discards[seat], game.starter, game.played,
        game.series_start, game.count, game.said_go, game.scores,
        list(map(len, game.hands)), list(map(len, game.discards)), game.hand_number, out)


def encode(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector (float32, length ``OBS_SIZE``) of ``view``."""
    if view.target not in (61, 121):
        raise ValueError(f"the observation encodes 61- or 121-point games, not {view.target}")
    return encode_fields(
        view.seat, view.num_players, view.target, int(view.phase), view.dealer,
        view.current_player, view.hand, view.discards, view.starter, view.played,
        view.series_start, view.count, view.said_go, view.scores, view.cards_held,
        view.discards_made, view.hand_number, out)


_STARTS = [OFFSETS[name].start for name, _, _ in LAYOUT]
_FIELD = {name: i for i, (name, _, _) in enumerate(LAYOUT)}
_F_HAND, _F_DISC, _F_STARTER, _F_PLAYED, _F_SERIES, _F_COUNT = (
    _FIELD[k] for k in ("hand", "own_discards", "starter", "played_by", "in_series", "count"))
_F_GO, _F_DEALER, _F_ACT, _F_PHASE, _F_NP, _F_SHORT = (
    _FIELD[k] for k in ("said_go", "dealer", "to_act", "phase", "num_players", "short_game"))


def decode(obs: np.ndarray, seat: int = 0) -> PlayerView:
    """The :class:`PlayerView` that ``obs`` encodes.

    Seats are relative in the vector, so the view is given from the point of view of ``seat``
    (default 0: the observer is seat 0 and seat k is the player k places to its left). One
    ``nonzero`` over the whole vector, split at the (sorted, contiguous) block offsets, keeps
    this fast enough for bots that decode every observation.
    """
    obs = np.asarray(obs, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"expected an observation vector of shape ({OBS_SIZE},), "
                         f"got {obs.shape}")
    idx = obs.nonzero()[0].tolist()
    cut = [bisect_left(idx, start) for start in _STARTS]
    cut.append(len(idx))
    starts = _STARTS
    if cut[_F_NP + 1] == cut[_F_NP]:
        raise ValueError("not an observation vector: the number of players is not set")
    n = idx[cut[_F_NP]] - starts[_F_NP] + 2
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1}, got {seat}")

    def block(f: int) -> list[int]:
        base = starts[f]
        return [i - base for i in idx[cut[f]:cut[f + 1]]]

    def one(f: int) -> int:
        return idx[cut[f]] - starts[f]

    def absolute(k: int) -> int:
        return (seat + k) % n

    target = _TARGETS[cut[_F_SHORT + 1] > cut[_F_SHORT]]
    hand = block(_F_HAND)
    starter_block = block(_F_STARTER)
    count = one(_F_COUNT)
    order = obs[OFFSETS["play_order"]]
    played_rel = sorted((float(order[i % 52]), i // 52, i % 52) for i in block(_F_PLAYED))
    played = [(absolute(k), card) for _, k, card in played_rel]
    series = set(block(_F_SERIES))
    series_start = next((i for i, (_, card) in enumerate(played) if card in series),
                        len(played))
    said_go = [False] * n
    for k in block(_F_GO):
        said_go[absolute(k)] = True
    held, dmade = [0] * n, [0] * n
    for k in range(n):
        held[absolute(k)] = int(round(float(obs[_HELD + k]) * 6))
        dmade[absolute(k)] = int(round(float(obs[_DMADE + k]) * 2))
    sides = side_count(n)
    my_side = seat_side(seat, n)
    scores = [0] * sides
    for k in range(sides):
        scores[(my_side + k) % sides] = int(round(float(obs[_SCORES + k]) * target))
    phase = Phase(one(_F_PHASE))
    to_act = one(_F_ACT)
    current = None if to_act == MAX_SEATS else absolute(to_act)
    legal = legal_cards(phase, hand, count) if current == seat else []
    return PlayerView(
        seat=seat, num_players=n, target=target, phase=phase, dealer=absolute(one(_F_DEALER)),
        current_player=current, hand=hand, discards=block(_F_DISC),
        starter=starter_block[0] if starter_block else None, played=played,
        series_start=series_start, count=count, said_go=said_go, scores=scores,
        cards_held=held, discards_made=dmade,
        hand_number=int(round(float(obs[_HANDNO]) * MAX_HAND_NUMBER)), legal=legal,
    )


def legal_mask(view: PlayerView) -> np.ndarray:
    """The int8 action mask of length 52 for ``view`` (all zero when it is not its turn)."""
    mask = np.zeros(52, np.int8)
    if view.legal:
        mask[view.legal] = 1
    return mask
