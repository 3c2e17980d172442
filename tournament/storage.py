"""The results database of a tournament (SQLite): kill-safe storage and resume.

The parent process is the only SQLite writer. Each game is one row of ``games`` with the UNIQUE
key (agent_a, agent_b, deal, seating); rows arrive from the workers in small chunks, each
inserted (``ON CONFLICT DO NOTHING``) and committed in one transaction, in WAL mode. The
``meta`` table holds the tournament's configuration (agents, games per pair, seed, rules).
Re-running with the same database resumes: games already stored are skipped, so a killed run
loses at most the chunks in flight and never counts a game twice; a different configuration is
refused with a clear error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cribenv.files import sqlite_errors
from cribenv.game import Rules
from tournament.schedule import AgentSpec, parse_spec
from tournament.statistics import ROW_FIELDS

FORMAT = "cribenv-tournament/1"
DEFAULT_DB_FOLDER = "tournaments"   # of the results databases named from their tournament

COLUMNS = ("agent_a", "agent_b", "deal", "seating", "game_seed", "first_dealer", "seat0",
           "seat1", "winner_seat", "winner", "score0", "score1", "game_points", "hands",
           "peg0", "peg1", "hand0", "hand1", "crib0", "crib1", "dealer0", "dealer1",
           "decisions", "result")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    agent_a TEXT NOT NULL,        -- the pair (A, B), in the order the agents were given
    agent_b TEXT NOT NULL,
    deal INTEGER NOT NULL,        -- duplicate deal index 0 .. games_per_pair/2 - 1
    seating INTEGER NOT NULL,     -- 0: A in seat 0; 1: B in seat 0
    game_seed INTEGER NOT NULL,
    first_dealer INTEGER NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    winner_seat INTEGER,
    winner TEXT,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    game_points INTEGER NOT NULL, -- 1, 2 (skunk), 3 (double skunk)
    hands INTEGER NOT NULL,       -- hands dealt (the last one usually cut short)
    peg0 INTEGER NOT NULL, peg1 INTEGER NOT NULL,     -- pegging (incl. his heels) per seat
    hand0 INTEGER NOT NULL, hand1 INTEGER NOT NULL,   -- own hand in the show per seat
    crib0 INTEGER NOT NULL, crib1 INTEGER NOT NULL,   -- crib per seat
    dealer0 INTEGER NOT NULL, dealer1 INTEGER NOT NULL,  -- hands dealt as dealer per seat
    decisions INTEGER NOT NULL,
    result TEXT NOT NULL,         -- the full GameResult as JSON
    UNIQUE (agent_a, agent_b, deal, seating)
);
CREATE TABLE IF NOT EXISTS think_times (  -- per game: the seconds each seat took to decide
    agent_a TEXT NOT NULL, agent_b TEXT NOT NULL, deal INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    seconds0 REAL NOT NULL, seconds1 REAL NOT NULL,  -- seconds seat 0 / 1 spent deciding
    asked0 INTEGER NOT NULL, asked1 INTEGER NOT NULL,  -- decisions seat 0 / 1 was asked
    UNIQUE (agent_a, agent_b, deal, seating)
);
"""
#: The think-time columns of a played game's row, kept apart from the games (they depend on
#: the machine; the games never do).
THINK_COLUMNS = ("agent_a", "agent_b", "deal", "seating", "seconds0", "seconds1", "asked0",
                 "asked1")


def database_errors(db_path: Any):
    """SQLite's errors about a damaged database (cut mid-page, overwritten, not a database)
    or a full disk as a ``ValueError`` that names the file."""
    return sqlite_errors(db_path, "results database")


