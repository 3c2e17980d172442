"""The web table a player comes back to, over HTTP: the lobby's opponents named for people
(the engine specs still work), the log in a player's words, the favicon, and at the end of a
game its record to download and a replay link that opens again after a reload or a restart."""

from __future__ import annotations

import html
import re
import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from web_tables import finished_game  # noqa: E402

from cribenv.game import Game  # noqa: E402
from webtable.app import BUILT_IN_BOTS, create_app  # noqa: E402

NAMES = {"random": "Beginner", "greedy": "Greedy", "ppo:scratch": "Self-taught",
         "expert": "Expert", "ppo:scratch-exit": "Graduate",
         "search:ppo:scratch?models=own&playouts=300": "Prodigy",
         "ppo:shipped": "Master", "search:ppo:shipped": "Champion"}


@pytest.fixture
def client():
    with TestClient(create_app()) as c:
        yield c


def new_game(c, **settings):
    r = c.post("/api/games", json={"bot": "greedy", "seed": 7, "target": 61, **settings})
    assert r.status_code == 201, r.text
    return r.json()


def test_the_favicon_answers(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg") and len(r.content) < 2000
    assert client.get("/static/favicon.svg").status_code == 200
    assert '<link rel="icon" href="/static/favicon.svg"' in client.get("/").text


def test_the_lobby_names_the_opponents_for_people(client):
    page = client.get("/").text
    offered = [b for b in NAMES if b in BUILT_IN_BOTS]
    options = re.findall(r'<option value="([^"]+)"( selected)? title="([^"]+)">([^<]+)</option>',
                         page)
    assert [(html.unescape(v), name) for v, _, _, name in options] == \
        [(b, NAMES[b]) for b in offered]
    assert [v for v, sel, _, _ in options if sel] == ["expert"]   # the default, as before
    listed = re.findall(r'<li data-bot="([^"]+)"><b>([^<]+)</b> ([^<]+)</li>', page)
    assert [(html.unescape(b), n) for b, n, _ in listed] == [(b, NAMES[b]) for b in offered]
    assert all(len(line) > 20 for _, _, line in listed)   # one line on how each plays
    assert '<details class="who-plays" open>' in page
    if "search:ppo:shipped" in offered:
        assert "10-20 ms a card" in dict((b, t) for b, _, t in listed)["search:ppo:shipped"]


@pytest.mark.parametrize("bot,name", [("ppo:shipped", "Master"), ("Master", "Master"),
                                      ("master", "Master"), ("random", "Beginner")])
def test_a_game_is_made_by_spec_or_by_name(client, bot, name):
    state = new_game(client, bot=bot)
    assert state["opponent"] == name
    table = client.app.state.games.get(state["id"])
    assert table.bot_label == {"Master": "ppo:shipped", "master": "ppo:shipped"}.get(bot, bot)
    html = client.get(state["url"]).text
    assert f"<h4>{name}" in html
    assert re.findall(r'class="lane-name"[^>]*>([^<]+)<', html) == ["You", name]
    assert "ppo:shipped<" not in html.split("</header>", 1)[1]   # the spec is not shown
    r = client.post("/api/games", json={"bot": "Grandmaster"})
    assert r.status_code == 400 and "choose one of Beginner (random), Greedy (greedy)" in \
        r.json()["error"]


def test_a_bot_given_on_the_command_line_keeps_its_label():
    with TestClient(create_app({"mine": "greedy", "expert": "expert"})) as c:
        page = c.get("/").text
        assert '<option value="expert" selected title=' not in page   # the first given
        assert re.search(r'<option value="mine" selected title="was given when the server '
                         r'started \(greedy\)">mine</option>', page)
        state = new_game(c, bot="mine")
        assert state["opponent"] == "mine"


def test_the_log_says_each_score_in_words(client):
    state, table = finished_game(client)
    game = table.game
    log = re.findall(r"<li>([^<]*)</li>", client.get(state["url"]).text)
    assert log and not any(line.startswith("greedy") for line in log)
    laid = [line for line in log if re.match(r"(You lay|Greedy lays) \w\w: \d+", line)]
    assert laid and any(re.search(r": \d+, .* for \d+$", line) for line in log)
    # the result names the opponent too
    assert re.search(r"<b>(You win|Greedy wins)</b>", state["html"])
    assert game.is_over


def test_the_record_downloads_at_the_end(client):
    state = new_game(client)
    for url in (f"/game/{state['id']}/record", f"/game/{state['id']}/replay"):
        r = client.get(url)   # mid-game the record would show every hidden card
        assert r.status_code == 409 and "when the game is over" in r.text
    assert "record_url" not in state and "Download the record" not in state["html"]
    state, table = finished_game(client)
    assert state["stage"] == "over"
    html = state["html"]
    assert 'data-action="new">New game</button>' in html
    assert f'<a class="button" href="/game/{state["id"]}/record" download>Download the record' \
        in html
    assert f'<a class="button" rel="replay" href="/game/{state["id"]}/replay">' in html
    r = client.get(state["record_url"])
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert re.fullmatch(r'attachment; filename="cribbage-\d{8}-\d{4}\.json"',
                        r.headers["content-disposition"])
    record = r.json()
    assert record["format"] == "cribenv-game/1" and record["names"] == ["You", "Greedy"]
    assert Game.from_record(record).scores == table.game.scores
    assert Game.from_json(r.text).to_record() == table.game.to_record()
    # pasted back into the lobby, it replays with the seats' names
    r = client.post("/replays", data={"record": r.text}, follow_redirects=False)
    page = client.get(r.headers["location"]).text
    assert re.findall(r'class="lane-name"[^>]*>([^<]+)<', page) == ["You", "Greedy"]
    assert client.get("/game/nope/record").status_code == 404


def test_the_replay_link_opens_again_after_a_reload_and_a_restart(tmp_path):
    db = tmp_path / "games.sqlite"
    with TestClient(create_app(db=db)) as c:
        state, table = finished_game(c)
        key = state["id"]
        c.app.state.saved.save(key, table.to_record())   # moved past the API: saved here
        url = state["replay_url"]
        assert url == f"/game/{key}/replay"
        first = c.get(url)
        download = c.get(f"/game/{key}/record")
        assert first.status_code == 200 and c.get(url).text == first.text   # a reload
    total = len(table.game.actions)
    assert f'data-step="{total}"' in first.text and "data-winner" in first.text
    assert re.findall(r'class="lane-name"[^>]*>([^<]+)<', first.text) == ["You", "Greedy"]
    assert f'href="/game/{key}/replay?step={total - 1}"' in first.text
    assert f'href="/game/{key}/record" download>' in first.text
    assert f'href="/game/{key}">back to the game' in first.text
    with TestClient(create_app(db=db)) as again:   # the server restarted
        assert again.get(url).text == first.text
        start = again.get(url + "?step=0")
        assert start.status_code == 200 and 'data-step="0"' in start.text
        assert again.get(url + f"?step={total + 1}").status_code == 400
        # the same file again: the same name (the time the game ended) and the same record
        after = again.get(f"/game/{key}/record")
        assert after.headers["content-disposition"] == download.headers["content-disposition"]
        assert after.json() == download.json()
        assert again.get("/game/nope/replay").status_code == 404
