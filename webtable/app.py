"""The web app (FastAPI): the table, the replays and the static files.

``create_app(bots)`` builds it; ``bots`` maps the names a page may choose to agent specs, fixed
when the server starts (the built-in bots and any given on the command line), so a request can
never make the server load a file. Games live in a :class:`~webtable.sessions.Store` under
ids that cannot be guessed and expire (a full store drops finished and idle games to make
room); with ``db`` each is also kept in SQLite after every move
(:mod:`webtable.saved_games`), so a restarted server plays it on where it stood.

The lobby offers the built-in bots by the names of :data:`webtable.opponents.OPPONENTS`
(Beginner, Greedy, Self-taught, Expert, Graduate, Prodigy, Master, Champion), each with a
line on how it plays; a request names a bot by its label (``expert``, ``ppo:shipped``: what
the page sends) or by that name.

The routes are in :mod:`webtable.routes`, one module per part of the site: ``/`` the lobby
(:mod:`~webtable.routes.lobby`), ``/api/games...`` the JSON API
(:mod:`~webtable.routes.api`), ``/game/ID...`` a game's pages
(:mod:`~webtable.routes.game_pages`), ``/replays``, ``/replay/ID`` and ``/tournament/N`` the
replays (:mod:`~webtable.routes.replay_pages`); what they share is the app's
:class:`~webtable.server.Server`. This module puts them together with the checks every
request passes (its size, its origin, its host).
"""

from __future__ import annotations

import importlib.util
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from webtable.opponents import PRODIGY
from webtable.replay import MAX_RECORD_BYTES, Replay
from webtable.routes import api, game_pages, lobby, replay_pages
from webtable.server import MAX_BODY, MAX_REPLAYS_BYTES, THINK_S, Server, cross_site, error

__all__ = ["BUILT_IN_BOTS", "create_app"]

STATIC = Path(__file__).resolve().parent / "static"
BUILT_IN_BOTS = {"expert": "expert", "greedy": "greedy", "random": "random",
                 "ppo:scratch": "ppo:scratch", "ppo:scratch-exit": "ppo:scratch-exit",
                 "ppo:shipped": "ppo:shipped"}
if importlib.util.find_spec("numba") is not None:   # the batched engine: the 'vector' extra
    # ppo:scratch's plays checked by search over its own models (results/from-rules), and
    # the strongest: ppo:shipped's checked by search (results/search)
    BUILT_IN_BOTS[PRODIGY] = PRODIGY
    BUILT_IN_BOTS["search:ppo:shipped"] = "search:ppo:shipped"


def create_app(bots: Mapping[str, str] | None = None, *, ttl_s: float = 6 * 3600,
               max_games: int = 1000, replays: Sequence[Replay] = (),
               tournament_db: str | None = None,
               allowed_hosts: Sequence[str] | None = None,
               db: str | os.PathLike[str] | None = None,
               max_replay_bytes: int = MAX_RECORD_BYTES,
               max_replays_bytes: int = MAX_REPLAYS_BYTES,
               new_seed: Callable[[], int] | None = None,
               think_s: float | None = THINK_S, bot_threads: int | None = None) -> FastAPI:
    """The app. ``bots``: name -> agent spec (default :data:`BUILT_IN_BOTS`); ``replays``:
    recorded games listed in the lobby; ``tournament_db``: a tournament database whose games
    the lobby lists; ``allowed_hosts``: the only ``Host`` headers served (``cribenv serve`` on
    127.0.0.1 allows 127.0.0.1 and localhost, so a web page elsewhere cannot reach the table
    through DNS rebinding); ``db``: the SQLite file that keeps the games across restarts
    (``None``: memory only; a damaged file raises ``ValueError``); ``max_replay_bytes`` and
    ``max_replays_bytes``: the largest replay record, and all the replays held together;
    ``new_seed``: the seed of a new game whose request names none (default: drawn from the
    system's randomness; ``app.state.new_seed`` can be swapped, as the browser tests do to play
    the same deals on every machine); ``think_s`` and ``bot_threads``: the bots' time to
    move and the threads they think in (:class:`~webtable.server.Server`)."""
    server = Server(BUILT_IN_BOTS if bots is None else bots, ttl_s=ttl_s,
                    max_games=max_games, replays=replays, tournament_db=tournament_db, db=db,
                    max_replay_bytes=max_replay_bytes, max_replays_bytes=max_replays_bytes,
                    think_s=think_s, bot_threads=bot_threads)
    app = FastAPI(title="cribenv table", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.server = server
    app.state.games = server.games
    app.state.replays = server.replays
    app.state.saved = server.saved
    app.state.new_seed = new_seed or (lambda: secrets.randbelow(2**31))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    if allowed_hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        seen: set[str] = set()
        for key, _ in request.query_params.multi_items():
            if key in seen:   # which one would count is a guess: refused, named
                return error(400, f"query key {key[:40]!r} given more than once; give it "
                                  "once")
            seen.add(key)
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return error(413, f"request too large (at most {MAX_BODY // 1024} kB)")
        if request.method == "POST":
            refusal = cross_site(request)
            if refusal is not None:
                return refusal
        return await call_next(request)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error(400, "bad request: " + "; ".join(
            f"{'.'.join(str(x) for x in e['loc'][1:]) or 'body'}: {e['msg']}"
            for e in exc.errors()))

    for routes in (lobby, api, game_pages, replay_pages):
        app.include_router(routes.router)
    return app
