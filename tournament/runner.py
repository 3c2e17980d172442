"""Running a tournament: check the entrants, resume from the database, play, report."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Sequence

from agents.spec import build
from cribenv.checks import int_at_least
from cribenv.game import Rules
from tournament.report import TournamentReport, compute_report
from tournament.schedule import AgentSpec, check_games, parse_spec, schedule
from tournament.storage import (
    check_or_store_config,
    check_rows,
    connect,
    database_errors,
    default_db_path,
    done_keys,
    fetch_rows,
    forfeits,
    insert_games,
    think_times,
    tournament_config,
)
from tournament.workers import Rows, play_tasks


def run_tournament(agent_specs: Sequence[str | AgentSpec], games_per_pair: int, workers: int = 1,
                   db_path: str | os.PathLike[str] | None = None, seed: int = 0,
                   rules: Rules | None = None, progress: bool = True, *,
                   bootstrap: int = 500, confidence: float = 0.95, anchor: str | None = None,
                   chunk_size: int | None = None, ray_address: str | None = None
                   ) -> TournamentReport:
    """Play (or resume) a round robin of 2-player duplicate games and report on it.

    ``agent_specs``: ``make_agent`` specs, optionally labelled ``LABEL=SPEC`` (or read:
    :class:`~agents.spec.AgentSpec`); every pair plays
    ``games_per_pair`` (even) games. ``workers`` processes play chunks of games (``1``: in this
    process); results go to the SQLite database ``db_path`` as they arrive (default: a file
    named from the agents and settings, :func:`~tournament.storage.default_db_path`),
    and a database that already holds some of this tournament's games is resumed. Raises
    ``ValueError`` for a bad spec, an odd game count, or a database that holds a different
    tournament.
    ``ray_address``: play the chunks on that Ray cluster instead (``workers`` is then its
    CPU count; :mod:`tournament.ray_workers`).
    """
    rules = rules if rules is not None else Rules()
    if rules.num_players != 2:
        raise ValueError(f"tournaments are 2-player, got rules for {rules.num_players} players")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    check_games(games_per_pair)
    entrants = [s if isinstance(s, AgentSpec) else parse_spec(s) for s in agent_specs]
    if len(entrants) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {len(entrants)}")
    labels = [e.label for e in entrants]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"agent {dup[0]!r} is entered twice; label a second copy, e.g. "
                         f"{dup[0]}2={entrants[labels.index(dup[0])].spec}")
    for e in entrants:   # fail fast on unknown specs and programs that cannot start
        check_agent(e)
    workers = int_at_least(workers, "workers", 1)
    int_at_least(bootstrap, "bootstrap", 0)
    connected = False
    if ray_address is not None:
        from tournament import ray_workers

        connected = ray_workers.join_cluster(ray_address)
        workers = ray_workers.cluster_cpus()
    config = tournament_config(entrants, games_per_pair, seed, rules)
    tasks = schedule(entrants, games_per_pair, seed)
    if db_path is None:
        db_path = default_db_path(config)
    conn = connect(db_path)
    played = 0
    t0 = time.perf_counter()
    try:
        with database_errors(db_path):
            check_or_store_config(conn, config, db_path)
            check_rows(conn, tasks, rules.target, db_path)
            done = done_keys(conn)
        todo = [t for t in tasks if t.key not in done]
        if done and progress:   # said once the stored tournament is known to be this one
            print(f"resuming from {db_path}: {len(tasks) - len(todo)} of {len(tasks)} games "
                  f"already stored are skipped", file=sys.stderr)
        if chunk_size is None:
            chunk_size = max(1, min(32, math.ceil(len(todo) / (workers * 8)))) if todo else 1
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), unit="game",
                   desc="tournament", disable=not progress, dynamic_ncols=True,
                   smoothing=0.1)

        def store(rows: Rows) -> None:
            with database_errors(db_path):
                insert_games(conn, rows)
            bar.update(len(rows))

        per_node: dict[str, int] = {}
        try:
            if ray_address is None:
                played = play_tasks(todo, chunk_size, workers, rules.to_dict(), store)
            else:
                per_node = ray_workers.play_tasks_ray(todo, chunk_size, rules.to_dict(), store,
                                                      in_flight=workers * 2)
                played = sum(per_node.values())
        finally:
            bar.close()
            _end_bots()
        elapsed = time.perf_counter() - t0
        with database_errors(db_path):
            rows = fetch_rows(conn)
            think = think_times(conn)
            lost = forfeits(conn)
            reasons = forfeit_reasons(conn)
    finally:
        conn.close()
        if connected:
            import ray

            ray.shutdown()
    if reasons:   # the report counts them; the words are here
        print(f"Why games were forfeited ({' vs '.join(labels)}; the first game of each kind):\n"
              + "\n".join(reasons), file=sys.stderr)
    report = compute_report(rows, config, confidence=confidence, bootstrap=bootstrap,
                            anchor=anchor, db_path=str(db_path), think=think,
                            forfeits=lost)
    report.games_this_run = played
    report.games_per_node = per_node
    report.elapsed_s = elapsed
    return report


def check_agent(entrant: AgentSpec) -> None:
    """Make the entrant's agent once, in this process: a bad spec is a ``ValueError``, and so is
    a program (``cmd:``) that cannot start and answer the greeting, named with the reason,
    rather than a forfeit of every game it was to play."""
    from agents.arena import BotFailure
    from agents.external import ExternalBot

    agent = build(entrant.bot, seed=0)   # the one builder, on the spec read once
    if not isinstance(agent, ExternalBot):   # only a program has a start to check
        return
    try:
        agent._process()    # started and greeted, as for its first game
    except BotFailure as exc:
        raise ValueError(f"agent {entrant.label!r} cannot play, no game was played: {exc}"
                         ) from None
    finally:
        agent.close()


def _end_bots() -> None:
    """Tell the protocol bots kept between games that the tournament is over (``quit``), then
    end them (a pool's workers do the same for theirs as they exit)."""
    external = sys.modules.get("agents.external")
    if external is not None:
        external.stop_idle()


def forfeit_reasons(conn: sqlite3.Connection) -> list[str]:
    """One line for each agent and kind of forfeit stored: the games and the first one's
    reason (:class:`agents.arena.BotFailure`), e.g. ``"  mine, crash, 4 games: bot ..."``."""
    first: dict[tuple[str, str], list] = {}
    for (text,) in conn.execute("SELECT result FROM games WHERE result LIKE "
                                "'%\"forfeit\": {%' ORDER BY agent_a, agent_b, deal, seating"):
        forfeit = json.loads(text).get("forfeit")
        if forfeit:
            entry = first.setdefault((forfeit["agent"], forfeit["kind"]),
                                     [0, forfeit.get("detail", "")])
            entry[0] += 1
    return [f"  {agent}, {kind}, {n} game{'s' * (n != 1)}: {detail}"
            for (agent, kind), (n, detail) in sorted(first.items())]
