"""Whatever a player or a file puts in a page is escaped by the templates (Jinja2, autoescape
on): a bot's label and name, the names and the words of a recorded game, an error's words."""

from __future__ import annotations

import json
import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("jinja2")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from cribenv.game import Game, Rules  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.views import lobby_html  # noqa: E402

HOSTILE = '<script>alert("x")</script>'
QUOTED = "x\" onmouseover=\"alert('y')"


def escaped(text: str) -> bool:
    """Neither hostile string got in as markup; the first did, as words."""
    return (HOSTILE not in text and QUOTED not in text and 'onmouseover="' not in text
            and "&lt;script&gt;alert(" in text)


def finished_record(names: list[str]) -> str:
    game = Game(Rules(target=61), seed=3)
    while not game.is_over:
        game.step(game.legal_actions()[0])
    return json.dumps({**game.to_record(), "names": names})


def test_a_bot_label_and_its_words_are_escaped_in_the_lobby():
    html = lobby_html([HOSTILE, QUOTED], names={QUOTED: HOSTILE},
                      about={HOSTILE: HOSTILE, QUOTED: QUOTED},
                      replays=[(HOSTILE, f"/replay/{QUOTED}")])
    assert escaped(html)


def test_a_bot_label_is_escaped_in_the_lobby_and_on_the_game_page():
    with TestClient(create_app(bots={HOSTILE: "random", QUOTED: "greedy"})) as c:
        assert escaped(c.get("/").text)
        game = c.post("/api/games", json={"bot": HOSTILE, "seed": 1}).json()
        assert escaped(game["html"]) and escaped(c.get(game["url"]).text)
        other = c.post("/api/games", json={"bot": QUOTED, "seed": 1}).json()
        assert QUOTED not in c.get(other["url"]).text


def test_a_recorded_games_names_and_a_broken_records_words_are_escaped():
    with TestClient(create_app()) as c:
        r = c.post("/replays", data={"record": finished_record([HOSTILE, QUOTED])})
        assert r.status_code == 200 and escaped(r.text)
        assert r.text.count("<script") == 1   # the page's own script, no other
        r = c.post("/replays", data={"record": json.dumps({"format": HOSTILE})})
        assert r.status_code == 400 and escaped(r.text)
        r = c.get(f"/replay/{HOSTILE}")
        assert r.status_code == 404 and HOSTILE not in r.text
