"""The web table's server (``cribenv serve``) without a browser: whole games through the HTTP
API checked against the engine, every kind of bad request refused with the game unchanged,
unguessable ids that expire, no file loaded on a request's word, 50 games at once."""

from __future__ import annotations

import html
import re
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from web_server import serve  # noqa: E402

from cribenv import cards as C  # noqa: E402
from cribenv.game import Game, Muggins, Played, Rules, ShowScored  # noqa: E402
from cribenv.scoring import score_hand  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.sessions import Store, UnknownItemError  # noqa: E402
from webtable.table import MoveError, Table  # noqa: E402


@pytest.fixture
def client():
    app = create_app()
    with TestClient(app) as c:
        c.app_state = app.state
        yield c


def new_game(client, **settings):
    r = client.post("/api/games", json={"bot": "greedy", "seed": 7, **settings})
    assert r.status_code == 201, r.text
    return r.json()


def move(client, state, **body):
    return client.post(f"/api/games/{state['id']}/move", json={"seq": state["seq"], **body})


def snapshot(table: Table):
    g = table.game
    return (table.seq, table.stage, list(g.actions), list(g.scores), len(g.events))


def check_page_against_engine(html: str, table: Table) -> None:
    """The board's pegs and the score list show the engine's scores; every show section's
    combinations add up to the engine's count of that hand."""
    fronts = [int(x) for x in re.findall(r'data-side="\d" data-front="(\d+)"', html)]
    target = table.rules.target
    # the last hole at most, on the long board and on the folded one (phones) alike
    assert fronts == [min(s, target) for s in table.game.scores] * 2
    listed = [int(x) for x in re.findall(r'<li class="side-\d" data-side="\d" '
                                         r'data-score="(\d+)"', html)]
    assert listed == list(table.game.scores)
    if table.stage in ("show", "over"):
        shows = [e for e in table.hand_events(table.show_hand) if type(e) is ShowScored]
        sections = re.findall(r'<section class="show-hand" data-seat="(\d)" data-crib="(\d)" '
                              r'data-total="(\d+)">(.*?)</section>', html)
        assert len(sections) == len(shows)
        for (seat, crib, total, body), ev in zip(sections, shows):
            assert (int(seat), bool(int(crib)), int(total)) == (ev.seat, ev.is_crib, ev.points)
            assert int(total) == score_hand(list(ev.cards), ev.starter, ev.is_crib)
            assert sum(int(p) for p in re.findall(r'data-points="(\d+)"', body)) == int(total)


def play_to_the_end(client, state, choose=lambda legal, need: legal[:need]):
    """Play a whole game through the API; check every page against the engine."""
    shows = 0
    while state["stage"] != "over":
        table = client.app_state.games.get(state["id"])
        check_page_against_engine(state["html"], table)
        if state["stage"] in ("cut", "show"):
            shows += state["stage"] == "show"
            r = move(client, state, action="next")
        else:
            need = (state["need"] - len(table.game.discards[table.human])
                    if state["stage"] == "discard" else 1)
            r = move(client, state, cards=choose(state["legal"], need))
        assert r.status_code == 200, r.text
        state = r.json()
    table = client.app_state.games.get(state["id"])
    check_page_against_engine(state["html"], table)
    return state, table, shows


def test_a_whole_game_through_the_api_matches_the_engine(client):
    state = new_game(client, advice=True)
    assert state["stage"] == "cut" and "Cut for deal" in state["html"]
    state, table, shows = play_to_the_end(client, state)
    game = table.game
    assert game.is_over and state["winner"] == game.winner and shows >= 3
    assert f'data-game-points="{game.game_points}"' in state["html"]
    # the same seed and moves replay to the same game: the record is the engine's
    assert Game.from_json(game.to_json()).scores == game.scores
    assert "Against the advice" in state["html"] and table.summary()["decisions"] > 0


@pytest.mark.parametrize("players,target", [(3, 61), (4, 61)])
def test_three_and_four_players(client, players, target):
    state = new_game(client, players=players, target=target, bot="random")
    state, table, _ = play_to_the_end(client, state)
    assert table.game.rules.num_players == players
    assert max(table.game.scores) >= target


