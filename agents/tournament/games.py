"""One game of the schedule, played: the row the results database stores for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.arena import play_game
from agents.base import make_agent
from agents.tournament.schedule import AgentSpec, GameTask, agent_seed
from cribenv.game import Rules


def play_task(task: GameTask, rules: Rules,
              make: Callable[[AgentSpec, int], Any] | None = None) -> dict[str, Any]:
    """Play one game of the schedule; the row the results database stores for it.

    ``make(entrant, seed)`` builds a seat's agent (default: ``make_agent(entrant.spec,
    seed=seed)``); the seed is :func:`agent_seed` of the game and seat.
    """
    seats = task.seats
    if make is None:
        make = _make_entrant
    bots = [make(s, agent_seed(task.game_seed, seat)) for seat, s in enumerate(seats)]
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
    }


def _make_entrant(entrant: AgentSpec, seed: int) -> Any:
    return make_agent(entrant.spec, seed=seed)
