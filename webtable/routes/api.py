"""The game's JSON API, what the page's script calls: ``POST /api/games`` (a new game; JSON
``{bot, players, target, advice, muggins}``, and ``seed`` optionally), ``GET /api/games/ID``
(its state) and ``POST /api/games/ID/move`` (JSON ``{seq, action, cards, claims}``). Each
answers the game's :func:`state`, with the table's HTML for the page to swap in."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from cribenv import cards as C
from webtable.server import Refused, error, in_thread, read_json, server
from webtable.sessions import UnknownItemError
from webtable.table import MoveError, StaleMoveError, Table
from webtable.views import table_html

router = APIRouter()
#: The keys of a request body, each route's (any other is refused, named).
GAME_KEYS = ("bot", "players", "target", "advice", "muggins", "seed")
MOVE_KEYS = ("seq", "action", "cards", "claims")


def unknown_key(body: dict[str, Any], allowed: tuple[str, ...]) -> JSONResponse | None:
    """A 400 naming the first key of ``body`` not in ``allowed`` (a misspelt ``claim``
    would otherwise be dropped unseen), or ``None``."""
    extra = [k for k in body if k not in allowed]
    if not extra:
        return None
    return error(400, f"unknown key {extra[0][:40]!r} in the request (it takes "
                      f"{', '.join(allowed)})")


def state(table: Table, key: str) -> dict[str, Any]:
    """What the API says of the game ``key``: its move number, stage, legal cards, scores,
    the links of a finished game, and the table's HTML."""
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


@router.post("/api/games")
async def create(request: Request) -> JSONResponse:
    body = await read_json(request)
    if isinstance(body, JSONResponse):
        return body
    if (refusal := unknown_key(body, GAME_KEYS)) is not None:
        return refusal
    srv = server(request)
    try:
        table = srv.new_table(body, request.app.state.new_seed)
    except MoveError as exc:
        return error(400, str(exc))
    except Refused as exc:
        return error(exc.status, str(exc))
    key = srv.games.add(table)   # a full store makes room: a new game is always possible
    await in_thread(srv.keep, key, table)
    return JSONResponse(state(table, key), status_code=201)


@router.get("/api/games/{key}")
def game_state(key: str, request: Request) -> JSONResponse:
    try:
        table = server(request).games.get(key)
    except UnknownItemError as exc:
        return error(404, str(exc))
    with table.lock:
        return JSONResponse(state(table, key))


@router.post("/api/games/{key}/move")
async def move(key: str, request: Request) -> JSONResponse:
    arrived = time.monotonic()
    body = await read_json(request)
    if isinstance(body, JSONResponse):
        return body
    if (refusal := unknown_key(body, MOVE_KEYS)) is not None:
        return refusal
    srv = server(request)
    try:
        table = await in_thread(srv.games.get, key)   # after a restart: replays the game
    except UnknownItemError as exc:
        return error(404, str(exc))
    cards = body.get("cards", [])
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        return error(400, f"cards must be a list of cards like [\"5H\"], got "
                          f"{str(cards)[:60]}")
    claims = body.get("claims", {})
    if not isinstance(claims, dict):
        return error(400, f"claims must be an object like {{\"hand\": 8}}, got "
                          f"{str(claims)[:60]}")
    try:
        await srv.think(table.act, body.get("seq"), cards, body.get("action", "cards"),
                        claims, deadline=srv.deadline(arrived))
    except StaleMoveError as exc:
        return error(409, str(exc))
    except MoveError as exc:
        return error(400, str(exc))
    await in_thread(srv.keep, key, table)
    with table.lock:
        return JSONResponse(state(table, key))
