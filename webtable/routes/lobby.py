"""``GET /`` (the lobby: the new-game form, who plays how, the replays) and ``GET
/favicon.ico``."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse

from webtable.render import lobby_page as page_of_the_lobby
from webtable.server import server

STATIC = Path(__file__).resolve().parents[1] / "static"
router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def lobby_page(request: Request) -> str:
    return page_of_the_lobby(server(request).lobby(open_about=True))


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})