def test_bad_and_stale_requests_leave_the_game_unchanged(client):
    state = new_game(client)
    state = move(client, state, action="next").json()
    assert state["stage"] == "discard"
    table = client.app_state.games.get(state["id"])
    before = snapshot(table)
    hand = state["legal"]
    not_held = next(C.to_str(c) for c in range(52) if C.to_str(c) not in hand)
    bad = [
        ({"seq": state["seq"], "cards": [hand[0]]}, 400, "choose 2"),            # one card
        ({"seq": state["seq"], "cards": [hand[0], hand[0]]}, 400, "choose 2"),   # twice
        ({"seq": state["seq"], "cards": [hand[0], not_held]}, 400, not_held),    # not held
        ({"seq": state["seq"], "cards": [hand[0], "ZZ"]}, 400, "not a card"),
        ({"seq": state["seq"], "cards": "5H"}, 400, "list of cards"),
        ({"seq": state["seq"], "action": "next"}, 400, "your turn"),
        ({"seq": state["seq"], "action": "fold"}, 400, "unknown action"),
        ({"seq": "x", "cards": hand[:2]}, 400, "seq must be"),
        ({"seq": state["seq"] - 1, "cards": hand[:2]}, 409, "the game is unchanged"),
        ({"seq": state["seq"] + 5, "cards": hand[:2]}, 409, "the game is unchanged"),
    ]
    for body, status, words in bad:
        r = client.post(f"/api/games/{state['id']}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], (body, r.json())
        assert snapshot(table) == before
    r = client.post(f"/api/games/{state['id']}/move", content=b"{not json",
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and snapshot(table) == before
    # the right move goes through once; the same request again (a double click, a replay) not
    good = {"seq": state["seq"], "cards": hand[:2]}
    assert client.post(f"/api/games/{state['id']}/move", json=good).status_code == 200
    after = snapshot(table)
    r = client.post(f"/api/games/{state['id']}/move", json=good)
    assert r.status_code == 409 and "double click" in r.json()["error"]
    assert snapshot(table) == after


def test_a_card_the_count_does_not_allow_is_refused_by_the_engine():
    table = Table(Rules(), bot="greedy", seed=11)
    table.act(0, action="next")
    table.act(1, cards=[C.to_str(c) for c in table.game.legal_actions()[:2]])
    for _ in range(40):
        if table.stage != "play":
            table.act(table.seq, action="next") if table.stage == "show" else None
            continue
        g = table.game
        too_big = [c for c in g.hands[table.human] if c not in g.legal_actions()]
        if too_big:
            before = snapshot(table)
            with pytest.raises(MoveError, match="past 31"):
                table.act(table.seq, cards=[C.to_str(too_big[0])])
            assert snapshot(table) == before
            return
        table.act(table.seq, cards=[C.to_str(g.legal_actions()[-1])])
    pytest.fail("no position with a card over 31 came up")


def test_new_game_settings_are_checked_and_no_file_is_loaded(client, tmp_path):
    for body, words in [({"bot": "ppo:/etc/passwd"}, "unknown bot"),
                        ({"bot": ["expert"]}, "unknown bot"),
                        ({"bot": f"ppo:{tmp_path / 'x.safetensors'}"}, "unknown bot"),
                        ({"players": 5}, "players must be one of 2, 3, 4"),
                        ({"target": 100}, "target must be one of 121, 61"),
                        ({"advice": "yes"}, "advice must be true or false"),
                        ({"seed": "abc"}, "seed must be an integer")]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and words in r.json()["error"], (body, r.text)
    assert len(client.app_state.games) == 0
    assert client.post("/api/games", content=b"x" * 600_000).status_code == 413


def test_ids_cannot_be_guessed_and_games_expire():
    now = [0.0]
    store: Store[str] = Store(ttl_s=60, max_items=10, clock=lambda: now[0])
    keys = {store.add(str(i)) for i in range(10)}
    assert len(keys) == 10 and all(len(k) >= 22 for k in keys)   # 128 random bits each
    now[0] = 30
    kept = next(iter(keys))
    store.get(kept)            # a move restarts its clock
    now[0] = 70
    assert len(store) == 1 and store.get(kept) == store.get(kept)
    with pytest.raises(UnknownItemError, match=r"it expired \(games expire after 1 minute "):
        store.get(next(k for k in keys if k != kept))


def test_unknown_game_and_lobby(client):
    r = client.post("/api/games/nope/move", json={"seq": 0, "action": "next"})
    assert r.status_code == 404 and "start a new game" in r.json()["error"]
    assert client.get("/game/nope").status_code == 404
    page = client.get("/").text
    assert all(f'value="{b}"' in page for b in ("expert", "greedy", "random", "ppo:shipped"))
    assert "http://" not in page and "https://" not in page   # nothing fetched from elsewhere
    assert client.get("/static/table.js").status_code == 200


def test_replay_of_a_recorded_game(client):
    game = Game(Rules(target=61), seed=4)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    r = client.post("/replays", data={"record": game.to_json()}, follow_redirects=False)
    assert r.status_code == 303
    url = r.headers["location"]
    end = client.get(url).text
    assert f'data-front="{min(game.scores[0], 61)}"' in end and "data-winner" in end
    start = client.get(url + "?step=0").text
    assert 'data-front="0"' in start and 'rel="next"' in start
    # every seat's cards are face up at the start: 12 cards dealt and the crib empty
    assert len(re.findall(r'class="card (?:red|black) small" data-card', start)) == 12
    assert client.get(url + "?step=100000").status_code == 400
    for text, words in [('{"format": "cribenv-game/1"}', "has no seed"),
                        ('{"format": "cribenv-game/1", "seed": 1}', "not a complete game record"),
                        ("[1, 2", "not JSON")]:
        bad = client.post("/replays", data={"record": text})
        assert bad.status_code == 400 and words in bad.text, bad.text


# ------------------------------------------------------------------ many games at once

@pytest.fixture
def server():
    app = create_app(max_games=200)
    for url in serve(app):
        yield url, app


def _client_game(base: str, seed: int) -> tuple[str, list[list[str]], list[int]]:
    """One person's game to the end over HTTP: the moves it made and the final scores."""
    moves: list[list[str]] = []
    with httpx.Client(base_url=base, timeout=60) as http:
        state = http.post("/api/games", json={"bot": "random", "target": 61,
                                              "seed": seed}).json()
        while state["stage"] != "over":
            body: dict = {"seq": state["seq"]}
            if state["stage"] in ("cut", "show"):
                body["action"] = "next"
            else:
                cards = state["legal"][-state["need"]:] if state["stage"] == "discard" \
                    else state["legal"][:1]
                body["cards"] = cards
                moves.append(cards)
            r = http.post(f"/api/games/{state['id']}/move", json=body)
            assert r.status_code == 200, r.text
            state = r.json()
    return state["id"], moves, state["scores"]


def test_fifty_games_at_once_do_not_interfere(server):
    base, app = server
    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(lambda s: _client_game(base, s), range(50)))
    assert len({key for key, _, _ in results}) == 50
    for seed, (key, moves, scores) in enumerate(results):
        # the same seed and the same moves, alone at a table, give the same game
        alone = Table(Rules(target=61), bot="random", seed=seed)
        for cards in moves:
            while alone.stage in ("cut", "show"):
                alone.act(alone.seq, action="next")
            alone.act(alone.seq, cards=cards)
        assert alone.stage == "over" and list(alone.game.scores) == scores
        assert app.state.games.get(key).game.actions == alone.game.actions


def test_serve_command_checks_its_arguments(capsys, tmp_path):
    from cribenv.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["serve", "--help"])
    assert exc.value.code == 0 and "127.0.0.1" in capsys.readouterr().out
    assert main(["serve", "--bot", "nameonly"]) == 2
    assert "--bot nameonly: unknown agent 'nameonly'" in capsys.readouterr().err
    assert main(["serve", "--bot", f"mine=ppo:{tmp_path / 'none.safetensors'}"]) == 2
    assert "none.safetensors" in capsys.readouterr().err
    assert main(["serve", "--replay", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


@pytest.mark.parametrize("args, words", [
    (["--ttl", "inf"], "argument --ttl: expected minutes, more than 0 and at most 525600"),
    (["--ttl", "nan"], "argument --ttl: expected minutes"),   # once: "convert float NaN"
    (["--ttl", "1e306"], "argument --ttl"),                   # once: inf seconds, OverflowError
    (["--ttl", "0"], "argument --ttl"),
    (["--max-games", "0"], "argument --max-games: expected an integer of at least 1"),
])
def test_serve_refuses_a_bad_limit_by_name(capsys, monkeypatch, args, words):
    """``--ttl inf`` was once an OverflowError traceback."""
    import uvicorn

    from cribenv.cli import main

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)   # never serve here

    with pytest.raises(SystemExit) as exc:
        main(["serve", *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and words in err and "Traceback" not in err, err


def test_serve_takes_a_bot_by_its_spec_alone(capsys, monkeypatch):
    """``--bot search:ppo:shipped?playouts=50`` was once split at the query's '=' ("unknown
    agent '50'"); it is read as the tournament reads its agents, named by its spec."""
    import uvicorn

    from cribenv.cli import main
    from webtable.command import parse_bots

    pytest.importorskip("numba")   # the search agent: the batched engine
    spec = "search:ppo:shipped?playouts=50"
    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(app))
    assert main(["serve", "--db", ":memory:", "--bot", spec,
                 "--bot", "fast=search:expert?playouts=20"]) == 0, capsys.readouterr().err
    bots = parse_bots([spec, "fast=search:expert?playouts=20", "cmd[move=2]:python bot.py"])
    assert bots[spec] == spec and bots["fast"] == "search:expert?playouts=20"
    assert bots["cmd[move=2]:python bot.py"] == "cmd[move=2]:python bot.py"
    with TestClient(served[0], base_url="http://127.0.0.1:8000") as c:
        assert spec in c.get("/").text
        r = c.post("/api/games", json={"bot": spec, "seed": 1})
        assert r.status_code == 201 and r.json()["opponent"] == spec


def test_muggins_through_the_api(client):
    state = new_game(client, muggins=True, bot="random")
    r = client.post("/api/games", json={"muggins": "on"})
    assert r.status_code == 400 and "muggins must be true or false" in r.json()["error"]
    seen_play_panel = False
    while state["stage"] != "count":
        if state["stage"] in ("cut", "show"):
            state = move(client, state, action="next").json()
        else:   # in the play, each card with what it pegs: nothing claimed here
            need = 2 if state["stage"] == "discard" else 1
            claims = {"play": 0} if state["stage"] == "play" else {}
            if state["stage"] == "play":
                assert state["claims_due"] == ["play"]
                seen_play_panel |= 'id="claim-panel" hidden' in state["html"]
            state = move(client, state, cards=state["legal"][:need], claims=claims).json()
    assert seen_play_panel and state["legal"] == []
    assert state["claims_due"] in (["hand"], ["hand", "crib"])
    assert 'name="claim-hand"' in state["html"] and 'data-action="count"' in state["html"]
    r = move(client, state, action="count",
             claims={what: 99 if what == "hand" else 0 for what in state["claims_due"]})
    assert r.status_code == 400 and "0..29" in r.json()["error"]
    r = move(client, state, action="count", claims=[1])
    assert r.status_code == 400 and "claims must be an object" in r.json()["error"]
    state = move(client, state, action="count",
                 claims={what: 0 for what in state["claims_due"]}).json()
    table = client.app_state.games.get(state["id"])
    check_page_against_engine(state["html"], table)   # the board counts the Muggins split
    events = table.hand_events(0)
    shows = [e for e in events if type(e) is ShowScored and e.seat == table.human and e.points]
    laid = [e for e in events if type(e) is Played and e.seat == table.human][-1]
    assert state["stage"] in ("show", "over")
    # one Muggins line per show, and one for the last card if it pegged (claimed 0)
    assert state["html"].count('class="muggins"') == len(shows) + (laid.points > 0)


def test_claims_without_muggins_are_refused(client):
    state = new_game(client)
    state = move(client, state, action="next").json()
    table = client.app_state.games.get(state["id"])
    before = snapshot(table)
    r = move(client, state, cards=state["legal"][:2], claims={"play": 0})
    assert r.status_code == 400 and r.json()["error"] == (
        "nothing to claim for play with this move (Muggins is off)")
    assert snapshot(table) == before


def test_pegging_claims_through_the_api(client):
    """With Muggins each card laid comes with what it pegs: a missing or malformed claim is
    refused (the game unchanged; never for its value), a short one is called by the bot, an
    exact one is not; the board, the play panel and the log agree with the engine."""
    state = new_game(client, muggins=True, bot="random", target=61)
    called = exact = 0
    while state["stage"] != "over":
        table = client.app_state.games.get(state["id"])
        check_page_against_engine(state["html"], table)
        if state["stage"] in ("cut", "show"):
            state = move(client, state, action="next").json()
            continue
        if state["stage"] == "discard":
            need = state["need"] - len(table.game.discards[table.human])
            state = move(client, state, cards=state["legal"][:need]).json()
            continue
        if state["stage"] == "count":   # the show: counted right
            shows = {"hand": table.game.kept[table.human], "crib": table.game.crib}
            claims = {what: score_hand(shows[what], table.game.starter, is_crib=what == "crib")
                      for what in state["claims_due"]}
            state = move(client, state, action="count", claims=claims).json()
            continue
        assert state["claims_due"] == ["play"] and 'data-claim="play"' in state["html"]
        game = table.game
        pegs = {C.to_str(c): game.clone().step(c)[0].points for c in game.legal_actions()}
        card = max(pegs, key=pegs.get)
        n = pegs[card]
        claims = {what: 0 for what in state["claims_due"]}
        if n and not called:
            before = snapshot(table)
            for bad, message in ((None, "say what your card pegs .* got None"),
                                 ("2", "got '2'"), (-1, "got -1"), (30, "got 30")):
                body = {k: v for k, v in {**claims, "play": bad}.items() if v is not None}
                r = move(client, state, cards=[card], claims=body)
                assert r.status_code == 400 and re.search(message, r.json()["error"]), r.text
                assert snapshot(table) == before
            r = move(client, state, cards=[card], claims={**claims, "play": n, "plya": 3})
            assert r.status_code == 400 and r.json()["error"] == (
                f"nothing to claim for plya with this move (due: "
                f"{', '.join(state['claims_due'])})")
            assert snapshot(table) == before
            r = move(client, state, cards=[card], claims={**claims, "play": n - 1})
            state = r.json()
            html = state["html"]
            assert (f"You claimed {n - 1} of {n}: Muggins! Beginner takes the 1 overlooked on "
                    f"{card}") in html
            assert (f'<section class="peg-call" data-card="{card}" data-points="{n}" '
                    f'data-claimed="{n - 1}">') in html
            called += 1
        else:
            r = move(client, state, cards=[card], claims={**claims, "play": n})
            state = r.json()
            if state["stage"] == "play":
                assert f'data-card="{card}" data-points="{n}" data-claimed="{n}"' in \
                    state["html"]
            exact += 1
        assert r.status_code == 200, r.text
    table = client.app_state.games.get(state["id"])
    check_page_against_engine(state["html"], table)
    game = table.game
    calls = [e for e in game.events if type(e) is Muggins and e.card is not None]
    assert called == 1 and exact > 10 and len(calls) == 1
    assert calls[0].claimed == calls[0].points - 1 and calls[0].seat == table.human
    assert len(game.peg_claims) == called + exact
    assert Game.from_json(game.to_json()).scores == game.scores


def test_a_tournament_game_opens_as_a_replay(tmp_path, monkeypatch, capsys):
    pytest.importorskip("scipy")
    import uvicorn

    from cribenv.cli import main
    from webtable.command import tournament_game_path

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(kw))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))   # where its games are kept
    db = tmp_path / "t.sqlite"
    # the tournament command names a game to open: it serves the table with that game's page
    assert main(["tournament", "--agents", "random", "greedy", "--games", "2", "--workers",
                 "1", "--db", str(db), "--seed", "3", "--target", "61", "--no-progress",
                 "--bootstrap", "0", "--open", "1"]) == 0
    assert served and served[0]["host"] == "127.0.0.1"
    assert "/tournament/1 " in capsys.readouterr().err
    assert tournament_game_path(str(db), 1) == "/tournament/1"
    with pytest.raises(ValueError, match="holds games 0..1, not 2"):
        tournament_game_path(str(db), 2)
    app = create_app(tournament_db=str(db))
    with TestClient(app) as c:
        lobby = c.get("/").text
        assert lobby.count('href="/tournament/') == 2
        r = c.get("/tournament/1", follow_redirects=False)
        assert r.status_code == 303
        end = r.headers["location"].replace("?step=0", "")
        page = c.get(end).text
        import sqlite3

        row = sqlite3.connect(db).execute(
            "SELECT score0, score1 FROM games ORDER BY agent_a, agent_b, deal, seating "
            "LIMIT 1 OFFSET 1").fetchone()
        fronts = [int(x) for x in re.findall(r'data-side="\d" data-front="(\d+)"', page)]
        assert fronts == [min(s, 61) for s in row] * 2   # the long board and the folded one
        assert c.get("/tournament/9").status_code == 404


