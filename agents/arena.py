"""The one loop that drives a game with agents, and one game between agents with every point
accounted for.

:func:`run_game` drives a :class:`cribenv.game.Game` from where it stands: a bot (anything with
``choose``, :mod:`agents.base`) is handed ``game.view(seat)`` and the legal cards, a policy
(only ``act``) the observation dict the environment would give, ``{"observation":
encode_game(game, seat), "action_mask": int8[52]}``. Both see exactly what the seat may know,
and a bot needs no encoding round trip. The tournament, training evaluation, imitation,
rollouts, the pegging-value fit and ``cribenv play`` all drive their games through it.

:func:`play_game` plays one whole game with it (the tournament's unit):

    >>> from agents import make_agent
    >>> from cribenv.game import Rules
    >>> result = play_game([make_agent("random", seed=1), make_agent("random", seed=2)],
    ...                    Rules(), seed=7, first_dealer=0)
    >>> sum(result.points(seat) for seat in (0, 1)) == sum(result.scores)
    True

Point accounting (:class:`GameResult`): every scoring unit of the game's event log is credited
to the seat that scored it, in one of three buckets:

* ``pegging``: points scored in the play (:class:`~cribenv.game.Played` points, i.e. fifteens,
  pairs, runs and 31, plus :class:`~cribenv.game.SeriesEnd` go / last-card points) **and his
  heels** (the 2 points a dealer scores when the starter is a Jack, counted at the cut, before
  the play; cribbage players peg them at once, so they are counted with the pegging);
* ``hand``: the seat's own hand in the show (:class:`~cribenv.game.ShowScored`, not the crib);
* ``crib``: the crib in the show (``is_crib``), credited to the dealer.

The game ends the moment a side reaches the target, often mid-hand: the unit that takes it
over is counted whole (as the engine does), and nothing after it is scored. With
``must_peg_out_exactly`` a unit that would overshoot scores nothing
(:meth:`cribenv.game.Rules.unit_scores`), and it is not counted either. So for every side, the
splits of its seats sum to its final score exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np

from agents.base import ask
from cribenv import cards as C
from cribenv.game import (
    Dealt,
    Game,
    IllegalActionError,
    Played,
    Rules,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)
from cribenv.observation import encode_game

__all__ = ["BotFailure", "GameResult", "IllegalAgentActionError", "agent_name", "play_game",
           "run_game"]


class IllegalAgentActionError(IllegalActionError):
    """An agent chose a card that is not legal; ``agent``, ``seat`` and ``card`` say which."""

    def __init__(self, message: str, agent: str, seat: int, card: Any) -> None:
        super().__init__(message)
        self.agent = agent
        self.seat = seat
        self.card = card


class BotFailure(RuntimeError):
    """A bot could not go on with the game (an external bot's timeout, crash or broken
    protocol, :mod:`agents.external`): :func:`play_game` scores the game as its loss.
    ``agent`` names it, ``kind`` says what went wrong (``"timeout"``, ``"crash"``,
    ``"malformed"``, ``"illegal"``, ``"output"``, ``"version"``, ``"start"``), ``seat`` is its
    seat when known."""

    def __init__(self, message: str, agent: str, kind: str, seat: int | None = None) -> None:
        super().__init__(message)
        self.agent = agent
        self.kind = kind
        self.seat = seat


@dataclass
class GameResult:
    """The outcome of one game, with every point split by source (JSON-able via ``to_dict``).

    Lists indexed by seat: ``agents``, ``seat_sides``, ``pegging``, ``hand``, ``crib``,
    ``hands_dealt``, ``hands_as_dealer``. Indexed by side: ``scores``. ``winner`` is a side
    (the same as the seat in 2-player games); ``first_dealer`` is the seat that dealt the first
    hand (the cut decides it when :func:`play_game` is given ``None``). ``hands`` counts the
    hands dealt, including the last one, which the end of the game usually cuts short.
    ``forfeit`` is ``None``, or where a bot could not go on (:class:`BotFailure`) ``{"seat",
    "agent", "kind", "detail"}``: the game stopped there, the scores are as they stood, and
    the other side won (with 3 players the other side ahead, the lower side on a tie), for
    one game point.
    """

    seed: int | None
    first_dealer: int
    agents: list[str]
    winner: int | None
    scores: list[int]
    game_points: int
    hands: int
    pegging: list[int]
    hand: list[int]
    crib: list[int]
    hands_dealt: list[int]
    hands_as_dealer: list[int]
    seat_sides: list[int] = field(default_factory=list)
    decisions: int = 0
    forfeit: dict[str, Any] | None = None

    def points(self, seat: int) -> int:
        """All points scored by ``seat`` (pegging + hand + crib)."""
        return self.pegging[seat] + self.hand[seat] + self.crib[seat]

    @property
    def winner_seats(self) -> list[int]:
        """The seats on the winning side (empty when there is no winner)."""
        if self.winner is None:
            return []
        return [s for s, side in enumerate(self.seat_sides) if side == self.winner]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameResult:
        return cls(**data)


def agent_name(agent: Any) -> str:
    """The display name of an agent: its ``name`` attribute, else its class name."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


