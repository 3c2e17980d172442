"""A game's pages: ``GET /game/ID`` (the game's page, the lobby's form above it) and, once it
is over, ``GET /game/ID/record`` (its ``Game.to_json()`` record as a file to save, with the
seats' ``names``), ``GET /game/ID/replay?step=N`` (the game step by step; it lasts as long as
the game is kept, across restarts with ``db``) and ``GET /game/ID/review`` (every decision of
a 2-player game against the strongest agent's, the worst three first:
:mod:`webtable.review`; worked out on the first request and kept with the game)."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from webtable.render import error_page, lobby_page, page
from webtable.replay import Replay
from webtable.review_page import review_html
from webtable.routes.replay_pages import replay_page
from webtable.server import Refused, error, in_thread, server
from webtable.sessions import UnknownItemError
from webtable.table import Table
from webtable.views import table_html

router = APIRouter()


def settings(table: Table) -> dict[str, Any]:
    """The lobby form's settings for another game like ``table``'s."""
    return {"bot": table.bot_label, "players": table.rules.num_players,
            "target": table.rules.target, "advice": table.advice_on,
            "muggins": table.rules.muggins}


@router.get("/game/{key}", response_class=HTMLResponse)
def game_page(key: str, request: Request) -> HTMLResponse:
    srv = server(request)
    try:
        table = srv.games.get(key)
    except UnknownItemError as exc:
        return HTMLResponse(lobby_page(srv.lobby(), error=str(exc)), status_code=404)
    with table.lock:
        html = table_html(table, key)
    return HTMLResponse(page("Cribbage", srv.lobby(settings(table)) + html))


@router.get("/game/{key}/record")
async def game_record(key: str, request: Request) -> Response:
    try:
        table, record = await in_thread(server(request).finished, key)
    except Refused as exc:
        return error(exc.status, str(exc))
    ended = time.localtime(table.ended if table.ended is not None else time.time())
    name = f"cribbage-{time.strftime('%Y%m%d-%H%M', ended)}.json"
    return Response(json.dumps(record), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@router.get("/game/{key}/replay", response_class=HTMLResponse)
async def game_replay(key: str, request: Request, step: int | None = None) -> HTMLResponse:
    try:
        table, record = await in_thread(server(request).finished, key)
    except Refused as exc:
        back = ("/", "back") if exc.status == 404 else (f"/game/{key}", "back to the game")
        return HTMLResponse(error_page("Replay", str(exc), back), status_code=exc.status)
    try:
        title = f"your game against {table.bot_name}" + (
            f" ({table.bot_name} forfeited it)" if table.forfeit else "")
        replay = Replay.from_record(record, title=title)
    except ValueError as exc:   # a game of this server replays; said, not a 500, if not
        return HTMLResponse(error_page("Replay", str(exc)), status_code=500)
    return replay_page(replay, step, key, base=f"/game/{key}/replay", links=[
        ("back to the game", f"/game/{key}", False),
        ("download the record", f"/game/{key}/record", True)])


@router.get("/game/{key}/review", response_class=HTMLResponse)
async def game_review(key: str, request: Request) -> HTMLResponse:
    try:
        table, _ = await in_thread(server(request).finished, key)
    except Refused as exc:
        back = ("/", "back") if exc.status == 404 else (f"/game/{key}", "back to the game")
        why = (str(exc) if exc.status == 404 else "the review opens when the game is "
               "over (it shows every card)")
        return HTMLResponse(error_page("Review", why, back), status_code=exc.status)
    try:   # the first request works it out (about a second), the next ones read it
        review = await server(request).think(table.game_review)
    except ValueError as exc:   # said, not a 500 page, should a saved game not replay
        return HTMLResponse(error_page("Review", str(exc)), status_code=500)
    return HTMLResponse(page(f"Review: your game against {table.bot_name}",
                             review_html(review, key, table.seat_names())))
