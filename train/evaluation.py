"""Evaluation of an agent against the heuristic bots, with the tournament's duplicate deals.

:func:`evaluate` plays the games of one tournament pair (``tournament.schedule``: each
deal twice, seats swapped, the same deal seeds and agent seeds as ``cribenv tournament``) and
reports the pair's win rate with the tournament's interval (Wilson with the effective sample
size over duplicate units) and its net match points per game. :func:`evaluate_table` does the
same for 3 and 4 players (the agent on one side, the bot in every other seat, each deal played
once per side). The agent under test is an object (e.g. the learner in memory,
:class:`train.export.LearnerAgent`), not a spec.
"""

from __future__ import annotations

import csv
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from agents import make_agent
from agents.arena import BotFailure, play_game
from cribenv.discard import analyse_discards
from cribenv.game import Game, Phase, Rules
from tournament import ROW_FIELDS, AgentSpec, pair_stats, play_task, schedule
from tournament.schedule import agent_seed, deal_seed
from tournament.statistics import proportion_estimate
from train.config import TrainConfig

#: The tournament seed of the evaluation games during training (the same games every time).
EVAL_SEED = 10_000_000
#: The entrant name of the agent under test.
AGENT_LABEL = "learner"
#: Deals of the throw diagnostic of each 2-player evaluation (both seats' first throws).
THROW_DEALS = 500


def throws(agent, seeds) -> list[tuple[bool, tuple[int, ...], tuple[int, ...]]]:
    """(is_dealer, six cards, cards thrown) of ``agent`` from both seats of each seed's first
    hand (2 players; the other seat throws as greedy, which only fixes the order of the
    decisions: a seat's throw does not see the other's)."""
    greedy = make_agent("greedy")
    out = []
    for s in seeds:
        for seat in (0, 1):
            game = Game(Rules(), seed=s)
            six = tuple(sorted(game.hands[seat]))
            while game.phase is Phase.DISCARD:
                p = game.current_player
                who = agent if p == seat else greedy
                game.step(who.choose(game.view(p), game.legal_actions()))
            out.append((game.dealer == seat, six, tuple(sorted(game.discards[seat]))))
    return out


def throw_quality(rows) -> dict[str, dict[str, float]]:
    """Per role (``dealer``, ``pone``, ``all``) the mean hand, crib and expected value of the
    throws :func:`throws` made, by :func:`cribenv.discard.analyse_discards` (the exact means
    over starters, the crib's other two cards random), the mean ``regret`` (the best option's
    expected value minus the one thrown; pegging ignored) and ``best`` (the share of throws
    that were the best option). A diagnostic of the evaluation, never a training signal."""
    result: dict[str, dict[str, list[float]]] = {}
    for dealer, six, thrown in rows:
        options = analyse_discards(list(six), dealer)
        chosen = next(o for o in options if tuple(sorted(o.throw)) == thrown)
        for role in ("dealer" if dealer else "pone", "all"):
            r = result.setdefault(role, {"hand": [], "crib": [], "expected": [], "regret": [],
                                         "best": []})
            r["hand"].append(chosen.hand_ev)
            r["crib"].append(chosen.crib_ev)
            r["expected"].append(chosen.expected)
            r["regret"].append(options[0].expected - chosen.expected)
            r["best"].append(float(chosen is options[0]))
    return {role: {k: float(np.mean(v)) for k, v in r.items()} for role, r in result.items()}


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
    forfeits = [f for f in (json.loads(r["result"])["forfeit"] for r in rows)
                if f and f["agent"] != AGENT_LABEL]
    return {"win_rate": stats.win_rate_a.value, "win_lo": stats.win_rate_a.low,
            "win_hi": stats.win_rate_a.high, "net_points": stats.net_points_a.value,
            "games": stats.games, **_forfeits(forfeits)}


def _forfeits(forfeits: list[dict[str, Any]]) -> dict[str, Any]:
    """``forfeits`` (the games a bot could not finish) and ``forfeit`` (the first one's
    detail, or None)."""
    return {"forfeits": len(forfeits), "forfeit": forfeits[0]["detail"] if forfeits else None}


def evaluate_table(agent, opponent_spec: str, num_players: int, deals: int, seed: int,
                   target: int) -> dict[str, float]:
    """Duplicate games at a table of ``num_players``: ``agent`` plays every seat of one side
    (one seat in 2 and 3 players, the two partners' seats in 4), the bot every other seat.

    Each deal (the tournament's deal seeds, first dealer ``deal % num_players``) is played once
    per side, so the agent holds every seat's cards once. Returns ``win_rate`` (games won by the
    agent's side) with its interval ``win_lo`` .. ``win_hi`` (deals are the units),
    ``fair_share`` (1 / sides: what an agent as strong as the bot wins), ``net_points`` (the
    win reward of the env per game: +game points when the agent's side wins, minus the game
    points shared by the losing sides otherwise) and ``games``.

    >>> from agents import make_agent
    >>> res = evaluate_table(make_agent("greedy"), "random", 3, deals=2, seed=1, target=61)
    >>> res["games"], round(res["fair_share"], 3)
    (6, 0.333)
    """
    rules = Rules(num_players=num_players, target=target)
    sides = rules.num_sides
    wins = []
    net = 0.0
    forfeits = []
    for deal in range(deals):
        game_seed = deal_seed(seed, deal)
        won = 0
        for side in range(sides):
            seats = [agent if rules.side_of(s) == side else
                     make_agent(opponent_spec, seed=agent_seed(game_seed, s))
                     for s in range(num_players)]
            result = play_game(seats, rules, seed=game_seed, first_dealer=deal % num_players)
            mine = result.winner == side
            if result.forfeit and rules.side_of(result.forfeit["seat"]) != side:
                forfeits.append(result.forfeit)
            won += mine
            net += result.game_points if mine else -result.game_points / (sides - 1)
        wins.append(won)
    est = proportion_estimate(wins, [sides] * deals)
    games = deals * sides
    return {"win_rate": est.value, "win_lo": est.low, "win_hi": est.high,
            "fair_share": 1.0 / sides, "net_points": net / games if games else float("nan"),
            "games": games, **_forfeits(forfeits)}


