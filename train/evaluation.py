"""Evaluation of an agent against the heuristic bots, with the tournament's duplicate deals.

:func:`evaluate` plays the games of one tournament pair (``agents.tournament.schedule``: each
deal twice, seats swapped, the same deal seeds and agent seeds as ``cribenv tournament``) and
reports the pair's win rate with the tournament's interval (Wilson with the effective sample
size over duplicate units) and its net match points per game. The agent under test is an
object (e.g. the learner in memory, :class:`train.export.LearnerAgent`), not a spec.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import make_agent
from agents.tournament import ROW_FIELDS, AgentSpec, pair_stats, play_task, schedule
from cribenv.game import Rules
from train.config import TrainConfig

#: The tournament seed of the evaluation games during training (the same games every time).
EVAL_SEED = 10_000_000
#: The entrant name of the agent under test.
AGENT_LABEL = "learner"


def evaluate(agent, opponent_spec: str, games: int, seed: int, target: int) -> dict[str, float]:
    """Duplicate games (each deal twice, seats swapped) of ``agent`` against a bot.

    ``games`` is rounded down to an even number. Returns ``win_rate`` with its interval
    ``win_lo`` .. ``win_hi``, ``net_points`` (match points per game) and ``games``.
    """
    me = AgentSpec(AGENT_LABEL, AGENT_LABEL)
    opponent = AgentSpec(opponent_spec, opponent_spec)

    def make(entrant: AgentSpec, agent_seed: int):
        return agent if entrant == me else make_agent(entrant.spec, seed=agent_seed)

    rules = Rules(num_players=2, target=target)
    deals = games // 2
    rows = [play_task(task, rules, make) for task in schedule([me, opponent], 2 * deals, seed)
            ] if deals else []
    stats = pair_stats(AGENT_LABEL, opponent_spec,
                       [tuple(r[f] for f in ROW_FIELDS) for r in rows])
    return {"win_rate": stats.win_rate_a.value, "win_lo": stats.win_rate_a.low,
            "win_hi": stats.win_rate_a.high, "net_points": stats.net_points_a.value,
            "games": stats.games}


def evaluation_row(agent, config: TrainConfig, step: int,
                   record: Callable[[str, float], None] | None = None) -> dict[str, Any]:
    """One row of ``eval.csv``: ``step`` and, per heuristic of ``config``, the win rate, its
    interval and the net points (rounded to 4 places). ``record(key, value)`` also receives
    each unrounded value (e.g. an SB3 logger's ``record``), keyed ``eval/{spec}_{name}``."""
    row: dict[str, Any] = {"step": step}
    for spec in config.heuristics:
        res = evaluate(agent, spec, config.eval_games, seed=EVAL_SEED, target=config.target)
        for key in ("win_rate", "win_lo", "win_hi", "net_points"):
            row[f"{spec}_{key}"] = round(res[key], 4)
            if record is not None:
                record(f"eval/{spec}_{key}", res[key])
    return row


def append_csv(path: Path, row: dict[str, Any]) -> None:
    """Append ``row`` to a CSV file, writing the header first when the file is new."""
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
