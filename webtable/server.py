"""What the routes of the web app share: the :class:`Server` (the bots offered, the games and
replays held, the database) and the handling of a request's body, its origin and its errors.

:func:`webtable.app.create_app` makes one :class:`Server` and keeps it as
``app.state.server``; each module of :mod:`webtable.routes` reads it from the request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import JSONResponse

from cribenv.game import Rules
from webtable.opponents import lobby_order, opponent_about, opponent_names
from webtable.replay import MAX_RECORD_BYTES, Replay, tournament_games
from webtable.saved_games import SavedGames
from webtable.sessions import Store, UnknownItemError
from webtable.table import MoveError, Table
from webtable.views import lobby_html

__all__ = ["MAX_BODY", "MAX_REPLAYS_BYTES", "THINK_S", "Refused", "Server", "cross_site",
           "error", "in_thread", "read_body", "read_json", "server"]

MAX_BODY = 512 * 1024   # a game record is a few kB
MAX_REPLAYS_BYTES = 16 * 1024 * 1024   # all the replays held at once (as JSON)
#: Seconds from a move's arrival by which the bots' searches stop (waiting included).
THINK_S = 0.75
log = logging.getLogger("webtable.app")   # the server's log, whichever module writes it


class Refused(Exception):
    """A request refused with ``status`` (the message says why)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class Server:
    """The state behind the routes. ``bots``: label -> agent spec, fixed when the server
    starts; ``replays``: recorded games listed in the lobby; ``tournament_db``: a tournament
    database whose games the lobby lists; ``db``: the SQLite file that keeps the games across
    restarts (``None``: memory only). See :func:`webtable.app.create_app`.

    The bots think in a pool of ``bot_threads`` threads (default: one a CPU): a move waits
    its turn there, so a busy table runs that many bots' turns at once and no more, and
    its memory stays that of ``bot_threads`` searches however many people play
    (:meth:`think`). ``think_s``: a searching bot plays its best card so far once this many
    seconds have passed since the move arrived, its wait in the pool included (``None``:
    no limit, the search as in a tournament)."""

    def __init__(self, bots: Mapping[str, str], *, ttl_s: float, max_games: int,
                 replays: Sequence[Replay] = (), tournament_db: str | None = None,
                 db: str | os.PathLike[str] | None = None,
                 max_replay_bytes: int = MAX_RECORD_BYTES,
                 max_replays_bytes: int = MAX_REPLAYS_BYTES,
                 think_s: float | None = THINK_S, bot_threads: int | None = None) -> None:
        self.bots = dict(bots)
        if think_s is not None and not 0 < think_s < float("inf"):
            raise ValueError(f"think_s must be a number of seconds > 0, got {think_s!r}")
        bot_threads = bot_threads or len(os.sched_getaffinity(0))
        if bot_threads < 1:
            raise ValueError(f"bot_threads must be at least 1, got {bot_threads!r}")
        self.think_s = think_s
        self.bot_threads = bot_threads
        self.pool = ThreadPoolExecutor(bot_threads, thread_name_prefix="cribenv-bots")
        if not self.bots:
            raise ValueError("the server needs at least one bot")
        if max_replays_bytes < max_replay_bytes:
            raise ValueError("max_replays_bytes must hold at least one replay of "
                             "max_replay_bytes")
        self.names = opponent_names(self.bots)   # label -> the name the person sees
        self.about = {label: opponent_about(label, spec) for label, spec in self.bots.items()}
        self.by_name = {name.casefold(): label for label, name in self.names.items()}
        self.offered = lobby_order(self.bots)    # the built-in bots weakest first
        self.default_bot = next(iter(self.bots))
        self.max_replay_bytes = max_replay_bytes
        self.saved = saved = SavedGames(db, ttl_s) if db is not None else None
        self.games: Store[Table] = Store(
            ttl_s=ttl_s, max_items=max_games, what="game",
            finished=lambda table: table.stage == "over",
            on_drop=None if saved is None else saved.delete,
            restore=None if saved is None else self.restore,
            secret=None if saved is None else saved.secret())
        self.replays: Store[Replay] = Store(ttl_s=ttl_s, max_items=max_games, what="replay",
                                            size=lambda replay: replay.size,
                                            max_bytes=max_replays_bytes)
        self.listed = [(r.title, f"/replay/{self.replays.add(r)}") for r in replays]
        self.tournament_rows = tournament_games(tournament_db) if tournament_db else []
        self.listed += [
            (f"tournament: {r['agent_a']} v {r['agent_b']}, deal {r['deal']}, seating "
             f"{r['seating']} ({r['seat0']} {r['score0']} - {r['seat1']} {r['score1']})",
             f"/tournament/{i}") for i, r in enumerate(self.tournament_rows)]

    # ------------------------------------------------------------------ the games
    def restore(self, key: str) -> Table | None:
        """A game kept in the database before a restart, played again from its moves."""
        assert self.saved is not None
        record = self.saved.load(key)
        if record is None:
            return None
        try:
            label, spec = record.get("bot_label"), record.get("bot")
            if self.bots.get(label) != spec:
                raise ValueError(f"its bot {str(label)[:40]!r} ({str(spec)[:60]}) is not "
                                 "offered now")
            return Table.from_record(record)
        except Exception as exc:   # a bot that cannot be built, too: said
            if not isinstance(exc, ValueError):
                log.exception("cribenv serve: game %s not restored", key[:8])
            self.saved.delete(key)
            raise ValueError(f"the server restarted and could not restore it: {exc}") \
                from None

    def keep(self, key: str, table: Table) -> None:
        """Write the game to the database, if there is one (after every move)."""
        if self.saved is None:
            return
        with table.lock:   # the latest record wins, whichever request writes it
            try:
                self.saved.save(key, table.to_record())
            except ValueError as exc:   # the disk, most likely: the game goes on in memory
                log.warning("cribenv serve: game %s not saved: %s", key[:8], exc)

    def new_table(self, body: Mapping[str, Any], new_seed: Callable[[], int]) -> Table:
        """The game a ``POST /api/games`` body asks for (``new_seed``: the seed of a game whose
        body names none); :class:`MoveError` for a bad request, :class:`Refused` (503) for a
        bot that cannot be built."""
        bots, names = self.bots, self.names
        bot = body.get("bot", self.default_bot)
        if isinstance(bot, str) and bot not in bots:
            bot = self.by_name.get(bot.casefold(), bot)   # "Expert" as well as "expert"
        if not isinstance(bot, str) or bot not in bots:
            choices = ", ".join(b if names[b] == b else f"{names[b]} ({b})"
                                for b in self.offered)
            raise MoveError(f"unknown bot {str(bot)[:40]!r}: choose one of {choices}")
        players = _one_of(body.get("players", 2), "players", (2, 3, 4))
        target = _one_of(body.get("target", 121), "target", (121, 61))
        advice = body.get("advice", False)
        muggins = body.get("muggins", False)
        for flag, value in (("advice", advice), ("muggins", muggins)):
            if not isinstance(value, bool):
                raise MoveError(f"{flag} must be true or false, got {value!r}")
        seed = body.get("seed")
        if seed is None:
            seed = new_seed()   # a seed to play the game again after a restart
        elif not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**62:
            raise MoveError(f"seed must be an integer 0..2**62, got {str(seed)[:40]!r}")
        try:
            return Table(Rules(num_players=players, target=target, muggins=muggins),
                         bot=bots[bot], seed=seed, advice=advice, bot_label=bot,
                         bot_name=names[bot])
        except Exception as exc:   # the bot cannot be built: said, not a 500
            log.exception("cribenv serve: bot %s could not be built", bot)
            raise Refused(503, f"{names[bot]} cannot play now ({exc}): choose another "
                               "opponent") from None

    def finished(self, key: str) -> tuple[Table, dict[str, Any]]:
        """The finished game ``key`` and its record (:meth:`Table.game_record`); ``Refused``
        404 for an unknown game, 409 for one still being played."""
        try:
            table = self.games.get(key)   # after a restart: played again from the database
        except UnknownItemError as exc:
            raise Refused(404, str(exc)) from None
        with table.lock:
            try:
                return table, table.game_record()
            except MoveError as exc:
                raise Refused(409, str(exc)) from None

    def deadline(self, arrived: float) -> float | None:
        """When the bots' searches stop for a move that arrived at ``arrived``
        (:func:`time.monotonic`)."""
        return None if self.think_s is None else arrived + self.think_s

    async def think(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` (a move, the bots' turn after it, a review) in the bots' pool, waiting
        its turn without holding a thread."""
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, partial(fn, *args, **kwargs))

    # ------------------------------------------------------------------ the lobby
    def lobby(self, settings: dict[str, Any] | None = None, open_about: bool = False) -> str:
        """The new-game form (``settings``: a game's, to start another like it)."""
        return lobby_html(self.offered, {"bot": self.default_bot, **(settings or {})},
                          replays=self.listed, names=self.names, about=self.about,
                          open_about=open_about)


def server(request: Request) -> Server:
    """The :class:`Server` of the app that received ``request``."""
    return request.app.state.server


def _one_of(value: Any, name: str, allowed: Sequence[int]) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value not in allowed:
        raise MoveError(f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return value


# ---------------------------------------------------------------------- requests

async def in_thread(fn, *args):
    """Run a blocking call (a bot's move) off the event loop."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


async def read_body(request: Request) -> bytes | JSONResponse:
    """The request's body, read as it streams in and refused (413) once it passes
    :data:`MAX_BODY`: a chunked body without a Content-Length is bounded too."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return error(413, f"request too large (at most {MAX_BODY // 1024} kB)")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request) -> dict[str, Any] | JSONResponse:
    """The request's body as a JSON object, or the 400 (413) saying why not."""
    raw = await read_body(request)
    if isinstance(raw, JSONResponse):
        return raw
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return error(400, "the request body must be a JSON object")
    if not isinstance(body, dict):
        return error(400, "the request body must be a JSON object")
    return body


def cross_site(request: Request) -> JSONResponse | None:
    """A 403 for a POST another site's page sent (its ``Origin`` or ``Sec-Fetch-Site`` says
    so; ``Origin: null``, an opaque origin such as a sandboxed frame's or a file's, is not this
    site), a 415 for an API POST whose media type is not ``application/json`` (what a form or
    a ``text/plain`` fetch from another site can send without asking); ``None`` if fine."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is not None and urlsplit(origin).netloc != host:
        return error(403, f"cross-site request refused (Origin {origin[:60]!r}, not {host!r})")
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return error(403, f"cross-site request refused (Sec-Fetch-Site {site[:30]!r})")
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.url.path.startswith("/api/") and media_type != "application/json":
        return error(415, "the API takes application/json")
    return None
