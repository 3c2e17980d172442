"""Recorded games to step through: a :meth:`Game.to_json` record, or a game of a tournament
database (played again from its stored seed and agents, and checked against the stored score).

    >>> from cribenv.game import Game, Rules
    >>> game = Game(Rules(target=61), seed=5)
    >>> while not game.is_over:
    ...     _ = game.step(game.legal_actions()[0])
    >>> replay = Replay.from_record(game.to_record())
    >>> replay.total == len(game.actions), replay.game_at(replay.total).scores == game.scores
    (True, True)
    >>> replay.hand_starts[:2]
    [0, 12]
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cribenv import cards as C
from cribenv.game import Dealt, Discarded, Game, Played, Rules

__all__ = ["MAX_MOVES", "MAX_RECORD_BYTES", "RecordTooLargeError", "Replay", "check_record",
           "tournament_games"]

MAX_RECORD_BYTES = 128 * 1024   # a whole game to 121 is 1 to 2 kB
MAX_MOVES = 10_000              # a game to 121 takes a few hundred moves
TARGETS = (121, 61)             # the games the table shows (the board has a hole per point)
RULE_NAMES = tuple(f.name for f in fields(Rules))


class RecordTooLargeError(ValueError):
    """A record over the size limit (the server answers 413)."""


def check_record(record: dict[str, Any]) -> None:
    """Refuse (``ValueError`` naming the field and the value) a record the table should not
    replay: rules that :class:`Rules` itself refuses, a target other than 121 or 61 (the board
    has a hole per point), more than :data:`MAX_MOVES` actions, an action that is not a card.
    The engine checks the rest as it replays the record.

        >>> check_record({"rules": {"target": 200000}, "actions": []})
        Traceback (most recent call last):
        ...
        ValueError: rules: target must be 121 or 61 (the games the table shows), got 200000
    """
    if "rules" in record:
        _check_rules(record["rules"])
    for name in ("actions", "deals", "claims", "peg_claims"):
        value = record.get(name, [])
        if not isinstance(value, list):
            raise ValueError(f"{name} must be a list, got {_short(value)}")
        if len(value) > MAX_MOVES:
            raise ValueError(f"a record holds at most {MAX_MOVES:,} {name}, this one "
                             f"{len(value):,}")
    for i, action in enumerate(record.get("actions", [])):
        if not _is_card(action):
            raise ValueError(f"actions[{i}] is not a card: {_short(action)}")


def _check_rules(rules: Any) -> None:
    """The rules as :class:`Rules` checks them, and a target the table shows."""
    if not isinstance(rules, dict):
        raise ValueError(f"rules must be an object like {{\"target\": 121}}, got {_short(rules)}")
    unknown = sorted(map(str, set(rules) - set(RULE_NAMES)))
    if unknown:
        raise ValueError(f"rules: unknown rule {_short(unknown[0])} (the rules are "
                         f"{', '.join(RULE_NAMES)})")
    try:
        target = Rules(**rules).target
    except (TypeError, ValueError) as exc:   # TypeError: a value of the wrong type
        raise ValueError(f"rules: {exc}") from None
    if target not in TARGETS:
        raise ValueError(f"rules: target must be 121 or 61 (the games the table shows), got "
                         f"{target}")


def _is_card(value: Any) -> bool:
    if not isinstance(value, str | int) or len(str(value)) > 3:
        return False
    try:
        C.parse(value)
    except ValueError:
        return False
    return True


def _are_names(names: Any, n: int) -> bool:
    """Whether ``names`` are ``n`` seat names to show (short, non-empty strings)."""
    return (isinstance(names, list) and len(names) == n
            and all(isinstance(x, str) and 0 < len(x.strip()) <= 40 for x in names))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass
class Replay:
    """A recorded game: ``record`` (the :meth:`Game.to_record` dict), the seats' ``labels``,
    the number of moves and the move at which each hand begins."""

    record: dict[str, Any]
    labels: list[str]
    title: str = "recorded game"
    total: int = 0
    hand_starts: list[int] = field(default_factory=list)
    size: int = 0   # bytes of the record as JSON

    @classmethod
    def from_record(cls, record: dict[str, Any] | str, labels: list[str] | None = None,
                    title: str = "recorded game",
                    max_bytes: int = MAX_RECORD_BYTES) -> Replay:
        """Check ``record`` (:func:`check_record`, then by replaying it: ``ValueError`` with
        the reason if it fails; :class:`RecordTooLargeError` past ``max_bytes``). The replay
        keeps the engine's own record of the game, so anything else in ``record`` is dropped,
        but for the seats' ``names`` (a record the web table gave for download has them:
        "You" and the bot's name), used when ``labels`` is not given; without them the seats
        are "seat 1", "seat 2", ..."""
        text = record if isinstance(record, str) else json.dumps(record)
        size = len(text.encode("utf-8", "replace"))
        if size > max_bytes:
            raise RecordTooLargeError(f"the record is {size:,} bytes; a replay may be at most "
                                      f"{max_bytes:,} bytes (a whole game is 1 to 2 kB)")
        if isinstance(record, str):
            try:
                record = json.loads(record)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise ValueError("a game record is a JSON object (from Game.to_json())")
        check_record(record)
        names = record.get("names")
        try:
            game = Game.from_record(record)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a complete game record ({type(exc).__name__}: {exc})") \
                from None
        record = game.to_record()
        n = game.num_players
        starts = []
        moves = 0   # every move is one Discarded or one Played event
        for ev in game.events:
            kind = type(ev)
            if kind is Dealt:
                starts.append(moves)
            elif kind is Discarded or kind is Played:
                moves += 1
        if not labels and _are_names(names, n):
            labels = list(names)
        labels = labels or [f"seat {s + 1}" for s in range(n)]
        return cls(record, list(labels), title, len(record["actions"]), starts,
                   len(json.dumps(record)))

    def game_at(self, step: int) -> Game:
        """The game after its first ``step`` moves (0 .. total), Muggins claims included."""
        if not 0 <= step <= self.total:
            raise ValueError(f"step must be 0..{self.total}, got {step}")
        return Game.from_record(self.record, moves=step)


def tournament_games(db_path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The games of a tournament database: key fields, seats and score of each, in key order."""
    import sqlite3

    from tournament.storage import stored_config

    if not os.path.exists(db_path):
        raise ValueError(f"no tournament database at {db_path}")
    if not os.path.isfile(db_path):   # a FIFO or a device would block the read
        raise ValueError(f"{db_path} is not a regular file (a tournament database is)")
    uri = Path(db_path).resolve().as_uri()   # a '?' or '#' in the name is quoted
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        config = stored_config(conn)
        if config is None:
            raise ValueError(f"{db_path} holds no tournament")
        rows = conn.execute(
            "SELECT agent_a, agent_b, deal, seating, game_seed, first_dealer, seat0, seat1, "
            "score0, score1, winner FROM games ORDER BY agent_a, agent_b, deal, seating"
        ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{db_path} is not a tournament database: {exc}") from None
    finally:
        conn.close()
    keys = ("agent_a", "agent_b", "deal", "seating", "game_seed", "first_dealer", "seat0",
            "seat1", "score0", "score1", "winner")
    return [dict(zip(keys, r), config=config) for r in rows]


def tournament_replay(game_row: dict[str, Any]) -> Replay:
    """Play a tournament game again from its seed and agents (as the tournament did) and check
    the score against the stored one."""
    from agents.arena import run_game
    from agents.base import make_agent
    from tournament.schedule import agent_seed, parse_spec

    config = game_row["config"]
    specs = {e.label: e.spec for e in map(parse_spec, config["agents"])}
    labels = [game_row["seat0"], game_row["seat1"]]
    bots = [make_agent(specs[label], seed=agent_seed(game_row["game_seed"], seat))
            for seat, label in enumerate(labels)]
    for bot in bots:
        if callable(getattr(bot, "reset", None)):
            bot.reset()
    game = Game(Rules(**config["rules"]), seed=game_row["game_seed"],
                first_dealer=game_row["first_dealer"])
    run_game(game, bots, names=labels)
    stored = [game_row["score0"], game_row["score1"]]
    if list(game.scores) != stored:
        raise ValueError(f"replaying the game gave scores {game.scores}, the database holds "
                         f"{stored} (were the agents changed since?)")
    title = (f"{game_row['agent_a']} v {game_row['agent_b']}, deal {game_row['deal']}, "
             f"seating {game_row['seating']}")
    return Replay.from_record(game.to_record(), labels, title)