def evaluation_row(agent, config: TrainConfig, step: int,
                   record: Callable[[str, float], None] | None = None) -> dict[str, Any]:
    """One row of ``eval.csv``: ``step`` and, per heuristic of ``config``, the win rate, its
    interval and the net points (rounded to 4 places); with ``config.num_players`` 3 or 4, at
    the table of :func:`evaluate_table`. ``record(key, value)`` also receives
    each unrounded value (e.g. an SB3 logger's ``record``), keyed ``eval/{spec}_{name}``."""
    row: dict[str, Any] = {"step": step}
    players = getattr(config, "num_players", 2)
    for spec in config.heuristics:
        if players == 2:
            res = evaluate(agent, spec, config.eval_games, seed=EVAL_SEED, target=config.target)
        else:  # about eval_games games: each deal is played once per side
            sides = Rules(num_players=players).num_sides
            res = evaluate_table(agent, spec, players, max(1, config.eval_games // sides),
                                 seed=EVAL_SEED, target=config.target)
        if players != 2:
            row["fair_share"] = round(res["fair_share"], 4)
        if res["forfeits"]:   # each counted as the bot's loss: said, so it is not read as a win
            print(f"warning: the evaluation bot {spec!r} forfeited {res['forfeits']} of "
                  f"{res['games']} games, each counted as its loss ({res['forfeit']}); its win "
                  f"rate at step {step:,} is not a measure of the learner", file=sys.stderr)
        for key in ("win_rate", "win_lo", "win_hi", "net_points"):
            row[f"{spec}_{key}"] = round(res[key], 4)
            if record is not None:
                record(f"eval/{spec}_{key}", res[key])
    if players == 2:   # the throw diagnostic: exact expected values of the agent's throws
        q = throw_quality(throws(agent, range(EVAL_SEED, EVAL_SEED + THROW_DEALS)))["all"]
        for key in ("regret", "best", "hand"):
            row[f"throw_{key}"] = round(q[key], 4)
            if record is not None:
                record(f"eval/throw_{key}", q[key])
    return row


def check_bots(specs: list[str], num_players: int = 2, target: int = 121) -> None:
    """Each evaluation bot of ``specs`` made and asked the first decision of an evaluation
    game (a ``cmd:`` bot is started and greeted): a ValueError naming the spec of one that
    cannot be made or cannot play, so that a run refuses it before it writes anything (a bot
    that forfeits every game would read as the learner winning them all)."""
    for spec in specs:
        try:
            bot = make_agent(spec, seed=0)
        except ValueError as exc:
            raise ValueError(f"the evaluation bot {spec!r} cannot be made: {exc}") from None
        game = Game(Rules(num_players=num_players, target=target), seed=EVAL_SEED)
        seat = game.current_player
        try:
            bot.choose(game.view(seat), game.legal_actions())
        except BotFailure as exc:
            raise ValueError(f"the evaluation bot {spec!r} cannot play: {exc}") from None
        finally:
            close = getattr(bot, "close", None)
            if callable(close):
                close()


T = TypeVar("T")


class Stopped(Exception):
    """A stop was asked for while :func:`run_stoppable` waited: the work was given up."""


def run_stoppable(work: Callable[[], T], stop_requested: Callable[[], bool],
                  poll: float = 0.1) -> T:
    """``work()`` in a thread of its own, which this thread waits for, asking
    ``stop_requested()`` every ``poll`` seconds: once it is true the work is given up
    (:class:`Stopped`) even in the middle of a long call (a search's playouts, a bot's
    answer), so a signal's handler that sets the stop is obeyed within a fraction of a second.
    A given-up ``work`` runs on unwatched until the process ends: it must change nothing
    outside itself. Its exception, if any, is raised here."""
    done: dict[str, Any] = {}

    def target() -> None:
        try:
            done["value"] = work()
        except BaseException as exc:   # handed to the waiting thread
            done["error"] = exc

    thread = threading.Thread(target=target, name="evaluation", daemon=True)
    thread.start()
    while thread.is_alive():
        if stop_requested():
            raise Stopped
        thread.join(poll)
    if "error" in done:
        raise done["error"]
    return done["value"]


def append_csv(path: Path, row: dict[str, Any]) -> None:
    """Append ``row`` to a CSV file, writing the header first when the file is new (or
    empty)."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
