"""The web table when a bot fails: a bot that cannot start, crashes, hangs, breaks the protocol
or raises (a search whose budget cannot be allocated) forfeits, as in a tournament; the person
wins, is told so in words, and the game over panel (record, replay, review) works after it.
It once answered 500, and every later move 400: the game was stuck for good."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from web_tables import finish  # noqa: E402

from agents.base import register_agent  # noqa: E402
from agents.greedy import GreedyAgent  # noqa: E402
from cribenv.game import Rules  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.opponents import FORFEIT_WORDS  # noqa: E402
from webtable.table import Table  # noqa: E402

BROKEN = Path(__file__).parent / "data" / "bots" / "broken_bot.py"


class FailingBot(GreedyAgent):
    """Greedy, until its ``fail_at``-th decision raises ``error`` (every game, or only in the
    first ``games`` games played by any of its kind); ``finished`` records each ``finish``."""

    fail_at = 3
    error: Exception = MemoryError("cannot allocate 10.0 GiB for the playouts")
    games = None   # fail in every game
    played = 0

    def __init__(self, seed=None):
        super().__init__(seed=seed)
        self.decisions = 0
        self.finished = []

    def reset(self):
        type(self).played += 1
        self.decisions = 0

    def choose(self, view, legal):
        self.decisions += 1
        games = type(self).games
        if self.decisions >= self.fail_at and (games is None or type(self).played <= games):
            raise self.error
        return super().choose(view, legal)

    def finish(self, game, forfeit=None):
        self.finished.append((game.is_over, forfeit))


class OutOfMemoryBot(FailingBot):
    pass


class FlakyBot(FailingBot):
    error = RuntimeError("a flaky failure")
    games = 1   # only the first game


class CheatingBot(GreedyAgent):
    """Plays a card it does not hold at its third decision."""

    def reset(self):
        self.decisions = 0

    def choose(self, view, legal):
        self.decisions += 1
        if self.decisions >= 3:
            return next(c for c in range(52) if c not in legal)
        return super().choose(view, legal)


register_agent("web-test-oom", OutOfMemoryBot)
register_agent("web-test-flaky", FlakyBot)
register_agent("web-test-cheat", CheatingBot)


def post(c, key, seq, **body):
    return c.post(f"/api/games/{key}/move", json={"seq": seq, **body})


def play_until_over(c, state, limit=400):
    """Play the first legal cards until the game is over; every answer a 200."""
    for _ in range(limit):
        if state["stage"] == "over":
            return state
        if state["stage"] in ("cut", "show"):
            r = post(c, state["id"], state["seq"], action="next")
        else:
            need = state["need"] if state["stage"] == "discard" else 1
            r = post(c, state["id"], state["seq"], cards=state["legal"][:need])
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


def check_forfeit_panel(c, state, name):
    """The person wins, in words, and the game over panel works after it."""
    key = state["id"]
    assert state["stage"] == "over" and state["winner"] == 0
    forfeit = state["forfeit"]
    assert forfeit["kind"] in FORFEIT_WORDS and forfeit["detail"], forfeit
    html = state["html"]
    assert "<b>You win</b>" in html and f"{name} {FORFEIT_WORDS[forfeit['kind']]}" in html
    assert "forfeits the game" in html and f"{name} forfeited it" in html
    assert f"The score stood: You {state['scores'][0]}, " in html
    r = post(c, key, state["seq"], action="next")
    assert r.status_code == 400 and "the game is over: start a new game" in r.json()["error"]
    page = c.get(f"/game/{key}")
    assert page.status_code == 200 and "forfeits the game" in page.text
    record = c.get(f"/game/{key}/record")
    table = c.app.state.games.get(key)
    assert record.status_code == 200 and len(record.json()["actions"]) == len(
        table.game.actions)
    replay = c.get(f"/game/{key}/replay")
    assert replay.status_code == 200 and "forfeited it" in replay.text
    assert c.get(f"/game/{key}/replay?step=0").status_code == 200
    assert c.get(f"/game/{key}/review").status_code == 200
    again = c.post("/api/games", json={"bot": "greedy", "seed": 1})   # a new game, as ever
    assert again.status_code == 201


@pytest.fixture
def client_for():
    clients = []

    def make(bots, **kw):
        c = TestClient(create_app({**bots, "greedy": "greedy"}, **kw),
                       raise_server_exceptions=False)
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


def test_a_bot_that_cannot_start_forfeits(client_for):
    """``cribenv serve --bot 'dead=cmd:false'``: the first move that needs it was a 500."""
    c = client_for({"dead": "cmd:false"})
    state = c.post("/api/games", json={"bot": "dead", "seed": 1}).json()
    r = post(c, state["id"], state["seq"], action="next")
    assert r.status_code == 200, r.text
    state = r.json()
    assert state["forfeit"]["seat"] == 1 and state["scores"] == [0, 0]
    check_forfeit_panel(c, state, "dead")


@pytest.mark.parametrize("mode", ["crash", "hang", "garbage", "illegal"])
def test_a_protocol_bot_that_fails_mid_game_forfeits(client_for, mode):
    """A protocol bot that plays two decisions, then fails as ``mode`` says."""
    c = client_for({"broken": f"cmd[move=0.5]:{sys.executable} {BROKEN} {mode}"})
    state = c.post("/api/games", json={"bot": "broken", "seed": 2, "advice": True}).json()
    state = play_until_over(c, state)
    table = c.app.state.games.get(state["id"])
    assert not table.game.is_over and len(table.game.actions) > 3   # it stopped mid-game
    assert state["forfeit"]["kind"] == {"hang": "timeout", "garbage": "malformed"}.get(
        mode, mode)
    check_forfeit_panel(c, state, "broken")


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("spec, kind, words", [
    ("web-test-oom", "error", "cannot allocate 10.0 GiB"),
    ("web-test-cheat", "illegal", "which is not legal"),
])
def test_a_bot_that_raises_forfeits(client_for, players, spec, kind, words):
    """A bot that raises (a search whose playouts cannot be allocated: MemoryError), or plays
    a card it may not: the person wins even with 3 players, where the other bot may be
    ahead."""
    c = client_for({"bad": spec})
    state = c.post("/api/games", json={"bot": "bad", "seed": 3, "players": players,
                                       "target": 61}).json()
    state = play_until_over(c, state)
    assert state["forfeit"]["kind"] == kind and words in state["forfeit"]["detail"]
    check_forfeit_panel(c, state, "bad")
    assert re.search(rf'<div class="result forfeit" data-winner="0" data-forfeit="{kind}">',
                     state["html"])


def test_the_bots_hear_the_end_of_the_game():
    """Every bot is told the game is over (a protocol bot hears ``game_over`` and its process
    is kept for the next game, as in a tournament), after a forfeit too; it once never was."""
    bots = []

    def make(seed):
        bots.append(FailingBot(seed))
        bots[-1].fail_at = 10**6
        return bots[-1]

    table = Table(Rules(target=61), bot=make, seed=4)
    finish(table)
    assert [b.finished for b in bots] == [[(True, None)]]
    bots.clear()
    table = Table(Rules(num_players=3, target=61), bot=make, seed=4)
    bots[0].fail_at = 2
    finish(table)
    assert table.forfeit is not None and table.forfeit["seat"] == 1 and table.winner == 0
    assert all(b.finished == [(False, table.forfeit)] for b in bots)


@pytest.mark.parametrize("spec", ["web-test-flaky", "cmd:false",
                                  f"cmd:{sys.executable} {BROKEN} crash"])
def test_a_forfeited_game_comes_back_after_a_restart_without_asking_the_bot(tmp_path, spec):
    """A restarted server plays the game again only up to the forfeit: the bot is not asked
    again (a hanging bot would hold the page for its whole move time; a flaky one would play
    on, and the game was lost as 'a different game'; ``cmd:false`` fails as it is told of the
    game, before any decision)."""
    db = tmp_path / "games.sqlite"
    FlakyBot.played = 0
    with TestClient(create_app({"failing": spec}, db=db)) as before:
        state = play_until_over(before, before.post(
            "/api/games", json={"bot": "failing", "seed": 5, "advice": True}).json())
        assert state["forfeit"]
    with TestClient(create_app({"failing": spec}, db=db)) as after:
        r = after.get(f"/api/games/{state['id']}")
        assert r.status_code == 200, r.text
        assert r.json() == state
        assert after.get(f"/game/{state['id']}/review").status_code == 200


def test_a_bot_that_cannot_be_built_is_said_not_a_500(client_for, tmp_path):
    """A policy file gone since the server started: the new game was a 500."""
    c = client_for({"gone": f"ppo:{tmp_path / 'gone.safetensors'}"})
    r = c.post("/api/games", json={"bot": "gone"})
    assert r.status_code == 503 and r.json()["error"].startswith("gone cannot play now (")
    assert "choose another opponent" in r.json()["error"]
    assert c.get("/").status_code == 200
    assert c.post("/api/games", json={"bot": "greedy"}).status_code == 201


def test_the_advice_goes_on_when_the_champion_fails(client_for, monkeypatch):
    """The strongest agent's advice (a search) failing was a 500 on every page of the game;
    the expert's advice stands in."""
    import agents.advice as advice

    def fails(*args):
        raise MemoryError("no room for the playouts")

    monkeypatch.setattr(advice, "strongest_throw", fails)
    monkeypatch.setattr(advice, "strongest_play_advice", fails)
    c = client_for({})
    state = c.post("/api/games", json={"bot": "greedy", "seed": 6, "advice": True}).json()
    for _ in range(8):
        assert state["stage"] != "over"
        if state["stage"] in ("cut", "show"):
            r = post(c, state["id"], state["seq"], action="next")
        else:
            need = state["need"] if state["stage"] == "discard" else 1
            r = post(c, state["id"], state["seq"], cards=state["legal"][:need])
        assert r.status_code == 200, r.text
        state = r.json()
    assert c.app.state.games.get(state["id"]).decisions   # advised all along


def test_a_made_up_game_id_is_not_a_restart(client_for):
    """It was answered "the server restarted a moment ago" with no restart."""
    c = client_for({})
    for key in ("A" * 22, "A" * 30, "nothing"):
        r = c.get(f"/api/games/{key}")
        assert r.status_code == 404 and "restarted" not in r.json()["error"]
        assert "never made it" in r.json()["error"]