def test_a_local_server_answers_local_host_names_only():
    app = create_app(allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        assert c.get("/").status_code == 200
        assert c.get("/", headers={"host": "localhost:8000"}).status_code == 200
        assert c.get("/", headers={"host": "rebound.example"}).status_code == 400


def test_a_chunked_body_is_bounded_while_it_streams(client):
    """A body with no Content-Length was once read and parsed whole (50 MB: +100 MB RSS)."""
    sent = []

    def body():
        for _ in range(200):            # 200 x 64 kB = 12.5 MB, if nobody stopped it
            sent.append(1)
            yield b"[" * 65536

    r = client.post("/api/games", content=body(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["error"]
    r = client.post("/replays", content=body(), headers={"content-type": "text/plain"})
    assert r.status_code == 413


def test_deeply_nested_json_is_a_bad_request_not_a_crash(client):
    r = client.post("/api/games", content=b"[" * 200_000,
                    headers={"content-type": "application/json"})
    assert r.status_code in (400, 413)
    r = client.post("/api/games", content=b"[" * 100_000 + b"]" * 100_000,
                    headers={"content-type": "application/json"})
    assert r.status_code == 400 and "JSON object" in r.json()["error"]


@pytest.mark.parametrize("headers, status", [
    ({"content-type": "text/plain"}, 415),
    ({"content-type": "application/json", "origin": "https://evil.example"}, 403),
    ({"content-type": "application/json", "sec-fetch-site": "cross-site"}, 403),
    ({"content-type": "application/json", "origin": "null"}, 403),   # a sandboxed frame's
    ({"content-type": "application/jsonp"}, 415),                    # once passed as JSON
    ({"content-type": "application/json-seq"}, 415),
    ({"content-type": "Application/JSON; charset=utf-8"}, 201),      # once refused
    ({"content-type": "application/json", "origin": "http://testserver"}, 201),
])
def test_cross_site_posts_are_refused(client, headers, status):
    r = client.post("/api/games", content=b'{"bot": "greedy"}', headers=headers)
    assert r.status_code == status, r.text


def test_a_form_from_another_site_cannot_open_a_replay(client):
    game = Game(Rules(), seed=3)
    while game.current_player is not None:
        game.step(game.legal_actions()[0])
    form = {"record": game.to_json()}
    r = client.post("/replays", data=form, headers={"origin": "https://evil.example"},
                    follow_redirects=False)
    assert r.status_code == 403
    r = client.post("/replays", data=form, headers={"origin": "http://testserver"},
                    follow_redirects=False)
    assert r.status_code == 303


@pytest.mark.parametrize("bot", ["search:ppo:shipped",
                                 "search:ppo:scratch?models=own&playouts=300",
                                 "ppo:scratch-exit"])
def test_the_strong_agents_are_offered_and_play_a_game(client, bot):
    """The strongest bot (``search:ppo:shipped``, the Champion), the search from the rules
    alone (the Prodigy) and the network of expert iteration from the rules alone (the
    Graduate) are in the lobby and each plays a whole game."""
    assert f'value="{html.escape(bot)}"' in client.get("/").text
    state, table, shows = play_to_the_end(client, new_game(client, bot=bot, target=61))
    assert table.game.is_over and shows >= 1


def test_a_new_game_without_a_seed_takes_the_apps_next_seed():
    """``new_seed`` fixes the deals of games whose request names no seed (the browser tests
    rely on it); a seed in the request still wins."""
    seeds = iter([11, 12])
    app = create_app(new_seed=lambda: next(seeds))
    with TestClient(app) as c:
        ids = [c.post("/api/games", json=body).json()["id"]
               for body in ({"bot": "greedy"}, {"bot": "greedy", "seed": 5}, {"bot": "greedy"})]
    assert [app.state.games.get(key).seed for key in ids] == [11, 5, 12]
    first = app.state.games.get(ids[0]).game.hands
    assert first == Table(Rules(), bot="greedy", seed=11).game.hands
