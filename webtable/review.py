"""A finished game reviewed: every decision the person made, what the strongest agent would
have chosen, and what the person's choice cost.

:func:`review_game` replays a game's record (:meth:`cribenv.game.Game.to_record`) once, and at
each decision of the person's seat with a choice (forced cards are skipped; Muggins claims are
not reviewed) values the options:

* **the discard** (the two cards laid away, one decision): the exact expected points of all 15
  throws (:func:`cribenv.discard.analyse_discards`: hand + crib for the dealer, hand - crib for
  the pone); the cost is ``best.expected - chosen.expected``, in points;
* **a card in the play**: the search agent (``search:ppo:shipped?playouts=200``, the strongest
  agent of the project: :data:`agents.advice.PLAY_SPEC`) asked at the person's view: its card,
  and each legal card's mean chance to win over its playouts; the cost is ``max(values) -
  values[chosen]``, in percentage points of the chance to win. The search is seeded by the
  game's seed and the move's index, so a review comes out the same every time.

The worst three (:attr:`Review.worst`) are ranked on one scale, the chance to win: a discard's
points are converted at the scores of its hand (:func:`points_as_win`: the win-probability
table :mod:`agents.winprob` with the score moved by the points), so a point given up in a
close race near the end counts for more than one at the start or in a lost cause.

Only 2-player games are reviewed (the discard analysis and the win-probability table are for
two); a 3- or 4-player game gives a review with no decisions and a ``note`` saying so.

    >>> from cribenv.game import Deal, Game, Rules
    >>> deal = Deal(1, ["5H 5S 9C TD JH QS", "AC 2C 3D 4D 7H KS"], "8D")
    >>> game = Game(Rules(), seed=1, deals=[deal])
    >>> for card in "5H 5S AC 2C".split():   # the pone throws its fives away
    ...     _ = game.step(card)
    >>> review = review_game(game.to_record(), plays=False)
    >>> d = review.decisions[0]
    >>> d.kind, d.chosen, d.best, round(d.cost, 2)
    ('discard', '5H 5S', '9C QS', 11.61)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.advice import search_values, strongest_agent
from cribenv import cards as C
from cribenv.discard import analyse_discards
from cribenv.game import Game, Phase

__all__ = ["Review", "Reviewed", "points_as_win", "review_game"]

WORST = 3


@dataclass(frozen=True)
class Reviewed:
    """One decision of the person: the position, their choice, the strongest agent's, and the
    options with their values.

    ``move`` is the index of the decision's (first) action in the record: the replay at
    ``?step=move`` shows the position before it. ``cost`` is in the decision's own unit
    (:attr:`unit`: expected points for a discard, percentage points of the chance to win for a
    card of the play); ``win_cost`` is the cost as chance to win (percentage points; a
    discard's points converted by :func:`points_as_win`), what the worst three are ranked by.
    ``options``: discard ``{"throw", "keep", "hand", "crib", "value"}`` (expected points),
    play ``{"card", "value"}`` (chance to win, percent), best first."""

    move: int
    hand_number: int
    kind: str                   # "discard" or "play"
    chosen: str                 # "5H 5S" (the throw) or "7C"
    best: str
    cost: float
    win_cost: float
    options: list[dict[str, Any]]
    hand: list[int]             # the person's cards before the decision
    series: list[int]           # the play: the cards of the current series, in order
    count: int
    starter: int | None
    scores: list[int]           # by side, before the decision
    dealer: bool                # whether the person deals this hand

    @property
    def unit(self) -> str:
        return "points" if self.kind == "discard" else "% to win"

    @property
    def matched(self) -> bool:
        """Whether the person chose as well as the strongest agent (cost 0)."""
        return self.cost < 1e-9


@dataclass
class Review:
    """The decisions of one game (in the order made), and a ``note`` on what was left out."""

    num_players: int
    human: int
    decisions: list[Reviewed] = field(default_factory=list)
    plays_reviewed: bool = True
    note: str = ""
    seconds: float = 0.0

    @property
    def worst(self) -> list[Reviewed]:
        """The three decisions that cost the most chance to win (none that cost nothing)."""
        ranked = sorted((d for d in self.decisions if not d.matched),
                        key=lambda d: (-d.win_cost, -d.cost, d.move))
        return ranked[:WORST]

    def totals(self) -> dict[str, Any]:
        """How many decisions of each kind, how many matched, and the cost of each kind."""
        discards = [d for d in self.decisions if d.kind == "discard"]
        plays = [d for d in self.decisions if d.kind == "play"]
        return {"decisions": len(self.decisions), "discards": len(discards),
                "plays": len(plays), "matched": sum(d.matched for d in self.decisions),
                "discard_points": sum(d.cost for d in discards),
                "play_win": sum(d.cost for d in plays),
                "win": sum(d.win_cost for d in self.decisions)}


def points_as_win(points: float, own: int, other: int, dealer: bool,
                  target: int = 121) -> float:
    """What ``points`` given up are worth as a chance to win (0..1), to a side with ``own``
    points against ``other`` at the start of a hand it deals (``dealer``) or not: the
    win-probability table (:func:`agents.winprob.seat_wins`, linear between whole points)
    from ``points / 2`` above the side's score to ``points / 2`` below it, averaged with the
    same shift of the other side's score the other way (a throw's points are the side's hand,
    and its own crib or the other side's).

        >>> 0.01 < points_as_win(1, 0, 0, True) < 0.03     # about 2% a point at the start
        True
        >>> points_as_win(4, 30, 90, False) < 0.001          # a lost cause: points change little
        True
        >>> points_as_win(40, 100, 100, True) <= 1.0
        True
    """
    from agents.winprob import seat_wins

    def chance(mine: float, theirs: float) -> float:
        m0, t0 = int(mine), int(theirs)
        fm, ft = mine - m0, theirs - t0
        w = seat_wins(np.array([[m0, m0 + 1]]).T, np.array([t0, t0 + 1]), dealer, target)
        return float((1 - fm) * ((1 - ft) * w[0, 0] + ft * w[0, 1])
                     + fm * ((1 - ft) * w[1, 0] + ft * w[1, 1]))

    low = max(own - points / 2, 0)           # the window moves up, not shrinks, at 0
    mine = chance(low + points, other) - chance(low, other)
    low = max(other - points / 2, 0)
    theirs = chance(own, low) - chance(own, low + points)
    return max(0.0, (mine + theirs) / 2)


def _discard(game: Game, seat: int, move: int, thrown: list[int]) -> Reviewed:
    view = game.view(seat)
    options = analyse_discards(view.hand, is_dealer=view.crib_is_own)
    chosen = next(o for o in options if set(o.throw) == set(thrown))
    best = options[0]
    cost = max(0.0, best.expected - chosen.expected)
    rules = game.rules
    side = rules.side_of(seat)
    other = max(s for i, s in enumerate(game.scores) if i != side)
    win = points_as_win(cost, game.scores[side], other, view.crib_is_own, rules.target)
    return Reviewed(
        move, game.hand_number, "discard", C.to_str_many(chosen.throw),
        C.to_str_many(best.throw), cost, 100.0 * win,
        [{"throw": C.to_str_many(o.throw), "keep": C.to_str_many(o.keep), "hand": o.hand_ev,
          "crib": o.crib_ev, "value": o.expected} for o in options],
        list(view.hand), [], 0, None, list(game.scores), view.crib_is_own)


def _play(game: Game, seat: int, move: int, chosen: int, seed: int) -> Reviewed:
    view = game.view(seat)
    got = search_values(view, game.legal_actions(), seed, move)
    assert got is not None   # review_game checked that the search runs
    card, value = got
    values = list(value.values())
    cost = 100.0 * max(0.0, max(values) - value[chosen])
    options = sorted(({"card": C.to_str(c), "value": 100.0 * v} for c, v in value.items()),
                     key=lambda o: (-o["value"], o["card"] != C.to_str(card)))
    return Reviewed(move, game.hand_number, "play", C.to_str(chosen), C.to_str(card), cost,
                    cost, options, list(view.hand), list(view.series_cards), view.count,
                    view.starter, list(game.scores), view.crib_is_own)


def review_game(record: dict[str, Any], human: int = 0, plays: bool = True) -> Review:
    """The review of the person in seat ``human`` in the game of ``record`` (see the module
    docstring); ``plays=False`` reviews the discards only. The record is replayed once, its
    Muggins claims with it; a play is reviewed only where the search agent can run (the
    ``vector`` extra), else the ``note`` says so."""
    start = time.perf_counter()
    rules = record.get("rules", {})
    n = int(rules.get("num_players", 2))
    review = Review(n, human)
    if n != 2:
        review.plays_reviewed = False
        review.note = (f"Only 2-player games are reviewed (the discard analysis and the chance "
                       f"to win are worked out for two players); this game had {n}.")
        return review
    if plays and strongest_agent() is None:
        plays = False
        review.note = ("The cards of the play are not reviewed here: the search agent needs "
                       "the batched engine (the 'vector' extra). The discards are.")
    review.plays_reviewed = plays
    actions = [C.parse(a) for a in record["actions"]]
    seed = int(record.get("seed") or 0)
    for i, game in Game.replay_record(record):   # the position before move i, claims applied
        card = actions[i]
        if game.current_player == human:
            if game.phase is Phase.DISCARD and not game.discards[human]:
                review.decisions.append(_discard(game, human, i, actions[i:i + 2]))
            elif (plays and game.phase is Phase.PLAY and game.rules.target in (121, 61)
                  and len(game.legal_actions()) > 1):
                review.decisions.append(_play(game, human, i, card, seed))
    review.seconds = time.perf_counter() - start
    return review
