"""What the web table refuses rather than guesses (issue 52, item 21): a key a request body
does not take (a misspelt ``claims``), a claim on a move that claims nothing, a query key given
twice, and a file that is not a regular one (a FIFO would block the server, which must not even
open it)."""

from __future__ import annotations

import os
import threading
import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from cribenv.cli import main  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.command import parse_bots  # noqa: E402


@pytest.fixture
def client():
    app = create_app({"greedy": "greedy"})
    with TestClient(app) as c:
        c.app_state = app.state
        yield c


def new_game(client, **settings):
    r = client.post("/api/games", json={"bot": "greedy", "seed": 7, **settings})
    assert r.status_code == 201, r.text
    return r.json()


def snapshot(client, key):
    table = client.app_state.games.get(key)
    return table.seq, table.stage, list(table.game.actions), list(table.moves)


@pytest.mark.parametrize("muggins", [False, True])
def test_a_move_with_a_key_it_does_not_take_is_refused_by_name(client, muggins):
    state = new_game(client, muggins=muggins)
    before = snapshot(client, state["id"])
    for body, key in (({"seq": 0, "action": "next", "claim": {"hand": 4}}, "claim"),
                      ({"seq": 0, "action": "next", "sqe": 1}, "sqe")):
        r = client.post(f"/api/games/{state['id']}/move", json=body)
        assert r.status_code == 400
        assert f"unknown key {key!r}" in r.json()["error"] and "seq, action, cards, claims" \
            in r.json()["error"]
    assert snapshot(client, state["id"]) == before


def test_a_new_game_with_a_key_it_does_not_take_is_refused_by_name(client):
    r = client.post("/api/games", json={"bot": "greedy", "muggin": True})
    assert r.status_code == 400 and "unknown key 'muggin'" in r.json()["error"]
    assert len(client.app_state.games) == 0


@pytest.mark.parametrize("muggins", [False, True])
def test_a_claim_on_a_move_that_claims_nothing_is_refused_by_name(client, muggins):
    """Moving on from the cut claims nothing: a claim there, known or not, is refused."""
    state = new_game(client, muggins=muggins)
    before = snapshot(client, state["id"])
    for claims in ({"foo": 3}, {"hand": 8}):
        r = client.post(f"/api/games/{state['id']}/move",
                        json={"seq": 0, "action": "next", "claims": claims})
        assert r.status_code == 400
        assert f"nothing to claim for {next(iter(claims))}" in r.json()["error"]
    assert snapshot(client, state["id"]) == before
    r = client.post(f"/api/games/{state['id']}/move", json={"seq": 0, "action": "next"})
    assert r.status_code == 200


@pytest.mark.parametrize("path", ["/?x=1&x=2", "/replay/abc?step=1&step=2",
                                  "/api/games/abc?seq=1&seq=1"])
def test_a_query_key_given_twice_is_refused_by_name(client, path):
    key = path.split("?")[1].split("=")[0]
    r = client.get(path)
    assert r.status_code == 400 and f"query key {key!r} given more than once" \
        in r.json()["error"]


def test_a_game_page_with_a_repeated_step_is_refused_once_given_once_opens(client):
    state = new_game(client)
    r = client.get(f"/game/{state['id']}?a=1&b=2")
    assert r.status_code == 200   # distinct keys are fine (and ignored)
    r = client.get(f"/game/{state['id']}/replay?step=1&step=3")
    assert r.status_code == 400 and "'step'" in r.json()["error"]


# ------------------------------------------------------------------ files that are not files

def finishes(fn, *args, seconds: float = 60):
    """``fn(*args)`` in a thread: its result or exception, or a failure if it blocks (on a
    FIFO nobody writes to) for ``seconds``."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args)
        except BaseException as exc:   # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{fn.__name__}{args} blocked"
    return out


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_search_table_that_is_a_fifo_is_refused_unread(fifo):
    pytest.importorskip("numba")
    out = finishes(parse_bots, [f"mine=search:expert?table={fifo}"])
    assert isinstance(out.get("error"), ValueError)
    assert "not a regular file" in str(out["error"]) and str(fifo) in str(out["error"])


@pytest.mark.parametrize("option", ["--replay", "--tournament-db"])
def test_serve_refuses_a_fifo_for_a_file_it_reads(fifo, option, capsys):
    out = finishes(main, ["serve", "--port", "0", "--db", ":memory:", option, str(fifo)])
    assert out.get("value") == 2, out
    err = capsys.readouterr().err
    assert "not a regular file" in err and str(fifo) in err and "Traceback" not in err


def test_a_tournament_database_with_a_question_mark_in_its_name_opens(tmp_path, capsys):
    """The database is opened read-only by a URI: a '?' or '#' in its name is quoted, not
    read as the URI's query (which named another file)."""
    from webtable.replay import tournament_games

    odd = tmp_path / "a?mode=rwc#b.sqlite"
    with pytest.raises(ValueError, match="no tournament database"):
        tournament_games(odd)
    odd.write_bytes(b"")
    with pytest.raises(ValueError, match="holds no tournament|is not a tournament database"):
        tournament_games(odd)
    assert sorted(p.name for p in tmp_path.iterdir()) == [odd.name]   # nothing made
