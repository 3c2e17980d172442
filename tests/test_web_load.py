"""The web table under load (issue 52, item 20): a searching bot stops at its deadline with
its best card so far (and is the same search as ever without one), the bots think in a bounded
pool of threads so a busy table's memory is that of a few searches, a restored game replays a
timed search's recorded cards, and the page says that the bot is thinking.

Nothing here asserts a wall-clock time: the deadlines are checked with a clock the test turns,
or by counting batches, and the bounds on the pool by counting the bots thinking at once.
``scripts/web_load.py`` measures the table under 30 players (``results/web-load``)."""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("numba")
httpx = pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402
from web_server import serve  # noqa: E402

import agents.search as search_module  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.base import register_agent  # noqa: E402
from agents.search import DEADLINE_BATCHES, SearchAgent  # noqa: E402
from cribenv.game import Game, Rules  # noqa: E402
from webtable.app import create_app  # noqa: E402
from webtable.table import Table  # noqa: E402


def a_play(seed: int = 3, cards: int = 3) -> Game:
    """A game at a play with at least ``cards`` legal cards (the expert in every seat)."""
    g = Game(seed=seed)
    bot = make_agent("expert", seed=0)
    while g.phase.name != "PLAY" or len(g.legal_actions()) < cards:
        g.step(bot.choose(g.view(g.current_player), g.legal_actions()))
    return g


class Clock:
    """A monotonic clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


# ------------------------------------------------------------------ the search's deadline

def test_without_a_time_limit_the_search_is_as_ever():
    """No deadline: the same seed makes the same decision, every playout run in one piece;
    a limit that never comes runs them all too, in batches."""
    g = a_play()
    view, legal = g.view(g.current_player), g.legal_actions()
    one, two = (make_agent("search:expert?playouts=120", seed=5) for _ in range(2))
    assert one.choose(view, legal) == two.choose(view, legal)
    assert np.array_equal(one.last["values"], two.last["values"])
    deals = 120 // len(legal)
    assert one.last["rows"] == deals * len(legal)
    late = make_agent("search:expert?playouts=120", seed=5, time_budget_s=3600)
    late.choose(view, legal)
    assert late.last["rows"] == deals * len(legal)


def test_a_passed_deadline_plays_the_base_card_at_once(monkeypatch):
    """A deadline already gone: no playout, the base's card, said in ``last``."""
    g = a_play()
    view, legal = g.view(g.current_player), g.legal_actions()
    bot = make_agent("search:expert?playouts=120", seed=5)
    base = make_agent("expert", seed=5).choose(view, legal)
    calls = []
    monkeypatch.setattr(SearchAgent, "_values",
                        lambda self, *a, **k: calls.append(a) or pytest.fail("searched"))
    bot.deadline = time.monotonic() - 1
    assert bot.choose(view, legal) == base
    assert bot.last == {"rows": 0, "late": True} and not calls


@pytest.mark.parametrize("budget", [1, 3, 5])
def test_the_search_stops_at_its_deadline_with_the_batches_done(monkeypatch, budget):
    """The clock is read before each batch: a budget of ``budget`` ticks runs that many
    batches of the decision's deals (of :data:`DEADLINE_BATCHES`), and the card is the best
    of those."""
    clock = Clock()
    monkeypatch.setattr(search_module, "monotonic", clock)
    g = a_play()
    view, legal = g.view(g.current_player), g.legal_actions()
    bot = make_agent("search:expert?playouts=160", seed=5, time_budget_s=budget + 0.5)
    card = bot.choose(view, legal)
    deals = 160 // len(legal)
    sizes = [len(b) for b in np.array_split(np.arange(deals), DEADLINE_BATCHES)]
    assert bot.last["rows"] == sum(sizes[:budget]) * len(legal)
    assert card == bot.last["card"] and card in legal


def test_the_time_budget_is_checked():
    for bad in (0, -1, float("inf"), float("nan"), "1"):
        with pytest.raises(ValueError, match="time_budget_s"):
            SearchAgent("expert", time_budget_s=bad)


# ------------------------------------------------------------------ the table

class TimedBot:
    """A bot with a time limit like the search's (``deadline``): it lays its first legal
    card, or its last once the deadline it was given has passed; it notes each deadline it
    saw and the thread it thought in."""

    asks_forced = False
    name = "timed"
    thinking = 0
    most = 0
    lock = threading.Lock()
    threads: set[str] = set()
    pause = 0.0

    def __init__(self, seed=None) -> None:
        self.deadline: float | None = None
        self.seen: list[float | None] = []
        self.late: list[bool] = []

    def choose(self, view, legal):
        cls = type(self)
        with cls.lock:
            cls.thinking += 1
            cls.most = max(cls.most, cls.thinking)
            cls.threads.add(threading.current_thread().name)
        try:
            time.sleep(cls.pause)
            self.seen.append(self.deadline)
            late = self.deadline is not None and time.monotonic() > self.deadline
            self.late.append(late)
            return legal[-1] if late else legal[0]
        finally:
            with cls.lock:
                cls.thinking -= 1


register_agent("timed-test-bot", lambda seed=None, **_: TimedBot(seed))


def play_out(table: Table, deadline=None, moves: int = 10**6) -> None:
    for _ in range(moves):
        if table.stage == "over":
            return
        if table.stage in ("discard", "play"):
            legal = table.game.legal_actions()
            table.act(table.seq, legal[:table.need if table.stage == "discard" else 1],
                      deadline=deadline)
        else:
            table.act(table.seq, action="next", deadline=deadline)


