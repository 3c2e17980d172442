"""One game of the schedule, played: the row the results database stores for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agents.arena import play_game
from agents.spec import build
from cribenv.game import Rules
from tournament.schedule import AgentSpec, GameTask, agent_seed


def play_task(task: GameTask, rules: Rules,
              make: Callable[[AgentSpec, int], Any] | None = None) -> dict[str, Any]:
    """Play one game of the schedule; the row the results database stores for it.

    ``make(entrant, seed)`` builds a seat's agent (default: ``agents.spec.build(entrant.bot,
    seed=seed)``, what ``make_agent(entrant.spec, seed=seed)`` builds); the seed is
    :func:`agent_seed` of the game and seat.
    """
    seats = task.seats
    if make is None:
        make = _make_entrant
    bots = [Timed(make(s, agent_seed(task.game_seed, seat))) for seat, s in enumerate(seats)]
    result = play_game(bots, rules, seed=task.game_seed, first_dealer=task.first_dealer,
                       names=[s.label for s in seats])
    winner_seat = result.winner
    return {
        "agent_a": task.agent_a.label, "agent_b": task.agent_b.label, "deal": task.deal,
        "seating": task.seating, "game_seed": task.game_seed,
        "first_dealer": result.first_dealer, "seat0": seats[0].label, "seat1": seats[1].label,
        "winner_seat": winner_seat,
        "winner": None if winner_seat is None else seats[winner_seat].label,
        "score0": result.scores[0], "score1": result.scores[1],
        "game_points": result.game_points, "hands": result.hands,
        "peg0": result.pegging[0], "peg1": result.pegging[1],
        "hand0": result.hand[0], "hand1": result.hand[1],
        "crib0": result.crib[0], "crib1": result.crib[1],
        "dealer0": result.hands_as_dealer[0], "dealer1": result.hands_as_dealer[1],
        "decisions": result.decisions, "result": result.to_json(),
        # the think times: machine-dependent, so kept beside the games (storage.THINK_COLUMNS)
        "seconds0": bots[0].seconds, "seconds1": bots[1].seconds,
        "asked0": bots[0].asked, "asked1": bots[1].asked,
    }


class Timed:
    """An agent that counts the decisions it is asked and the seconds it takes on them; every
    other attribute is the agent's own (a bot stays a bot, a policy a policy).

    >>> from agents import make_agent
    >>> bot = Timed(make_agent("greedy"))
    >>> bot.asked, bot.name, callable(getattr(bot, "choose", None))
    (0, 'greedy', True)
    """

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self.seconds = 0.0
        self.asked = 0
        for method in ("choose", "act"):
            if callable(getattr(agent, method, None)):
                setattr(self, method, self._timed(getattr(agent, method)))

    def _timed(self, call: Callable[..., int]) -> Callable[..., int]:
        def timed(*args: Any) -> int:
            start = time.perf_counter()
            try:
                return call(*args)
            finally:
                self.seconds += time.perf_counter() - start
                self.asked += 1
        return timed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


def _make_entrant(entrant: AgentSpec, seed: int) -> Any:
    return build(entrant.bot, seed=seed)     # the spec read once per entrant, not per game
