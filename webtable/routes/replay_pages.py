"""Recorded games, step by step: ``POST /replays`` (open a ``Game.to_json()`` record, pasted
or sent), ``GET /replay/ID?step=N`` (a replay after ``N`` moves) and ``GET /tournament/N``
(the ``N``-th game of the tournament database given on the command line, opened as a
replay)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from webtable.render import error_page, page
from webtable.replay import RecordTooLargeError, Replay, tournament_replay
from webtable.server import read_body, server
from webtable.sessions import UnknownItemError
from webtable.views import replay_html

router = APIRouter()


def replay_page(replay: Replay, step: int | None, key: str, base: str | None = None,
                links: Sequence[tuple[str, str, bool]] = ()) -> HTMLResponse:
    """The page of ``replay`` after ``step`` moves (the end by default)."""
    at = replay.total if step is None else step
    if not 0 <= at <= replay.total:
        return HTMLResponse(error_page("Replay", f"step must be 0..{replay.total}, got {at}"),
                            status_code=400)
    game = replay.game_at(at)
    return HTMLResponse(page(f"Replay: {replay.title}", replay_html(
        game, at, replay.total, replay.labels, key, replay.hand_starts, base=base,
        links=links)))


@router.post("/replays")
async def open_replay(request: Request):
    body = await read_body(request)
    if isinstance(body, JSONResponse):
        return body
    srv = server(request)
    raw = body.decode("utf-8", "replace")
    text = raw
    if request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"):
        text = parse_qs(raw).get("record", [""])[0]
    try:
        replay = Replay.from_record(text, max_bytes=srv.max_replay_bytes)
    except ValueError as exc:
        status = 413 if isinstance(exc, RecordTooLargeError) else 400
        return HTMLResponse(error_page("Replay", f"This is not a game this server can replay: "
                                           f"{exc}", ("/", "back")), status_code=status)
    key = srv.replays.add(replay)   # the replays unseen longest make room
    return RedirectResponse(f"/replay/{key}", status_code=303)


@router.get("/replay/{key}", response_class=HTMLResponse)
def show_replay(key: str, request: Request, step: int | None = None) -> HTMLResponse:
    try:
        replay = server(request).replays.get(key)
    except UnknownItemError as exc:
        return HTMLResponse(error_page("Replay", str(exc)), status_code=404)
    return replay_page(replay, step, key)


@router.get("/tournament/{index}")
def open_tournament_game(index: int, request: Request):
    srv = server(request)
    rows = srv.tournament_rows
    if not 0 <= index < len(rows):
        return HTMLResponse(error_page("Replay", f"no tournament game {index} (the database "
                                           f"has {len(rows)})"), status_code=404)
    try:
        replay = tournament_replay(rows[index])
        key = srv.replays.add(replay)
    except ValueError as exc:
        return HTMLResponse(error_page("Replay", str(exc)), status_code=400)
    return RedirectResponse(f"/replay/{key}?step=0", status_code=303)
