"""The web table's limits and its memory across restarts: a full server makes room (finished
games, then the idle ones) instead of turning people away; games kept in SQLite come back after
a restart exactly where they stood, and an id that cannot come back says why (a made-up one:
that it was never made); replay records are capped in size, one by one and all together, and
checked as the engine checks its rules."""

from __future__ import annotations

import json
import sqlite3
import warnings

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from web_tables import finish  # noqa: E402

from cribenv import cards as C  # noqa: E402
from cribenv.game import Game, Rules  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.replay import MAX_MOVES, Replay  # noqa: E402
from webtable.saved_games import SavedGames  # noqa: E402
from webtable.sessions import Store, UnknownItemError  # noqa: E402


def new_game(c, **settings):
    r = c.post("/api/games", json={"bot": "greedy", **settings})
    assert r.status_code == 201, r.text
    return r.json()


def step(c, state, pick=0):
    """One move of the person through the API (the first legal cards, or moving on)."""
    body = {"seq": state["seq"]}
    if state["stage"] in ("cut", "show"):
        body["action"] = "next"
    elif state["stage"] == "count":   # Muggins: the show counted as nothing
        body["action"] = "count"
        body["claims"] = {what: 0 for what in state["claims_due"]}
    else:
        table = c.app.state.games.get(state["id"])
        need = (state["need"] - len(table.game.discards[table.human])
                if state["stage"] == "discard" else 1)
        pick = min(pick, len(state["legal"]) - need)
        body["cards"] = state["legal"][pick:pick + need]
        if state["claims_due"]:
            body["claims"] = {what: 0 for what in state["claims_due"]}
    r = c.post(f"/api/games/{state['id']}/move", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def played(seed=4, target=61):
    game = Game(Rules(target=target), seed=seed)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    return game.to_record()


# ------------------------------------------------------------------ a full server makes room

def test_a_full_store_drops_finished_items_then_the_idle_ones():
    now = [0.0]
    done = set()
    store: Store[str] = Store(ttl_s=600, max_items=3, clock=lambda: now[0],
                              finished=lambda item: item in done)
    keys = {}
    for name in ("a", "b", "c"):
        now[0] += 1
        keys[name] = store.add(name)
    done.add("b")
    now[0] += 1
    store.get(keys["a"])                # a is used again: c is now the idlest
    keys["d"] = store.add("d")          # full: the finished one goes first
    with pytest.raises(UnknownItemError, match="dropped to make room"):
        store.get(keys["b"])
    keys["e"] = store.add("e")          # nothing finished: the one idle longest
    with pytest.raises(UnknownItemError, match="dropped to make room"):
        store.get(keys["c"])
    assert [store.get(keys[k]) for k in "ade"] == ["a", "d", "e"] and len(store) == 3


def test_a_full_server_still_starts_a_new_game():
    """It once answered 503 for up to 6 hours after 1,000 games."""
    app = create_app({"greedy": "greedy"}, max_games=2)
    with TestClient(app) as c:
        first, second = new_game(c, seed=1), new_game(c, seed=2)
        finish(app.state.games.get(second["id"]))
        third = new_game(c, seed=3)                   # the finished game makes room
        assert c.get(f"/api/games/{first['id']}").status_code == 200
        r = c.get(f"/api/games/{second['id']}")
        assert r.status_code == 404 and "dropped to make room" in r.json()["error"]
        for seed in range(4, 10):                     # and then the idle ones, every time
            new_game(c, seed=seed)
        assert len(app.state.games) == 2
        r = c.post(f"/api/games/{third['id']}/move", json={"seq": 0, "action": "next"})
        assert r.status_code == 404 and "start a new game" in r.json()["error"]


def test_an_unknown_id_says_why():
    """A made-up id was once answered "the server restarted a moment ago" with no restart."""
    now = [0.0]
    store: Store[str] = Store(ttl_s=60, max_items=1, clock=lambda: now[0])
    made = store.add("a game")
    assert len(made) == 30 and store.issued(made)
    made_up = "A" * 30
    mistyped = made[:-1] + ("B" if made[-1] != "B" else "C")
    now[0] = 600
    for key in (made_up, mistyped, "guess"):
        with pytest.raises(UnknownItemError) as exc:
            store.get(key)
        assert str(exc.value) == (
            f"no game {key!r} on this server: this server (started 10 minutes ago) never made "
            "it: a mistyped link, or a game from before it started (games are kept in memory "
            "only): start a new game")
        assert "restarted" not in str(exc.value)
    with pytest.raises(UnknownItemError, match="it expired"):
        store.get(made)
    store._gone.clear()                     # its reason forgotten: still known as made here
    with pytest.raises(UnknownItemError, match="it is no longer kept .games expire after 1 "):
        store.get(made)
    lasting: Store[str] = Store(secret=b"kept in the database")
    again: Store[str] = Store(secret=b"kept in the database")   # the same server restarted
    key = lasting.add("a game")
    with pytest.raises(UnknownItemError, match="it is no longer kept"):
        again.get(key)
    with pytest.raises(UnknownItemError, match="this server never made a game under this id"):
        again.get(made)


# ------------------------------------------------------------------ games survive a restart

def test_a_restart_loses_no_game(tmp_path):
    """Games in progress come back after a restart exactly where they were, and play on as
    the same game would have without the restart; it once said they had 'expired after 360
    minutes without a move'."""
    db = tmp_path / "games.sqlite"
    reference = create_app(db=None)
    with TestClient(create_app(db=db)) as before, TestClient(reference) as ref:
        states = []
        for settings in ({"seed": 5, "advice": True}, {"seed": 6, "muggins": True},
                         {"seed": 7, "players": 3, "target": 61}, {}):
            state, twin = new_game(before, **settings), new_game(ref, **settings)
            for _ in range(9):
                state = step(before, state)
                if "seed" in settings:
                    twin = step(ref, twin)
            states.append((state, twin if "seed" in settings else None))
        conn = sqlite3.connect(db)   # every move was committed, in its own transaction
        rows = dict(conn.execute("SELECT id, record FROM web_games"))
        conn.close()
        assert all(len(json.loads(rows[s["id"]])["moves"]) == s["seq"] for s, _ in states)
    with TestClient(create_app(db=db)) as after:      # the server restarted
        for state, twin in states:
            r = after.get(f"/api/games/{state['id']}")
            assert r.status_code == 200, r.text
            assert r.json() == state                  # the same position, the same page
            table = after.app.state.games.get(state["id"])
            assert table.decisions or not table.advice_on
            if twin is not None:                      # it plays on as the same game
                state, twin = step(after, state, pick=1), step(ref, twin, pick=1)
                assert state["scores"] == twin["scores"] and state["legal"] == twin["legal"]
                assert table.game.actions == ref.app.state.games.get(twin["id"]).game.actions
        assert "restarted" not in after.get(f"/game/{states[0][0]['id']}").text


def test_a_game_that_cannot_come_back_says_why(tmp_path):
    db = tmp_path / "games.sqlite"
    with TestClient(create_app({"mine": "greedy"}, db=db)) as before:
        kept = new_game(before, bot="mine", seed=3)
        gone = new_game(before, bot="mine", seed=4)
        before.app.state.saved.delete(gone["id"])   # as if it had expired meanwhile
    with TestClient(create_app({"mine": "greedy"})) as memory_only:
        kept_in_memory = new_game(memory_only, bot="mine", seed=3)
    with TestClient(create_app({"other": "random"}, db=db)) as after:
        r = after.get(f"/api/games/{kept['id']}")
        assert r.status_code == 404
        assert r.json()["error"] == (
            f"no game '{kept['id']}' on this server: the server restarted and could not "
            "restore it: its bot 'mine' (greedy) is not offered now: start a new game")
        r = after.get(f"/api/games/{gone['id']}")    # made by this server before its restart
        assert r.status_code == 404 and "it is no longer kept (games expire after" in \
            r.json()["error"]
        r = after.post(f"/api/games/{kept_in_memory['id']}/move",
                       json={"seq": 0, "action": "next"})
        assert r.status_code == 404 and "this server never made a game under this id" in \
            r.json()["error"] and "restarted" not in r.json()["error"]
        page = after.get(f"/game/{kept_in_memory['id']}")
        assert page.status_code == 404 and "never made a game under this id" in page.text
        assert len(after.app.state.saved) == 0    # the row that cannot come back is gone


def test_dropped_and_expired_games_leave_the_database(tmp_path):
    db = tmp_path / "games.sqlite"
    app = create_app({"greedy": "greedy"}, db=db, max_games=1)
    with TestClient(app) as c:
        first = new_game(c, seed=1)
        new_game(c, seed=2)                          # makes room: the first game goes
        assert len(app.state.saved) == 1
        assert c.get(f"/api/games/{first['id']}").status_code == 404
    now = [1000.0]
    saved = SavedGames(tmp_path / "other.sqlite", ttl_s=60, clock=lambda: now[0])
    saved.save("k", {"moves": []})
    now[0] += 61
    with pytest.raises(ValueError, match="it expired"):
        saved.load("k")
    assert len(saved) == 0


def test_a_damaged_database_is_one_line_at_startup(tmp_path, capsys, monkeypatch):
    import uvicorn

    from cribenv.cli import main

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    with pytest.raises(ValueError, match="damaged.sqlite is not a usable web games database"):
        create_app(db=damaged)
    assert main(["serve", "--db", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cribenv serve: error: ") and "damaged.sqlite" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    other = tmp_path / "tournament.sqlite"        # a database of something else
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE games (x)")
    conn.close()
    assert main(["serve", "--db", str(other)]) == 2
    assert "holds something other than the web table's games" in capsys.readouterr().err
    good = tmp_path / "state" / "games.sqlite"
    assert main(["serve", "--db", str(good)]) == 0 and good.exists()


def test_serve_keeps_its_games_in_the_state_folder_by_default(tmp_path, monkeypatch, capsys):
    import uvicorn

    from cribenv.cli import main

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(app))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["serve"]) == 0
    assert (tmp_path / "cribenv" / "web-games.sqlite").exists()
    assert "games kept in" in capsys.readouterr().err
    assert main(["serve", "--db", ":memory:"]) == 0 and served[-1].state.saved is not None


# ------------------------------------------------------------------ replays: size and checks

def test_a_padded_replay_is_refused_with_its_size_and_the_limit(tmp_path, capsys):
    """A valid record padded to 20 MB was stored (three: +100 MB)."""
    record = played()
    with TestClient(create_app(max_replay_bytes=20_000)) as c:
        padded = json.dumps({**record, "pad": "x" * 30_000})
        r = c.post("/replays", content=padded, headers={"content-type": "text/plain"})
        assert r.status_code == 413
        assert f"the record is {len(padded):,} bytes; a replay may be at most 20,000 bytes" \
            in r.text
        small = json.dumps({**record, "pad": "x" * 1000})   # kept, but not the padding
        r = c.post("/replays", content=small, headers={"content-type": "text/plain"},
                   follow_redirects=False)
        assert r.status_code == 303
        replay = c.app.state.replays.get(r.headers["location"].split("/")[-1])
        assert "pad" not in replay.record and replay.size == len(json.dumps(record))
    from cribenv.cli import main

    big = tmp_path / "big.json"
    big.write_text(json.dumps({**record, "pad": "x" * 200_000}))
    assert main(["serve", "--replay", str(big)]) == 2
    assert "a replay may be at most 131,072 bytes" in capsys.readouterr().err


def test_the_replays_together_are_capped_the_oldest_go_first():
    record = json.dumps(played())
    size = len(record)
    with TestClient(create_app(max_replay_bytes=size, max_replays_bytes=3 * size)) as c:
        urls = []
        for _ in range(5):
            r = c.post("/replays", content=record, headers={"content-type": "text/plain"},
                       follow_redirects=False)
            assert r.status_code == 303
            urls.append(r.headers["location"])
        store = c.app.state.replays
        assert len(store) == 3 and store.bytes == 3 * size
        assert [c.get(u).status_code for u in urls] == [404, 404, 200, 200, 200]
        assert "dropped to make room for newer replays" in c.get(urls[0]).text


@pytest.mark.parametrize("change, words", [
    ({"rules": {"target": 200000}},
     "rules: target must be 121 or 61 (the games the table shows), got 200000"),
    ({"rules": {"target": "61"}}, "rules: target must be an int, got &#39;61&#39;"),
    ({"rules": {"target": 61, "num_players": 5}},
     "rules: num_players must be 2, 3 or 4, got 5"),
    ({"rules": {"target": 61, "skunk_line": 70}},
     "rules: expected 0 &lt;= double_skunk_line &lt;= skunk_line &lt;= target, got 0, 70, 61"),
    ({"rules": {"target": 61, "speed": 3}}, "rules: unknown rule &#39;speed&#39;"),
    ({"rules": [61]}, "rules must be an object"),
    ({"actions": "5H 5S"}, "actions must be a list"),
    ({"actions": ["5H"] * (MAX_MOVES + 1)}, "a record holds at most 10,000 actions, this one "
                                            "10,001"),
    ({"actions": ["5H", "ZZ"]}, "actions[1] is not a card: &#39;ZZ&#39;"),
    ({"actions": [{"card": "5H"}]}, "actions[0] is not a card"),
])
def test_replay_records_are_checked_as_the_engine_checks_its_rules(change, words):
    """A replay with rules.target=200000 rendered a 17 MB page."""
    record = {**played(), **change}
    if "rules" in change:
        record["actions"] = record["actions"][:4]
        record.pop("scores"), record.pop("winner")
    with TestClient(create_app()) as c:
        r = c.post("/replays", data={"record": json.dumps(record)})
        assert r.status_code == 400 and words in r.text, r.text
        assert len(r.text) < 10_000 and len(c.app.state.replays) == 0
    with pytest.raises(ValueError):
        Replay.from_record(record)


def test_a_record_with_a_few_moves_still_replays():
    record = played()
    record["actions"] = record["actions"][:5]
    record.pop("scores"), record.pop("winner")
    replay = Replay.from_record(record)
    assert replay.total == 5 and replay.game_at(5).actions == \
        [C.parse(a) for a in record["actions"]]
