"""The web app (FastAPI): the routes of the table, the replays and the static files.

``create_app(bots)`` builds it; ``bots`` maps the names a page may choose to agent specs, fixed
when the server starts (the built-in bots and any given on the command line), so a request can
never make the server load a file. Games live in a :class:`~agents.web.sessions.Store` under
ids that cannot be guessed and expire (a full store drops finished and idle games to make
room); with ``db`` each is also kept in SQLite after every move
(:mod:`agents.web.saved_games`), so a restarted server plays it on where it stood.

The lobby offers the built-in bots by the names of :data:`agents.web.opponents.OPPONENTS`
(Beginner, Greedy, Expert, Master, Champion), each with a line on how it plays; a request names
a bot by its label (``expert``, ``ppo:shipped``: what the page sends) or by that name.

Routes: ``GET /`` (the lobby), ``POST /api/games`` (a new game; JSON ``{bot, players, target,
advice, muggins}``), ``GET /game/{id}`` (a game's page), ``GET /api/games/{id}`` (its state),
``POST /api/games/{id}/move`` (JSON ``{seq, action, cards, claims}``), ``GET
/game/{id}/record`` (a finished game's ``Game.to_json()`` record, as a file to save, with the
seats' ``names``), ``GET /game/{id}/replay?step=N`` (a finished game step by step; it lasts as
long as the game is kept, across restarts with ``db``), ``GET /game/{id}/review`` (every
decision of a finished 2-player game against the strongest agent's, the worst three first:
:mod:`agents.web.review`; worked out on the first request and kept with the game),
``POST /replays`` (open a ``Game.to_json()`` record), ``GET /replay/{id}?step=N``, ``GET
/tournament/{n}`` (the n-th game of the tournament database given on the command line), ``GET
/favicon.ico``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.web.opponents import lobby_order, opponent_about, opponent_names
from agents.web.render import page
from agents.web.replay import (
    MAX_RECORD_BYTES,
    RecordTooLargeError,
    Replay,
    tournament_games,
    tournament_replay,
)
from agents.web.review_page import review_html
from agents.web.saved_games import SavedGames
from agents.web.sessions import Store, UnknownItemError
from agents.web.table import MoveError, StaleMoveError, Table
from agents.web.views import lobby_html, replay_html, table_html
from cribenv import cards as C
from cribenv.game import Rules

__all__ = ["BUILT_IN_BOTS", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
BUILT_IN_BOTS = {"expert": "expert", "greedy": "greedy", "random": "random",
                 "ppo:shipped": "ppo:shipped"}
if importlib.util.find_spec("numba") is not None:   # the batched engine: the 'vector' extra
    # the strongest: ppo:shipped with its plays checked by search (results/search)
    BUILT_IN_BOTS["search:ppo:shipped"] = "search:ppo:shipped"
MAX_BODY = 512 * 1024   # a game record is a few kB
MAX_REPLAYS_BYTES = 16 * 1024 * 1024   # all the replays held at once (as JSON)
log = logging.getLogger(__name__)


class _Refused(Exception):
    """A request refused with ``status`` (the message says why)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(bots: Mapping[str, str] | None = None, *, ttl_s: float = 6 * 3600,
               max_games: int = 1000, replays: Sequence[Replay] = (),
               tournament_db: str | None = None,
               allowed_hosts: Sequence[str] | None = None,
               db: str | os.PathLike[str] | None = None,
               max_replay_bytes: int = MAX_RECORD_BYTES,
               max_replays_bytes: int = MAX_REPLAYS_BYTES,
               new_seed: Callable[[], int] | None = None) -> FastAPI:
    """The app. ``bots``: name -> agent spec (default :data:`BUILT_IN_BOTS`); ``replays``:
    recorded games listed in the lobby; ``tournament_db``: a tournament database whose games
    the lobby lists; ``allowed_hosts``: the only ``Host`` headers served (``cribenv serve`` on
    127.0.0.1 allows 127.0.0.1 and localhost, so a web page elsewhere cannot reach the table
    through DNS rebinding); ``db``: the SQLite file that keeps the games across restarts
    (``None``: memory only; a damaged file raises ``ValueError``); ``max_replay_bytes`` and
    ``max_replays_bytes``: the largest replay record, and all the replays held together;
    ``new_seed``: the seed of a new game whose request names none (default: drawn from the
    system's randomness; ``app.state.new_seed`` can be swapped, as the browser tests do to play
    the same deals on every machine)."""
    bots = dict(BUILT_IN_BOTS if bots is None else bots)
    if not bots:
        raise ValueError("the server needs at least one bot")
    if max_replays_bytes < max_replay_bytes:
        raise ValueError("max_replays_bytes must hold at least one replay of max_replay_bytes")
    names = opponent_names(bots)   # label -> the name the person sees
    about = {label: opponent_about(label, spec) for label, spec in bots.items()}
    by_name = {name.casefold(): label for label, name in names.items()}
    offered = lobby_order(bots)    # the built-in bots weakest first
    default_bot = next(iter(bots))
    saved = SavedGames(db, ttl_s) if db is not None else None
    app = FastAPI(title="cribenv table", docs_url=None, redoc_url=None, openapi_url=None)

    def restore(key: str) -> Table | None:
        """A game kept in the database before a restart, played again from its moves."""
        record = saved.load(key)
        if record is None:
            return None
        try:
            label, spec = record.get("bot_label"), record.get("bot")
            if bots.get(label) != spec:
                raise ValueError(f"its bot {str(label)[:40]!r} ({str(spec)[:60]}) is not "
                                 "offered now")
            return Table.from_record(record)
        except Exception as exc:   # a bot that cannot be built, too: said
            if not isinstance(exc, ValueError):
                log.exception("cribenv serve: game %s not restored", key[:8])
            saved.delete(key)
            raise ValueError(f"the server restarted and could not restore it: {exc}") \
                from None

    games: Store[Table] = Store(
        ttl_s=ttl_s, max_items=max_games, what="game",
        finished=lambda table: table.stage == "over",
        on_drop=None if saved is None else saved.delete,
        restore=None if saved is None else restore,
        secret=None if saved is None else saved.secret())
    replay_store: Store[Replay] = Store(ttl_s=ttl_s, max_items=max_games, what="replay",
                                        size=lambda replay: replay.size,
                                        max_bytes=max_replays_bytes)
    app.state.games = games
    app.state.replays = replay_store
    app.state.saved = saved
    app.state.new_seed = new_seed or (lambda: secrets.randbelow(2**31))

    def keep(key: str, table: Table) -> None:
        """Write the game to the database, if there is one (after every move)."""
        if saved is None:
            return
        with table.lock:   # the latest record wins, whichever request writes it
            try:
                saved.save(key, table.to_record())
            except ValueError as exc:   # the disk, most likely: the game goes on in memory
                log.warning("cribenv serve: game %s not saved: %s", key[:8], exc)
    listed = [(r.title, f"/replay/{replay_store.add(r)}") for r in replays]
    rows = tournament_games(tournament_db) if tournament_db else []
    listed += [(f"tournament: {r['agent_a']} v {r['agent_b']}, deal {r['deal']}, seating "
                f"{r['seating']} ({r['seat0']} {r['score0']} - {r['seat1']} {r['score1']})",
                f"/tournament/{i}") for i, r in enumerate(rows)]
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    if allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return _error(413, f"request too large (at most {MAX_BODY // 1024} kB)")
        if request.method == "POST":
            refusal = _cross_site(request)
            if refusal is not None:
                return refusal
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, "bad request: " + "; ".join(
            f"{'.'.join(str(x) for x in e['loc'][1:]) or 'body'}: {e['msg']}"
            for e in exc.errors()))

    def lobby(settings: dict[str, Any] | None = None, open_about: bool = False) -> str:
        return lobby_html(offered, {"bot": default_bot, **(settings or {})}, replays=listed,
                          names=names, about=about, open_about=open_about)

    def new_table(body: Mapping[str, Any]) -> Table:
        bot = body.get("bot", default_bot)
        if isinstance(bot, str) and bot not in bots:
            bot = by_name.get(bot.casefold(), bot)   # "Expert" as well as "expert"
        if not isinstance(bot, str) or bot not in bots:
            choices = ", ".join(b if names[b] == b else f"{names[b]} ({b})" for b in offered)
            raise MoveError(f"unknown bot {str(bot)[:40]!r}: choose one of {choices}")
        players = _int(body.get("players", 2), "players", (2, 3, 4))
        target = _int(body.get("target", 121), "target", (121, 61))
        advice = body.get("advice", False)
        muggins = body.get("muggins", False)
        for flag, value in (("advice", advice), ("muggins", muggins)):
            if not isinstance(value, bool):
                raise MoveError(f"{flag} must be true or false, got {value!r}")
        seed = body.get("seed")
        if seed is None:
            seed = app.state.new_seed()   # a seed to play the game again after a restart
        elif not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**62:
            raise MoveError(f"seed must be an integer 0..2**62, got {str(seed)[:40]!r}")
        try:
            return Table(Rules(num_players=players, target=target, muggins=muggins),
                         bot=bots[bot], seed=seed, advice=advice, bot_label=bot,
                         bot_name=names[bot])
        except Exception as exc:   # the bot cannot be built: said, not a 500
            log.exception("cribenv serve: bot %s could not be built", bot)
            raise _Refused(503, f"{names[bot]} cannot play now ({exc}): choose another "
                                "opponent") from None

    def settings(table: Table) -> dict[str, Any]:
        return {"bot": table.bot_label, "players": table.rules.num_players,
                "target": table.rules.target, "advice": table.advice_on,
                "muggins": table.rules.muggins}

    def state(table: Table, key: str) -> dict[str, Any]:
        game = table.game
        legal = game.legal_actions() if table.stage in ("discard", "play") else []
        return {"id": key, "seq": table.seq, "stage": table.stage,
                "legal": [C.to_str(c) for c in legal], "need": table.need,
                "claims_due": table.claims_due,
                "scores": list(game.scores), "hand": game.hand_number,
                "winner": table.winner, "forfeit": table.forfeit,
                "opponent": table.bot_name, "url": f"/game/{key}",
                **({"record_url": f"/game/{key}/record", "replay_url": f"/game/{key}/replay",
                    "review_url": f"/game/{key}/review"}
                   if table.stage == "over" else {}),
                "html": table_html(table, key)}

    @app.get("/", response_class=HTMLResponse)
    def lobby_page() -> str:
        return page("Cribbage", lobby(open_about=True)
                    + '<div id="table" data-stage="lobby"><p class="welcome">Choose an '
                      "opponent and start a new game.</p></div>")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.post("/api/games")
    async def create(request: Request) -> JSONResponse:
        body = await _json(request)
        if isinstance(body, JSONResponse):
            return body
        try:
            table = new_table(body)
        except MoveError as exc:
            return _error(400, str(exc))
        except _Refused as exc:
            return _error(exc.status, str(exc))
        key = games.add(table)   # a full store makes room: a new game is always possible
        await _in_thread(keep, key, table)
        return JSONResponse(state(table, key), status_code=201)

    @app.get("/game/{key}", response_class=HTMLResponse)
    def game_page(key: str) -> HTMLResponse:
        try:
            table = games.get(key)
        except UnknownItemError as exc:
            return HTMLResponse(page("Cribbage", lobby()
                                     + f'<div id="table" data-stage="lobby"><p class="error">'
                                       f'{escape(str(exc))}</p></div>'), status_code=404)
        with table.lock:
            html = table_html(table, key)
        return HTMLResponse(page("Cribbage", lobby(settings(table)) + html))

    def finished(key: str) -> tuple[Table, dict[str, Any]]:
        """The finished game ``key`` and its record (:meth:`Table.game_record`); ``_Refused``
        404 for an unknown game, 409 for one still being played."""
        try:
            table = games.get(key)   # after a restart: played again from the database
        except UnknownItemError as exc:
            raise _Refused(404, str(exc)) from None
        with table.lock:
            try:
                return table, table.game_record()
            except MoveError as exc:
                raise _Refused(409, str(exc)) from None

    @app.get("/game/{key}/record")
    async def game_record(key: str) -> Response:
        try:
            table, record = await _in_thread(finished, key)
        except _Refused as exc:
            return _error(exc.status, str(exc))
        ended = time.localtime(table.ended if table.ended is not None else time.time())
        name = f"cribbage-{time.strftime('%Y%m%d-%H%M', ended)}.json"
        return Response(json.dumps(record), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/game/{key}/replay", response_class=HTMLResponse)
    async def game_replay(key: str, step: int | None = None) -> HTMLResponse:
        try:
            table, record = await _in_thread(finished, key)
        except _Refused as exc:
            back = ('<a href="/">back</a>' if exc.status == 404 else
                    f'<a href="/game/{escape(key)}">back to the game</a>')
            return HTMLResponse(page("Replay", f'<p class="error">{escape(str(exc))}</p>'
                                     f"{back}"), status_code=exc.status)
        try:
            title = f"your game against {table.bot_name}" + (
                f" ({table.bot_name} forfeited it)" if table.forfeit else "")
            replay = Replay.from_record(record, title=title)
        except ValueError as exc:   # a game of this server replays; said, not a 500, if not
            return HTMLResponse(page("Replay", f'<p class="error">{escape(str(exc))}</p>'),
                                status_code=500)
        return _replay_page(replay, step, key, base=f"/game/{key}/replay", links=[
            ("back to the game", f"/game/{key}", False),
            ("download the record", f"/game/{key}/record", True)])

    @app.get("/game/{key}/review", response_class=HTMLResponse)
    async def game_review(key: str) -> HTMLResponse:
        try:
            table, _ = await _in_thread(finished, key)
        except _Refused as exc:
            back = ('<a href="/">back</a>' if exc.status == 404 else
                    f'<a href="/game/{escape(key)}">back to the game</a>')
            why = (str(exc) if exc.status == 404 else "the review opens when the game is "
                   "over (it shows every card)")
            return HTMLResponse(page("Review", f'<p class="error">{escape(why)}</p>'
                                     f"{back}"), status_code=exc.status)
        try:   # the first request works it out (about a second), the next ones read it
            review = await _in_thread(table.game_review)
        except ValueError as exc:   # said, not a 500 page, should a saved game not replay
            return HTMLResponse(page("Review", f'<p class="error">{escape(str(exc))}</p>'),
                                status_code=500)
        return HTMLResponse(page(f"Review: your game against {table.bot_name}",
                                 review_html(review, key, table.seat_names())))

    @app.get("/api/games/{key}")
    def game_state(key: str) -> JSONResponse:
        try:
            table = games.get(key)
        except UnknownItemError as exc:
            return _error(404, str(exc))
        with table.lock:
            return JSONResponse(state(table, key))

    @app.post("/api/games/{key}/move")
    async def move(key: str, request: Request) -> JSONResponse:
        body = await _json(request)
        if isinstance(body, JSONResponse):
            return body
        try:
            table = await _in_thread(games.get, key)   # after a restart: replays the game
        except UnknownItemError as exc:
            return _error(404, str(exc))
        cards = body.get("cards", [])
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            return _error(400, f"cards must be a list of cards like [\"5H\"], got "
                               f"{str(cards)[:60]}")
        claims = body.get("claims", {})
        if not isinstance(claims, dict):
            return _error(400, f"claims must be an object like {{\"hand\": 8}}, got "
                               f"{str(claims)[:60]}")
        try:
            await _in_thread(table.act, body.get("seq"), cards, body.get("action", "cards"),
                             claims)
        except StaleMoveError as exc:
            return _error(409, str(exc))
        except MoveError as exc:
            return _error(400, str(exc))
        await _in_thread(keep, key, table)
        with table.lock:
            return JSONResponse(state(table, key))

    @app.post("/replays")
    async def open_replay(request: Request):
        body = await _body(request)
        if isinstance(body, JSONResponse):
            return body
        raw = body.decode("utf-8", "replace")
        text = raw
        if request.headers.get("content-type", "").startswith(
                "application/x-www-form-urlencoded"):
            text = parse_qs(raw).get("record", [""])[0]
        try:
            replay = Replay.from_record(text, max_bytes=max_replay_bytes)
        except ValueError as exc:
            status = 413 if isinstance(exc, RecordTooLargeError) else 400
            return HTMLResponse(page("Replay", f'<p class="error">This is not a game this '
                                     f'server can replay: {escape(str(exc))}</p><a href="/">'
                                     "back</a>"), status_code=status)
        key = replay_store.add(replay)   # the replays unseen longest make room
        return RedirectResponse(f"/replay/{key}", status_code=303)

    @app.get("/replay/{key}", response_class=HTMLResponse)
    def show_replay(key: str, step: int | None = None) -> HTMLResponse:
        try:
            replay = replay_store.get(key)
        except UnknownItemError as exc:
            return HTMLResponse(page("Replay", f'<p class="error">{escape(str(exc))}</p>'),
                                status_code=404)
        return _replay_page(replay, step, key)

    @app.get("/tournament/{index}")
    def open_tournament_game(index: int):
        if not 0 <= index < len(rows):
            return HTMLResponse(page("Replay", f'<p class="error">no tournament game {index} '
                                     f"(the database has {len(rows)})</p>"), status_code=404)
        try:
            replay = tournament_replay(rows[index])
            key = replay_store.add(replay)
        except ValueError as exc:
            return HTMLResponse(page("Replay", f'<p class="error">{escape(str(exc))}</p>'),
                                status_code=400)
        return RedirectResponse(f"/replay/{key}?step=0", status_code=303)

    return app


def _replay_page(replay: Replay, step: int | None, key: str, base: str | None = None,
                 links: Sequence[tuple[str, str, bool]] = ()) -> HTMLResponse:
    """The page of ``replay`` after ``step`` moves (the end by default)."""
    at = replay.total if step is None else step
    if not 0 <= at <= replay.total:
        return HTMLResponse(page("Replay", f'<p class="error">step must be 0..'
                                 f'{replay.total}, got {at}</p>'), status_code=400)
    game = replay.game_at(at)
    return HTMLResponse(page(f"Replay: {replay.title}", replay_html(
        game, at, replay.total, replay.labels, key, replay.hand_starts, base=base,
        links=links)))


async def _in_thread(fn, *args):
    """Run a blocking call (a bot's move) off the event loop."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


async def _body(request: Request) -> bytes | JSONResponse:
    """The request's body, read as it streams in and refused (413) once it passes
    :data:`MAX_BODY`: a chunked body without a Content-Length is bounded too."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return _error(413, f"request too large (at most {MAX_BODY // 1024} kB)")
        chunks.append(chunk)
    return b"".join(chunks)


def _cross_site(request: Request) -> JSONResponse | None:
    """A 403 for a POST another site's page sent (its ``Origin`` or ``Sec-Fetch-Site`` says
    so; ``Origin: null``, an opaque origin such as a sandboxed frame's or a file's, is not this
    site), a 415 for an API POST whose media type is not ``application/json`` (what a form or
    a ``text/plain`` fetch from another site can send without asking); ``None`` if fine."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is not None and urlsplit(origin).netloc != host:
        return _error(403, f"cross-site request refused (Origin {origin[:60]!r}, not {host!r})")
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return _error(403, f"cross-site request refused (Sec-Fetch-Site {site[:30]!r})")
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if request.url.path.startswith("/api/") and media_type != "application/json":
        return _error(415, "the API takes application/json")
    return None


async def _json(request: Request) -> dict[str, Any] | JSONResponse:
    raw = await _body(request)
    if isinstance(raw, JSONResponse):
        return raw
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return _error(400, "the request body must be a JSON object")
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object")
    return body


def _int(value: Any, name: str, allowed: Sequence[int]) -> int:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value not in allowed:
        raise MoveError(f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return value

