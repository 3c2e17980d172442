"""The table's rules and the deals: what a game is played under, before any card moves.

:class:`Rules` (players, target, skunk lines, Muggins), :class:`Deal` (a hand's cards fixed in
advance), :class:`Phase` and :func:`legal_cards`, and the seats' sides. :mod:`cribenv.game` plays
by them and re-exports every name here.

    >>> Rules(num_players=4).num_sides, seat_side(3, 4)
    (2, 1)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from cribenv import cards as C
from cribenv.checks import exact_bool, exact_int

__all__ = ["Deal", "Phase", "Rules", "deal_order", "legal_cards", "seat_side", "side_count",
           "win_reward"]

_VALUE = C.CARD_VALUES


def seat_side(seat: int, num_players: int) -> int:
    """The scoring side of ``seat``: partners 0 & 2 and 1 & 3 share a side in 4-player games,
    every seat is its own side otherwise (a kernel: numba compiles it).

    >>> seat_side(3, 4), seat_side(2, 3)
    (1, 2)
    """
    return seat % 2 if num_players == 4 else seat


def side_count(num_players: int) -> int:
    """Scoring sides: 2 for 2 players and for 4 in partnerships, 3 for 3 players (a kernel)."""
    return 2 if num_players == 2 or num_players == 4 else 3


def deal_order(dealer: int, num_players: int, hand_size: int) -> tuple[int, ...]:
    """The seat each card of a deal goes to, in the order dealt: one card at a time, from the
    dealer's left (with 3 players one more card then goes to the crib).

    >>> deal_order(1, 2, 6)
    (0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1)
    """
    key = (dealer, num_players, hand_size)
    order = _DEAL_ORDERS.get(key)
    if order is None:
        order = _DEAL_ORDERS[key] = tuple((dealer + 1 + i) % num_players
                                          for i in range(hand_size * num_players))
    return order


_DEAL_ORDERS: dict[tuple[int, int, int], tuple[int, ...]] = {}


def win_reward(won: bool, game_points: float, num_sides: int) -> float:
    """A seat's result at the end of a game (the env's ``reward="win"``, OpenSpiel's returns):
    ``game_points`` to each seat of the winning side, the losing sides sharing minus that
    (zero-sum over the sides).

    >>> win_reward(True, 2, 2), win_reward(False, 2, 3)
    (2, -1.0)
    """
    return game_points if won else -game_points / (num_sides - 1)


class Phase(enum.IntEnum):
    """The phases an agent can act in (the cut, starter and show resolve automatically)."""

    DISCARD = 0
    PLAY = 1
    GAME_OVER = 2


def legal_cards(phase: Phase, hand: Iterable[int], count: int) -> list[int]:
    """The cards of ``hand`` a seat may choose, sorted: any in the discard, in the play those
    that keep the running ``count`` at 31 or below.

    >>> legal_cards(Phase.PLAY, C.parse_many("KH 5C AS"), 25)  # 5C and AS fit, KH does not
    [3, 16]
    """
    if phase is Phase.DISCARD:
        return sorted(hand)
    room = 31 - count
    legal = [c for c in hand if _VALUE[c] <= room]
    legal.sort()
    return legal


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rules:
    """Table rules.

    ``skunk_line`` / ``double_skunk_line`` default to 91 / 61 for a 121-point game and 31 / none
    for a 61-point game; pass ``double_skunk_line=0`` to disable double skunks, ``skunk_line=0``
    to disable skunks. With ``must_peg_out_exactly`` a scoring unit that would take a side past
    the target scores nothing (a side on 120 of 121 wins only with exactly 1 point).

    ``muggins`` (for human play only: the web table): a person counts their own show with
    :meth:`Game.claim`, and what each card they lay in the play pegs with
    ``Game.step(card, claim=points)``; points they overlook go to the next side, which calls
    "Muggins", and so does the excess of a claim above the true count (a false count: the
    seat scores the true count, the next side the rest). A claim is final and never refused
    for its value, so claiming reveals nothing. Agents never claim, and a show or a card
    nobody claims is counted in full, so bots, the env and training are unaffected.
    """

    num_players: int = 2
    target: int = 121
    skunk_line: int | None = None
    double_skunk_line: int | None = None
    must_peg_out_exactly: bool = False
    muggins: bool = False

    def __post_init__(self) -> None:
        if exact_int(self.num_players, "num_players") not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {self.num_players!r}")
        if exact_int(self.target, "target") < 1:
            raise ValueError(f"target must be a positive int (121 or 61), got {self.target!r}")
        for name in ("num_players", "target", "skunk_line", "double_skunk_line"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, exact_int(value, name))
        object.__setattr__(self, "must_peg_out_exactly",
                           exact_bool(self.must_peg_out_exactly, "must_peg_out_exactly"))
        object.__setattr__(self, "muggins", exact_bool(self.muggins, "muggins"))
        if self.skunk_line is None:
            object.__setattr__(self, "skunk_line", 91 if self.target == 121 else
                               (31 if self.target == 61 else 0))
        if self.double_skunk_line is None:
            object.__setattr__(self, "double_skunk_line", 61 if self.target == 121 else 0)
        if not 0 <= self.double_skunk_line <= self.skunk_line <= self.target:
            raise ValueError(
                "expected 0 <= double_skunk_line <= skunk_line <= target, got "
                f"{self.double_skunk_line}, {self.skunk_line}, {self.target}"
            )

    @property
    def num_sides(self) -> int:
        """Scoring sides: 2 for 2 players and for 4 players in partnerships, 3 for 3 players."""
        return side_count(self.num_players)

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return 6 if self.num_players == 2 else 5

    @property
    def discards_per_player(self) -> int:
        return 2 if self.num_players == 2 else 1

    def side_of(self, seat: int) -> int:
        """The scoring side of a seat (partners 0 & 2, 1 & 3 in 4-player games)."""
        return seat_side(seat, self.num_players)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def unit_scores(self, score: int, points: int) -> bool:
        """Whether a scoring unit of ``points`` counts for a side on ``score``: always, except
        that with ``must_peg_out_exactly`` a unit that would pass the target scores nothing.

            >>> Rules(must_peg_out_exactly=True).unit_scores(119, 3)
            False
        """
        return not self.must_peg_out_exactly or score + points <= self.target


@dataclass(frozen=True)
class Deal:
    """A fixed deal for one hand (replays, puzzles, duplicate tournaments).

    ``dealer=None`` keeps the normal rotation. ``hands`` has one list of cards per seat (6 each
    for 2 players, 5 otherwise); ``crib_card`` is the card dealt straight to the crib in 3-player
    games. Cards may be ids or strings.
    """

    dealer: int | None
    hands: Sequence[Sequence[int | str]]
    starter: int | str
    crib_card: int | str | None = None

    def normalised(self, rules: Rules) -> Deal:
        """Validate against ``rules`` and return the deal with card ids."""
        n = rules.num_players
        if self.dealer is not None and not (type(self.dealer) is int and 0 <= self.dealer < n):
            raise ValueError(f"deal dealer must be None or a seat 0..{n - 1}, got {self.dealer!r}")
        if isinstance(self.hands, str | bytes) or not isinstance(self.hands, Sequence) or any(
                isinstance(h, bytes) or not isinstance(h, Sequence | str) for h in self.hands):
            raise ValueError(f"deal hands must be a list of {n} hands (lists of cards), got "
                             f"{self.hands!r}")
        if len(self.hands) != n:
            raise ValueError(f"a deal for {n} players needs {n} hands, got {len(self.hands)}")
        hands = [C.parse_many(h) for h in self.hands]
        for seat, hand in enumerate(hands):
            if len(hand) != rules.hand_size:
                raise ValueError(f"seat {seat} must be dealt {rules.hand_size} cards, got "
                                 f"{len(hand)}: {C.to_str_many(hand)}")
        starter = C.parse(self.starter)
        if n == 3:
            if self.crib_card is None:
                raise ValueError("a 3-player deal needs crib_card (the card dealt to the crib)")
            crib_card: int | None = C.parse(self.crib_card)
        elif self.crib_card is not None:
            raise ValueError(f"crib_card is only dealt in 3-player games, got {self.crib_card!r}")
        else:
            crib_card = None
        used = [c for h in hands for c in h] + [starter] + ([crib_card] if n == 3 else [])
        if len(set(used)) != len(used):
            dup = sorted({c for c in used if used.count(c) > 1})
            raise ValueError(f"a deal uses a card twice: {C.to_str_many(dup)}")
        return Deal(self.dealer, [list(h) for h in hands], starter, crib_card)

    def to_dict(self) -> dict[str, Any]:
        def fmt(c: int | str) -> str:
            return C.to_str(C.parse(c))
        return {
            "dealer": self.dealer,
            "hands": [[fmt(c) for c in h] for h in self.hands],
            "starter": fmt(self.starter),
            "crib_card": None if self.crib_card is None else fmt(self.crib_card),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Deal:
        """The deal of a :meth:`to_dict` record (keys ``hands`` and ``starter``; ``dealer`` and
        ``crib_card`` optional); other keys or shapes are refused with a ValueError."""
        if not isinstance(data, dict):
            raise ValueError(f"a deal is a Deal or a dict with 'hands' and 'starter', got "
                             f"{data!r}")
        missing = [k for k in ("hands", "starter") if k not in data]
        unknown = sorted(set(map(str, data)) - {"dealer", "hands", "starter", "crib_card"})
        if missing or unknown:
            problem = ("missing " + ", ".join(missing)) if missing else \
                ("unknown key(s) " + ", ".join(unknown))
            raise ValueError(f"a deal dict needs the keys 'hands' and 'starter' (optional: "
                             f"'dealer', 'crib_card'): {problem} in {data!r}")
        return cls(data.get("dealer"), data["hands"], data["starter"], data.get("crib_card"))


def as_deal(deal: Any) -> Deal:
    """A :class:`Deal`, or a dict record of one (:meth:`Deal.from_dict`); nothing else."""
    if isinstance(deal, Deal):
        return deal
    if isinstance(deal, dict):
        return Deal.from_dict(deal)
    raise ValueError(f"each deal must be a Deal or a dict with 'hands' and 'starter', got "
                     f"{deal!r}")