def run_game(game: Game, players: Sequence[Any], *, names: Sequence[str] | None = None,
             on_decision: Callable[[int, list[int], int], None] | None = None,
             until: Callable[[Game], bool] | None = None) -> int:
    """Drive ``game`` from where it stands with ``players[seat]`` choosing for each seat, until
    the game is over or ``until(game)`` holds before a decision; return the decisions made.

    A player with ``choose`` (a bot) is asked by the rule of :func:`agents.base.ask` with
    ``game.view(seat)``; a player with only ``act`` (a policy) gets the environment's
    observation dict. ``on_decision(seat, legal, card)`` runs before each card is laid (the game
    still shows the position it was chosen in). Nothing is reset: a caller starting a game
    calls ``reset()`` itself (as :func:`play_game` does).

    Raises :class:`IllegalAgentActionError` (a ``ValueError``) naming the player (``names``,
    default each player's ``name``) and the seat when a player returns a card that is not
    legal; the game is unchanged then.
    """
    if names is None:
        names = [agent_name(p) for p in players]
    is_bot = [callable(getattr(p, "choose", None)) for p in players]
    for seat, player in enumerate(players):
        attach = getattr(player, "attach", None)
        if callable(attach):   # a bot that follows the game's events (agents.external)
            attach(game, seat)
    view = game.view
    decisions = 0
    while True:
        seat = game.current_player
        if seat is None or (until is not None and until(game)):
            return decisions
        legal = game.legal_actions()
        if is_bot[seat]:
            choice = ask(players[seat], legal, partial(view, seat))
        else:
            mask = np.zeros(52, np.int8)
            mask[legal] = 1
            choice = players[seat].act({"observation": encode_game(game, seat),
                                        "action_mask": mask})
        try:
            card = int(choice)
        except (TypeError, ValueError):
            card = -1
        if card not in legal or card != choice:
            raise IllegalAgentActionError(
                f"agent {names[seat]!r} (seat {seat}) chose {_describe(choice)}, which is not "
                f"legal in the {game.phase.name.lower()} phase (count {game.count}); legal: "
                f"{C.to_str_many(legal)}", names[seat], seat, choice)
        if on_decision is not None:
            on_decision(seat, legal, card)
        game.step(card)
        decisions += 1