def connect(db_path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open (or create) a results database in WAL mode, with the schema in place."""
    path = Path(db_path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with database_errors(path):
        conn = sqlite3.connect(str(path), timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
    return conn


def tournament_config(entrants: Sequence[AgentSpec], games_per_pair: int, seed: int,
            rules: Rules) -> dict[str, Any]:
    """What defines a tournament (stored in ``meta``; a resumed run must match it)."""
    return {"format": FORMAT, "agents": [str(e) for e in entrants],
            "games_per_pair": games_per_pair, "seed": seed, "rules": rules.to_dict()}


def default_db_path(config: dict[str, Any],
                    folder: str | os.PathLike[str] = DEFAULT_DB_FOLDER) -> Path:
    """Where ``cribenv tournament`` keeps a tournament's results when no ``--db`` is given: a
    file named from the agents and settings, ``FOLDER/LABELS-Ng-HASH.sqlite`` (HASH: of the
    whole configuration), so re-running the same tournament resumes it and a different one
    never lands in its file.

    >>> config = tournament_config([AgentSpec("random", "random"), AgentSpec("g", "greedy")],
    ...                            200, 0, Rules())
    >>> path = default_db_path(config)
    >>> path.parent.name, path.name.startswith("random_g-200g-"), path.suffix
    ('tournaments', True, '.sqlite')
    >>> path == default_db_path(config), path == default_db_path({**config, "seed": 1})
    (True, False)
    """
    labels = "_".join(parse_spec(text).label for text in config["agents"])
    labels = re.sub(r"[^A-Za-z0-9_.+-]+", "-", labels).strip("-.")[:60] or "tournament"
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]
    return Path(folder) / f"{labels}-{config['games_per_pair']}g-{digest}.sqlite"


def stored_config(conn: sqlite3.Connection, where: Any = "the database"
                  ) -> dict[str, Any] | None:
    """The configuration stored in the database, or None for a new one."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    if row is None:
        return None
    try:
        config = json.loads(row[0])
    except (TypeError, ValueError):
        config = None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise ValueError(f"the tournament configuration stored in {where} is damaged or not a "
                         f"{FORMAT} one: {str(row[0])[:80]!r}; choose another --db")
    return config


def check_or_store_config(conn: sqlite3.Connection, config: dict[str, Any],
                           db_path: Any) -> None:
    """Store ``config`` in a new database, or in one that holds no game yet (a run that
    stopped before its first game blocks no other); raise ``ValueError`` if another
    configuration is stored with its games."""
    stored = stored_config(conn, db_path)
    games = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    if stored is None or (stored != config and not games):
        if stored is None and games:
            raise ValueError(f"{db_path} holds games but no tournament configuration; "
                             "use a new --db")
        with conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('config', ?)",
                         (json.dumps(config, sort_keys=True),))
        return
    if stored == config:
        return
    diffs = []
    for key in sorted(set(stored) | set(config)):
        if stored.get(key) != config.get(key):
            diffs.append(f"{key}: stored {stored.get(key)!r}, requested {config.get(key)!r}")
    raise ValueError(
        f"{db_path} holds a tournament with different settings, so it cannot be resumed "
        f"({'; '.join(diffs)}). Re-run with the stored settings to resume it, or choose "
        "another --db for a new tournament.")


def done_keys(conn: sqlite3.Connection) -> set[tuple[str, str, int, int]]:
    """The keys (agent_a, agent_b, deal, seating) of the games already stored."""
    return {tuple(r) for r in conn.execute(
        "SELECT agent_a, agent_b, deal, seating FROM games")}  # type: ignore[misc]


def check_rows(conn: sqlite3.Connection, tasks: Sequence[Any], target: int,
               db_path: Any) -> None:
    """Refuse (``ValueError`` naming the database and the row) a stored game the schedule
    ``tasks`` does not hold, or one whose values no game can have: seats other than the
    schedule's, a winner not in them, scores not integers from 0 to ``target + 31``, game
    points not 1, 2 or 3, no hand dealt; a game short of the target only as a forfeit."""
    seats = {t.key: (t.seats[0].label, t.seats[1].label) for t in tasks}
    sql = ("SELECT agent_a, agent_b, deal, seating, seat0, seat1, winner_seat, winner, score0, "
           "score1, game_points, hands, result LIKE '%\"forfeit\": {%' FROM games")
    for row in conn.execute(sql):
        key, (s0, s1, wseat, winner, a, b, points, hands, forfeit) = tuple(row[:4]), row[4:]
        problem = None
        if key not in seats:
            problem = "is not a game of this tournament's schedule"
        elif (s0, s1) != seats[key]:
            problem = f"seats {s0!r} and {s1!r}, but the schedule seats {seats[key]}"
        elif wseat not in (0, 1) or winner != (s0, s1)[wseat]:
            problem = f"winner {winner!r} (seat {wseat!r}) is not one of its seats"
        elif not all(type(x) is int and 0 <= x <= target + 31 for x in (a, b)):
            problem = f"scores {a!r} and {b!r} are not points of a game to {target}"
        elif max(a, b) < target and not forfeit:
            problem = f"nobody reached {target} (scores {a} and {b})"
        elif points not in (1, 2, 3) or type(points) is not int:
            problem = f"game points {points!r} are not 1, 2 or 3"
        elif type(hands) is not int or hands < 1:
            problem = f"hands {hands!r}"
        if problem:
            raise ValueError(f"{db_path}: the stored game {key} {problem}; the database was "
                             f"changed outside cribenv: move it aside or choose another --db")


