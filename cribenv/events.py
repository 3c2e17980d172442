"""The game's events: a typed log of everything that happens, public and hidden.

:meth:`cribenv.game.Game.step` returns the events a card caused and :attr:`Game.events` keeps
them all; the web table, the terminal game and the replays read them. NamedTuples, because the
engine creates them on its hot path. Every name here is also importable from
:mod:`cribenv.game`.

    >>> from cribenv.game import Game
    >>> game = Game(seed=0)
    >>> type(game.events[-1]).__name__, event_to_dict(game.events[-1])["type"]
    ('Dealt', 'Dealt')
"""

from __future__ import annotations

from typing import Any, NamedTuple

from cribenv import cards as C
from cribenv.scoring import Breakdown, PegBreakdown, peg_breakdown, score_hand_breakdown

__all__ = ["Cut", "Dealt", "Discarded", "Event", "GameOver", "Go", "HandEnd", "Muggins",
           "Played", "SeriesEnd", "ShowScored", "StarterTurned", "event_to_dict"]


class Cut(NamedTuple):
    """The cut for first deal: ``cards[i]`` is the card seat i cut in each round (ties re-cut)."""
    rounds: tuple[tuple[int | None, ...], ...]
    dealer: int


class Dealt(NamedTuple):
    """A new hand was dealt (the cards are in the game state, not in the public event)."""
    hand_number: int
    dealer: int


class Discarded(NamedTuple):
    """``seat`` laid ``card`` away to the crib (hidden from the other seats)."""
    seat: int
    card: int


class StarterTurned(NamedTuple):
    """The starter was turned; ``heels`` is 2 (to the dealer) if it is a Jack."""
    card: int
    dealer: int
    heels: int


class Played(NamedTuple):
    """``seat`` laid ``card``; the count is now ``count``; the card scored ``points``."""
    seat: int
    card: int
    count: int
    points: int
    series: tuple[int, ...]

    @property
    def breakdown(self) -> PegBreakdown:
        return peg_breakdown(self.series)


class Go(NamedTuple):
    """``seat`` could not lay a card and said Go (applied by the engine)."""
    seat: int
    count: int


class SeriesEnd(NamedTuple):
    """The count reset. ``reason`` is ``"go"``, ``"31"`` or ``"last card"``; ``points`` (to
    ``seat``, who laid the last card) excludes the 2 for 31, already in the :class:`Played`."""
    seat: int
    points: int
    reason: str


class ShowScored(NamedTuple):
    """A hand (or the crib, ``is_crib``) was counted in the show for ``seat``."""
    seat: int
    is_crib: bool
    cards: tuple[int, ...]
    starter: int
    points: int

    @property
    def breakdown(self) -> Breakdown:
        return score_hand_breakdown(list(self.cards), self.starter, self.is_crib)


class Muggins(NamedTuple):
    """``seat`` claimed ``claimed`` for its hand (or crib) worth ``points``, or in the play for
    the ``card`` it laid (``card`` is None for a show); ``caller`` called Muggins and took the
    difference: the ``points - claimed`` overlooked, or the ``claimed - points`` of a claim
    above the count (:attr:`cribenv.game.Rules.muggins`; :attr:`taken`)."""
    seat: int
    is_crib: bool
    claimed: int
    points: int
    caller: int
    card: int | None = None

    @property
    def taken(self) -> int:
        """The points ``caller`` took: what was overlooked, or a false count's excess."""
        return abs(self.points - self.claimed)

    @property
    def scored(self) -> int:
        """The points ``seat`` scored: its claim, at most the true count."""
        return min(self.points, self.claimed)


class HandEnd(NamedTuple):
    """The hand is over (all counted, or the game ended during it)."""
    hand_number: int


class GameOver(NamedTuple):
    """A side reached the target."""
    winner: int
    scores: tuple[int, ...]
    game_points: int


Event = Cut | Dealt | Discarded | StarterTurned | Played | Go | SeriesEnd | ShowScored | Muggins \
    | HandEnd | GameOver


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of an event, with cards as strings."""
    out: dict[str, Any] = {"type": type(event).__name__}
    for key, val in event._asdict().items():
        if key in ("card", "starter"):
            val = None if val is None else C.to_str(val)
        elif key in ("cards", "series"):
            val = [C.to_str(c) for c in val]
        elif key == "rounds":
            val = [[None if c is None else C.to_str(c) for c in r] for r in val]
        elif isinstance(val, tuple):
            val = list(val)
        out[key] = val
    return out