def play_game(agents: Sequence[Any], rules: Rules | None = None, seed: int | None = 0,
              first_dealer: int | None = None, *,
              names: Sequence[str] | None = None) -> GameResult:
    """Play one game of ``rules`` with ``agents[seat]`` in each seat and return its result.

    ``seed`` fixes the deals (the same seed with the agents swapped is a duplicate game: each
    seat receives the same cards); ``first_dealer`` is the seat that deals first (``None``: cut
    for it). ``reset()`` is called on each agent that has one before the game. ``names``
    (default: each agent's ``name``) label the seats in the result and in error messages.
    Agents are bots or policies, driven by :func:`run_game`.

    Raises :class:`IllegalAgentActionError` (a ``ValueError``) naming the agent and the seat
    when an agent returns a card that is not legal.
    """
    rules = rules if rules is not None else Rules()
    n = rules.num_players
    if len(agents) != n:
        raise ValueError(f"a {n}-player game needs {n} agents, got {len(agents)}")
    if names is None:
        names = [agent_name(a) for a in agents]
    elif len(names) != n:
        raise ValueError(f"expected {n} names (one per seat), got {len(names)}")
    names = [str(x) for x in names]
    for agent in agents:
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()
    game = Game(rules, seed=seed, first_dealer=first_dealer)
    forfeit = None
    try:
        run_game(game, agents, names=names)
    except BotFailure as failure:
        seat = failure.seat if failure.seat is not None else next(
            (s for s, name in enumerate(names) if name == failure.agent), 0)
        forfeit = {"seat": seat, "agent": names[seat], "kind": failure.kind,
                   "detail": str(failure)}
    for agent in agents:
        finish = getattr(agent, "finish", None)
        if callable(finish):
            finish(game, forfeit)
    return _result(game, list(names), seed, len(game.actions), forfeit)


def _describe(choice: Any) -> str:
    try:
        card = int(choice)
        if card == choice and 0 <= card < 52:
            return f"{C.to_str(card)} (card {card})"
    except (TypeError, ValueError):
        pass
    return f"{choice!r} (not a card id 0..51)"


def _result(game: Game, names: list[str], seed: int | None, decisions: int,
            forfeit: dict[str, Any] | None = None) -> GameResult:
    rules = game.rules
    n = rules.num_players
    side_of = [rules.side_of(s) for s in range(n)]
    pegging = [0] * n
    hand = [0] * n
    crib = [0] * n
    as_dealer = [0] * n
    running = [0] * rules.num_sides
    first_dealer: int | None = None
    hands = 0
    for ev in game.events:
        kind = type(ev)
        if kind is Dealt:
            hands += 1
            as_dealer[ev.dealer] += 1
            if first_dealer is None:
                first_dealer = ev.dealer
            continue
        if kind is Played or kind is SeriesEnd:
            seat, pts, bucket = ev.seat, ev.points, pegging
        elif kind is StarterTurned:
            seat, pts, bucket = ev.dealer, ev.heels, pegging
        elif kind is ShowScored:
            seat, pts, bucket = ev.seat, ev.points, (crib if ev.is_crib else hand)
        else:
            continue
        if not pts:
            continue
        side = side_of[seat]
        if not rules.unit_scores(running[side], pts):
            continue    # the engine scores nothing for it (must peg out exactly)
        running[side] += pts
        bucket[seat] += pts
    if running != list(game.scores):   # pragma: no cover - an engine/arena disagreement
        raise AssertionError(f"point accounting {running} disagrees with the scores "
                             f"{game.scores}")
    assert first_dealer is not None
    winner, game_points = game.winner, game.game_points
    if forfeit is not None:
        loser = side_of[forfeit["seat"]]
        winner = max((s for s in range(rules.num_sides) if s != loser),
                     key=lambda s: (running[s], -s))
        game_points = 1
    return GameResult(
        seed=seed, first_dealer=first_dealer, agents=names, winner=winner,
        scores=list(game.scores), game_points=game_points, hands=hands,
        pegging=pegging, hand=hand, crib=crib, hands_dealt=[hands] * n,
        hands_as_dealer=as_dealer, seat_sides=side_of, decisions=decisions, forfeit=forfeit,
    )
