"""Encode a seat's :class:`~cribenv.game.PlayerView` as a fixed-size vector, and decode it back.

The vector is seat-relative: "seat +k" is the player k places to the left of the observer, so
the same policy serves every seat. Its layout (``LAYOUT``, also tabulated in the README) is the
same for 2, 3 and 4 players; unused seat slots stay zero. The encoding is lossless with respect
to the view: ``decode(encode(view)) == view`` (perfect recall of the current hand), and it is a
function of the view alone, so hidden cards can never leak into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from cribenv.game import Phase, PlayerView

MAX_SEATS = 4
MAX_SIDES = 3
MAX_CARDS_PER_HAND = 16   # cards laid in the play of one hand (4 players x 4)
MAX_HAND_NUMBER = 255
_VALUE = [min(c // 4 + 1, 10) for c in range(52)]

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
        me_side = me % 2 if n == 4 else me
        for k in range(n):
            seat = (me + k) % n
            if (seat % 2 if n == 4 else seat) == me_side:
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
    for c in hand:
        obs[_HAND + c] = 1.0
        obs[_HRANK + (c >> 2)] += 0.25
        obs[_UNSEEN + (c >> 2)] -= 0.25
    for c in discards:
        obs[_DISC + c] = 1.0
        obs[_UNSEEN + (c >> 2)] -= 0.25
    if starter is not None:
        obs[_STARTER + starter] = 1.0
        obs[_UNSEEN + (starter >> 2)] -= 0.25
    i = 0
    for p, card in played:
        obs[played_off[p] + card] = 1.0
        obs[_UNSEEN + (card >> 2)] -= 0.25
        i += 1
        obs[_ORDER + card] = i / MAX_CARDS_PER_HAND
        if i > series_start:
            obs[_SERIES + card] = 1.0
    tail = len(played) - series_start
    for j in range(min(tail, 3)):
        obs[_TAIL + 13 * j + (played[-1 - j][1] >> 2)] = 1.0
    obs[_COUNT + count] = 1.0
    k = 0
    for p in range(me, me + n):
        if p >= n:
            p -= n
        if said_go[p]:
            obs[_GO + k] = 1.0
        obs[_HELD + k] = cards_held[p] / 6
        obs[_DMADE + k] = discards_made[p] / 2
        k += 1
    if n == 2:
        obs[_SCORES] = scores[me] / target
        obs[_SCORES + 1] = scores[1 - me] / target
    else:
        sides = 2 if n == 4 else 3
        my_side = me % 2 if n == 4 else me
        for k in range(sides):
            obs[_SCORES + k] = scores[(my_side + k) % sides] / target
    obs[_DEALER + (dealer - me) % n] = 1.0
    obs[_TO_ACT + (MAX_SEATS if current_player is None else (current_player - me) % n)] = 1.0
    obs[_PHASE + phase] = 1.0
    obs[_HANDNO] = hand_number / MAX_HAND_NUMBER
    return obs


def encode(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector (float32, length ``OBS_SIZE``) of ``view``."""
    if view.target not in (61, 121):
        raise ValueError(f"the observation encodes 61- or 121-point games, not {view.target}")
    return encode_fields(
        view.seat, view.num_players, view.target, int(view.phase), view.dealer,
        view.current_player, view.hand, view.discards, view.starter, view.played,
        view.series_start, view.count, view.said_go, view.scores, view.cards_held,
        view.discards_made, view.hand_number, out)


def _cards(block: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero(block > 0.5)]


def decode(obs: np.ndarray, seat: int = 0) -> PlayerView:
    """The :class:`PlayerView` that ``obs`` encodes.

    Seats are relative in the vector, so the view is given from the point of view of ``seat``
    (default 0: the observer is seat 0 and seat k is the player k places to its left).
    """
    obs = np.asarray(obs, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"expected an observation vector of shape ({OBS_SIZE},), "
                         f"got {obs.shape}")
    n = int(np.argmax(obs[OFFSETS["num_players"]])) + 2
    if not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1}, got {seat}")

    def abs_seat(k: int) -> int:
        return (seat + k) % n

    target = _TARGETS[bool(obs[_SHORT] > 0.5)]
    starter_cards = _cards(obs[OFFSETS["starter"]])
    played_rel: dict[int, int] = {}
    for k in range(n):
        for card in _cards(obs[_PLAYED + 52 * k:_PLAYED + 52 * (k + 1)]):
            played_rel[card] = abs_seat(k)
    order = obs[OFFSETS["play_order"]]
    played_cards = sorted(played_rel, key=lambda c: order[c])
    played = [(played_rel[c], c) for c in played_cards]
    series_cards = set(_cards(obs[OFFSETS["in_series"]]))
    series_start = len(played)
    for i, (_, card) in enumerate(played):
        if card in series_cards:
            series_start = i
            break
    sides = 2 if n in (2, 4) else 3

    def side_of(s: int) -> int:
        return s % 2 if n == 4 else s

    my_side = side_of(seat)
    scores = [0] * sides
    for k in range(sides):
        scores[(my_side + k) % sides] = int(round(float(obs[_SCORES + k]) * target))
    to_act = int(np.argmax(obs[OFFSETS["to_act"]]))
    current = None if to_act == MAX_SEATS else abs_seat(to_act)
    phase = Phase(int(np.argmax(obs[OFFSETS["phase"]])))
    count = int(np.argmax(obs[OFFSETS["count"]]))
    hand = _cards(obs[OFFSETS["hand"]])
    said_go = [False] * n
    held = [0] * n
    dmade = [0] * n
    for k in range(n):
        s = abs_seat(k)
        said_go[s] = bool(obs[_GO + k] > 0.5)
        held[s] = int(round(float(obs[_HELD + k]) * 6))
        dmade[s] = int(round(float(obs[_DMADE + k]) * 2))
    legal: list[int] = []
    if current == seat:
        legal = hand if phase is Phase.DISCARD else [c for c in hand if _VALUE[c] + count <= 31]
    return PlayerView(
        seat=seat, num_players=n, target=target, phase=phase,
        dealer=abs_seat(int(np.argmax(obs[OFFSETS["dealer"]]))), current_player=current,
        hand=hand, discards=_cards(obs[OFFSETS["own_discards"]]),
        starter=starter_cards[0] if starter_cards else None, played=played,
        series_start=series_start, count=count, said_go=said_go, scores=scores,
        cards_held=held, discards_made=dmade,
        hand_number=int(round(float(obs[_HANDNO]) * MAX_HAND_NUMBER)), legal=list(legal),
    )


def legal_mask(view: PlayerView) -> np.ndarray:
    """The int8 action mask of length 52 for ``view`` (all zero when it is not its turn)."""
    mask = np.zeros(52, np.int8)
    if view.legal:
        mask[view.legal] = 1
    return mask