def test_the_table_gives_its_deadline_to_the_bots_for_their_turn_alone():
    table = Table(Rules(), bot="timed-test-bot", seed=4)
    play_out(table, deadline=time.monotonic() + 3600, moves=6)
    bot = table.players[1]
    assert bot.seen and all(d is not None for d in bot.seen)
    assert bot.deadline is None   # cleared after the turn


def test_a_restored_game_replays_a_timed_bots_recorded_cards():
    """A bot with a time limit chose by the machine's speed: a restarted server plays its
    recorded cards again instead of asking it (here it chose differently once late)."""
    table = Table(Rules(), bot="timed-test-bot", seed=4)
    play_out(table, deadline=time.monotonic() + 3600, moves=8)
    play_out(table, deadline=time.monotonic() - 1, moves=8)   # late: its last cards
    record = table.to_record()
    again = Table.from_record(record)
    assert again.game.actions == table.game.actions and again.seq == table.seq
    assert isinstance(again.players[1], TimedBot)   # asked again from here on
    play_out(again, moves=4)


def next_move(state: dict) -> dict:
    """The body of a player's next ``/move``: the first legal cards, or ``next`` past a show."""
    body = {"seq": state["seq"]}
    if state["stage"] in ("discard", "play"):
        body["cards"] = state["legal"][:state["need"] if state["stage"] == "discard" else 1]
    else:
        body["action"] = "next"
    return body


# ------------------------------------------------------------------ the server under load

@pytest.fixture
def timed_bots():
    TimedBot.thinking = TimedBot.most = 0
    TimedBot.threads = set()
    TimedBot.pause = 0.02
    yield TimedBot
    TimedBot.pause = 0.0


def test_five_players_at_once_think_in_the_bounded_pool(timed_bots):
    """5 players move at once: every move is answered, the bots' turns run in the pool's
    threads alone and never more than ``bot_threads`` at once (a busy table's memory is that
    of two searches, however many wait), each with the move's deadline."""
    app = create_app({"timed": "timed-test-bot"}, bot_threads=2, think_s=60)
    keys = []
    served = serve(app)
    url = next(served)

    def player(seed: int) -> int:
        with httpx.Client(base_url=url, timeout=60) as client:
            r = client.post("/api/games", json={"bot": "timed", "seed": seed})
            assert r.status_code == 201, r.text
            state, moves = r.json(), 0
            keys.append(state["id"])
            for _ in range(12):
                if state["stage"] == "over":
                    break
                r = client.post(f"/api/games/{state['id']}/move", json=next_move(state))
                assert r.status_code == 200, r.text
                state, moves = r.json(), moves + 1
            return moves

    try:
        with ThreadPoolExecutor(5) as pool:
            assert all(n == 12 for n in pool.map(player, range(5)))
    finally:
        next(served, None)   # the server stops
    assert 1 <= timed_bots.most <= 2
    assert timed_bots.threads and all(t.startswith("cribenv-bots") for t in timed_bots.threads)
    for key in keys:
        seen = app.state.games.get(key).players[1].seen
        assert seen and all(d is not None for d in seen)


def test_a_moves_deadline_counts_from_its_arrival(timed_bots):
    """The deadline is the move's arrival plus ``think_s``: with 1 ms and a bot that pauses
    50 ms before it looks, every card of the bots' turn is a late one."""
    timed_bots.pause = 0.05
    app = create_app({"timed": "timed-test-bot"}, bot_threads=1, think_s=0.001)
    with TestClient(app) as client:
        state = client.post("/api/games", json={"bot": "timed", "seed": 1}).json()
        r = client.post(f"/api/games/{state['id']}/move", json={"seq": 0, "action": "next"})
        assert r.status_code == 200, r.text
        table = app.state.games.get(state["id"])
        bot = table.players[1]
        assert bot.seen and all(d is not None for d in bot.seen) and all(bot.late)


def test_the_search_in_the_pool_honours_the_deadline(monkeypatch):
    """The real search behind the server, each batch of its deals made slow (0.3 s): with 0.6
    s a move, no decision runs more than three batches of its eight, however slow the
    machine (a batch starts only before the deadline)."""
    batches: list[int] = []   # a decision's batches
    calls = [0]
    real = SearchAgent._values_until

    def slow(self, view, legal, deals=None):
        calls[0] += 1
        time.sleep(0.3)
        return np.zeros((len(legal), deals or 2))

    def counted(self, view, legal, limit):
        calls[0] = 0
        values = real(self, view, legal, limit)
        batches.append(calls[0])
        return values

    monkeypatch.setattr(SearchAgent, "_values", slow)
    monkeypatch.setattr(SearchAgent, "_values_until", counted)
    app = create_app({"search": "search:expert?playouts=160"}, bot_threads=1, think_s=0.6)
    with TestClient(app) as client:
        state = client.post("/api/games", json={"bot": "search", "seed": 2}).json()
        for _ in range(60):
            if state["stage"] == "over" or len(batches) >= 3:
                break
            state = client.post(f"/api/games/{state['id']}/move", json=next_move(state)).json()
    assert batches, "the search never searched"
    assert max(batches) <= 3 < DEADLINE_BATCHES


def test_the_page_says_the_bot_is_thinking():
    """The table holds a hidden status line naming the bot, which the page's script shows
    while a move waits for the bots."""
    app = create_app({"expert": "expert"})
    with TestClient(app) as client:
        state = client.post("/api/games", json={"bot": "expert", "seed": 1}).json()
        assert ('<p class="thinking" id="thinking" role="status" hidden>Expert is '
                "thinking\u2026</p>") in state["html"]
        script = client.get("/static/table.js").text
        assert 'getElementById("thinking")' in script and "showThinking(true)" in script