def insert_games(conn: sqlite3.Connection, rows: list[dict[str, Any]]) -> None:
    """Store game rows (:data:`COLUMNS`, and their :data:`THINK_COLUMNS`) in one transaction;
    games already there are kept."""
    timed = [r for r in rows if "seconds0" in r]
    with conn:   # one transaction per chunk
        for table, columns, chosen in (("games", COLUMNS, rows),
                                       ("think_times", THINK_COLUMNS, timed)):
            conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                             f"({', '.join('?' for _ in columns)}) "
                             "ON CONFLICT (agent_a, agent_b, deal, seating) DO NOTHING",
                             [tuple(r[c] for c in columns) for r in chosen])


def think_times(conn: sqlite3.Connection) -> dict[str, tuple[float, int]]:
    """Each agent's seconds spent deciding and decisions asked, summed over the timed games
    (games stored by a cribenv without think times have none)."""
    out: dict[str, tuple[float, int]] = {}
    query = ("SELECT g.seat0, g.seat1, t.seconds0, t.seconds1, t.asked0, t.asked1 "
             "FROM think_times t JOIN games g USING (agent_a, agent_b, deal, seating)")
    for seat0, seat1, s0, s1, a0, a1 in conn.execute(query):
        for label, seconds, asked in ((seat0, s0, a0), (seat1, s1, a1)):
            total, count = out.get(label, (0.0, 0))
            out[label] = (total + seconds, count + asked)
    return out


def forfeits(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """The games each agent forfeited (:class:`agents.arena.BotFailure`), by kind."""
    out: dict[str, dict[str, int]] = {}
    for (text,) in conn.execute("SELECT result FROM games WHERE result LIKE "
                                "'%\"forfeit\": {%' ORDER BY agent_a, agent_b, deal, seating"):
        forfeit = json.loads(text).get("forfeit")
        if forfeit:
            kinds = out.setdefault(forfeit["agent"], {})
            kinds[forfeit["kind"]] = kinds.get(forfeit["kind"], 0) + 1
    return out


def fetch_rows(conn: sqlite3.Connection) -> list[tuple]:
    """Every stored game as a tuple of :data:`ROW_FIELDS`, in key order."""
    return conn.execute(f"SELECT {', '.join(ROW_FIELDS)} FROM games "
                        "ORDER BY agent_a, agent_b, deal, seating").fetchall()


def read_results(db_path: str | os.PathLike[str]
                 ) -> tuple[dict[str, Any], list[tuple], dict[str, tuple[float, int]],
                            dict[str, dict[str, int]]]:
    """The stored configuration, games, :func:`think_times` and :func:`forfeits` of
    ``db_path`` (``ValueError`` if there are none)."""
    if not Path(db_path).exists():
        raise ValueError(f"no results database at {db_path}")
    conn = connect(db_path)
    try:
        with database_errors(db_path):
            config = stored_config(conn, db_path)
            if config is None:
                raise ValueError(f"{db_path} holds no tournament")
            rows = fetch_rows(conn)
            think = think_times(conn)
            lost = forfeits(conn)
    finally:
        conn.close()
    return config, rows, think, lost
