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
from dataclasses import dataclass, field
from typing import Any

from cribenv.game import Dealt, Discarded, Game, Played, Rules

__all__ = ["Replay", "tournament_games"]


@dataclass
class Replay:
    """A recorded game: ``record`` (the :meth:`Game.to_record` dict), the seats' ``labels``,
    the number of moves and the move at which each hand begins."""

    record: dict[str, Any]
    labels: list[str]
    title: str = "recorded game"
    total: int = 0
    hand_starts: list[int] = field(default_factory=list)

    @classmethod
    def from_record(cls, record: dict[str, Any] | str, labels: list[str] | None = None,
                    title: str = "recorded game") -> Replay:
        """Check ``record`` by replaying it (``ValueError`` with the reason if it fails)."""
        if isinstance(record, str):
            try:
                record = json.loads(record)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise ValueError("a game record is a JSON object (from Game.to_json())")
        try:
            game = Game.from_record(record)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a complete game record ({type(exc).__name__}: {exc})") \
                from None
        n = game.num_players
        starts = []
        moves = 0   # every move is one Discarded or one Played event
        for ev in game.events:
            kind = type(ev)
            if kind is Dealt:
                starts.append(moves)
            elif kind is Discarded or kind is Played:
                moves += 1
        labels = labels or [f"seat {s + 1}" for s in range(n)]
        return cls(record, list(labels), title, len(record["actions"]), starts)

    def game_at(self, step: int) -> Game:
        """The game after its first ``step`` moves (0 .. total), Muggins claims included."""
        if not 0 <= step <= self.total:
            raise ValueError(f"step must be 0..{self.total}, got {step}")
        return Game.from_record(self.record, moves=step)


def tournament_games(db_path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The games of a tournament database: key fields, seats and score of each, in key order."""
    import sqlite3

    from agents.tournament.storage import stored_config

    if not os.path.exists(db_path):
        raise ValueError(f"no tournament database at {db_path}")
    conn = sqlite3.connect(f"file:{os.fspath(db_path)}?mode=ro", uri=True)
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
    from agents.tournament.schedule import agent_seed, parse_spec

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
