"""The web table's games kept in SQLite (``cribenv serve --db``), so a restart loses none.

Each game is one row: its id, its table's record (:meth:`Table.to_record`: the rules, the
seed, the bot and the person's moves) and the time of its last move. The row is written in one
transaction after every move (WAL mode, as the tournament keeps its games), deleted when the
server drops the game, and read back when its id is asked for after a restart: the engine and
the seeded bots are deterministic, so the same moves give the same game.

    >>> saved = SavedGames(":memory:", ttl_s=60)
    >>> saved.save("abc", {"moves": []})
    >>> saved.load("abc"), saved.load("xyz"), len(saved)
    ({'moves': []}, None, 1)
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cribenv.files import sqlite_errors
from webtable.sessions import minutes

__all__ = ["FORMAT", "SavedGames", "default_db_path"]

FORMAT = "cribenv-web-games/1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS web_games (
    id TEXT PRIMARY KEY,       -- the game's id (its page is /game/ID)
    record TEXT NOT NULL,      -- Table.to_record() as JSON
    updated REAL NOT NULL      -- time.time() of its last move
);
CREATE INDEX IF NOT EXISTS web_games_updated ON web_games (updated);
"""


def default_db_path() -> Path:
    """Where ``cribenv serve`` keeps its games without ``--db``: the user's state folder
    (``$XDG_STATE_HOME``, else ``~/.local/state``), ``cribenv/web-games.sqlite``."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".local", "state")
    return Path(state) / "cribenv" / "web-games.sqlite"


def _database_errors(path: Any):
    """SQLite's errors about a damaged or foreign file (or a full disk) as a ``ValueError``
    naming it."""
    return sqlite_errors(path, "web games database")


class SavedGames:
    """The rows of the games in ``path`` (``":memory:"``: none survive the process); a game
    with no move for ``ttl_s`` seconds is gone. Opening a damaged file, or a database of
    something else, raises a one-line ``ValueError``. Thread-safe."""

    def __init__(self, path: str | os.PathLike[str], ttl_s: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = os.fspath(path)
        self.ttl_s = ttl_s
        self.clock = clock
        self._lock = threading.Lock()
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ValueError(f"cannot make the folder of {self.path} ({exc.strerror}); "
                                 "choose another --db") from None
        with _database_errors(self.path):
            self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            try:
                self._open()
            except BaseException:
                self._conn.close()
                raise

    def _open(self) -> None:
        conn = self._conn
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"damaged: {check}")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master "
                                             "WHERE type = 'table'")}
        if tables:
            row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() \
                if "meta" in tables else None
            if row is None or row[0] != FORMAT:
                raise ValueError(f"{self.path} holds something other than the web table's "
                                 f"games (tables {', '.join(sorted(tables))}); choose another "
                                 "--db")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        with conn:
            conn.executescript(SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?)",
                         (FORMAT,))
        self.drop_expired()

    def __len__(self) -> int:
        with self._lock, _database_errors(self.path):
            return self._conn.execute("SELECT COUNT(*) FROM web_games").fetchone()[0]

    def save(self, key: str, record: dict[str, Any]) -> None:
        """Write the game ``key`` (one transaction: the old row or the new one, never half),
        and delete the games that have expired."""
        text = json.dumps(record, separators=(",", ":"))
        now = self.clock()
        with self._lock, _database_errors(self.path), self._conn:
            self._conn.execute(
                "INSERT INTO web_games (id, record, updated) VALUES (?, ?, ?) ON CONFLICT (id) "
                "DO UPDATE SET record = excluded.record, updated = excluded.updated",
                (key, text, now))
            self._conn.execute("DELETE FROM web_games WHERE updated < ?", (now - self.ttl_s,))

    def load(self, key: str) -> dict[str, Any] | None:
        """The record of game ``key``, ``None`` if there is none; ``ValueError`` if it has
        expired or its row is damaged (the row is deleted then)."""
        with self._lock, _database_errors(self.path):
            row = self._conn.execute("SELECT record, updated FROM web_games WHERE id = ?",
                                     (key,)).fetchone()
        if row is None:
            return None
        text, updated = row
        if self.clock() - updated > self.ttl_s:
            self.delete(key)
            raise ValueError(f"it expired (games expire after {minutes(self.ttl_s)} without "
                             "a move)")
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            self.delete(key)
            raise ValueError(f"the server restarted and its row in {self.path} is damaged")
        return record

    def secret(self) -> bytes:
        """The key of the games' id check (:class:`webtable.sessions.Store`), made once and
        kept here, so a restarted server knows the ids it made before."""
        with self._lock, _database_errors(self.path), self._conn:
            self._conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('id_secret', ?)",
                               (secrets.token_hex(32),))
            value = self._conn.execute("SELECT value FROM meta WHERE key = 'id_secret'"
                                       ).fetchone()[0]
        try:
            return bytes.fromhex(value)
        except (TypeError, ValueError):
            raise ValueError(f"{self.path}: its id_secret is damaged; choose another --db") \
                from None

    def delete(self, key: str) -> None:
        with self._lock, _database_errors(self.path), self._conn:
            self._conn.execute("DELETE FROM web_games WHERE id = ?", (key,))

    def drop_expired(self) -> int:
        """Delete the games with no move for ``ttl_s`` seconds; how many there were."""
        with self._lock, _database_errors(self.path), self._conn:
            return self._conn.execute("DELETE FROM web_games WHERE updated < ?",
                                      (self.clock() - self.ttl_s,)).rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()
