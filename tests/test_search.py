"""search:BASE agents (agents.search): legal, deterministic under the seed, exact where a
card wins the game, the base's choice kept under a large margin, bad specs refused."""

from __future__ import annotations

import re

import pytest

from agents import make_agent
from agents.arena import run_game
from cribenv.cards import parse, parse_many
from cribenv.game import Game, Phase, Rules


def play(specs, seed, rules=None):
    game = Game(rules or Rules(num_players=len(specs)), seed=seed)
    agents = [make_agent(s, seed=seed * 10 + i) for i, s in enumerate(specs)]
    run_game(game, agents)
    return game


@pytest.mark.parametrize("players", [2, 3, 4])
def test_search_plays_legal_games_at_every_table(players):
    specs = ["search:greedy?playouts=40"] + ["greedy"] * (players - 1)
    game = play(specs, seed=players)
    assert game.is_over and game.winner is not None


def test_search_is_deterministic_under_its_seed():
    a = play(["search:expert?playouts=60", "expert"], seed=3)
    b = play(["search:expert?playouts=60", "expert"], seed=3)
    assert a.actions == b.actions


def test_a_huge_margin_keeps_every_choice_of_the_base():
    searched = play(["search:greedy?playouts=40&margin=1e9", "expert"], seed=5)
    plain = play(["greedy", "expert"], seed=5)
    assert searched.actions == plain.actions


def test_search_finds_the_card_that_wins_the_game():
    """At 119 to 120 the dealer lays the 5 on the pone's ten (fifteen 2, the game) whatever
    its random base would play: every playout of the 5 is a win, the other cards' are not."""
    game = Game(deals=[{"dealer": 0, "hands": ["5H 2C 3D 9S KS QD", "10C 4H 6C 8S 7D AH"],
                        "starter": "JC"}])
    for c in ["7D", "AH", "KS", "QD"]:
        game.step(parse(c))
    game.scores = [119, 120]
    game.step(parse("10C"))           # the pone leads a ten
    view = game.view(0)
    assert view.phase is Phase.PLAY and view.legal == sorted(parse_many("5H 2C 3D 9S"))
    for seed in range(5):
        bot = make_agent("search:random?playouts=80&margin=0", seed=seed)
        assert bot.choose(view, view.legal) == parse("5H")
        values = dict(zip(bot.last["cards"], bot.last["values"]))
        assert values[parse("5H")] == pytest.approx(1.0) and max(v for c, v in values.items()
                                                   if c != parse("5H")) < 0.99


@pytest.mark.parametrize("spec, words", [
    ("search:", "needs a base agent"),
    ("search:expert?playouts=0", "from 1 to 200,000 .*, got 0"),
    ("search:expert?playouts=1000000000", "from 1 to 200,000 .*, got 1000000000"),
    ("search:expert?playouts=200001", "from 1 to 200,000 .*, got 200001"),
    # checked when the spec is read, before the base is built
    ("search:ppo:/no/such/policy.safetensors?playouts=1000000000", "got 1000000000"),
    ("search:expert?playouts=lots", "not a number"),
    ("search:expert?margin=-1", ">= 0"),
    ("search:expert?margin=nan", ">= 0"),
    ("search:expert?depth=3", "playouts=N, margin=X, models"),
    ("search:expert?playouts", "playouts=N, margin=X, models"),
    ("search:ppo:scratch?models=oracle", "heuristic, own, got 'oracle'"),
    ("search:expert?models=own", "base must be a ppo:PATH agent, got 'expert'"),
    ("search:gredy", "gredy"),
])
def test_bad_specs_are_refused_with_the_value(spec, words):
    with pytest.raises(ValueError, match=words.replace("?", r"\?")):
        make_agent(spec)


def test_the_budget_is_bounded_however_it_is_given():
    from agents.search import MAX_PLAYOUTS, SearchAgent

    assert make_agent(f"search:random?playouts={MAX_PLAYOUTS}").playouts == MAX_PLAYOUTS
    for bad in (MAX_PLAYOUTS + 1, 0, 2.5, True):
        with pytest.raises(ValueError, match="search playouts must be a whole number"):
            SearchAgent("random", playouts=bad)
    with pytest.raises(ValueError, match="search margin"):
        make_agent("search:random", margin=float("inf"))


def test_the_cli_refuses_a_huge_budget_before_any_game(tmp_path, capsys):
    """Exit 2 with the value named, no traceback, and no database written."""
    from cribenv.cli import main

    db = tmp_path / "t.sqlite"
    status = main(["tournament", "--agents", "search:expert?playouts=1000000000", "random",
                   "--games", "2", "--db", str(db), "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "200,000 (" in err and "got 1000000000" in err and "Traceback" not in err
    assert not db.exists()


def test_the_search_is_built_on_the_engines_public_interface():
    """agents/search reads and steps the batched engine through its documented names
    (cribenv.vector, cribenv.vector_kernels), never a private module of cribenv."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "agents" / "search"
    private = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names] \
                if isinstance(node, ast.ImportFrom) and node.module else []
            private += [f"{path.name}: {n}" for n in names
                        if n.startswith("cribenv") and any(p.startswith("_")
                                                           for p in n.split(".")[1:])]
    assert {p.name for p in package.glob("*.py")} >= {"__init__.py", "kernels.py",
                                                       "playouts.py"}
    assert not private, private


def test_search_plays_as_an_env_opponent():
    from cribenv.wrappers import SingleAgentCribbageEnv

    env = SingleAgentCribbageEnv(opponent="search:greedy?playouts=20", seed=0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        legal = info["action_mask"].nonzero()[0] if "action_mask" in info else \
            env.action_masks().nonzero()[0]
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        done = terminated or truncated
    assert reward in (-1.0, 1.0)


def test_the_bench_section_reports_search_beside_its_base():
    from train import benchmarks

    section = benchmarks.load_section("search")
    res = section.run(0.05, lambda text: None)
    assert res["base"] > 0 and res["engine"] > 0
    for budget in section.BUDGETS:
        r = res[f"playouts={budget}"]
        assert r["decisions"] > 0 and r["playouts"] > 0
    section.report(res)


def test_the_docs_pages_snippets_run(capsys):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "search.md"
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"),
                        re.S | re.M)
    assert len(blocks) >= 3
    for code in blocks:
        exec(compile(code, str(page), "exec"), {})
    out = capsys.readouterr().out
    assert "0.559" in out     # the first dealer's chance, as the page says


def test_the_limits_script_runs_and_refuses_bad_input(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "search_limits.py"
    out = tmp_path / "limits.json"
    run = subprocess.run([sys.executable, str(script), "--base", "greedy", "--deals", "2",
                          "--playouts", "20", "--workers", "1", "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = json.loads(out.read_text())
    assert {"base", "search", "oracle", "oracle-search"} <= set(result)
    assert result["base"]["games"] == 4
    bad = subprocess.run([sys.executable, str(script), "--base", "gredy"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "did you mean 'greedy'" in bad.stderr
    assert "Traceback" not in bad.stderr


# ------------------------------------------------------------------------------------------
# models=own: the base network's own models, nothing a bot computes
# ------------------------------------------------------------------------------------------

def _at_play(seed: int):
    """A game of ``ppo:scratch`` in both seats at its first play decision, and the bot."""
    bot = make_agent("ppo:scratch")
    game = Game(seed=seed)
    while game.phase is Phase.DISCARD:
        game.step(bot.choose(game.view(game.current_player), game.legal_actions()))
    return game, bot


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_own_playouts_play_the_networks_cards_to_the_end_of_the_hand(seed):
    """A playout from the real deal ends the hand with the scores of the game that
    ``ppo:scratch`` plays from the same position in both seats."""
    from agents.search.playouts import from_view, network_playout
    from cribenv.positions import actual_hidden

    game, bot = _at_play(seed)
    view = game.view(game.current_player)
    vg = from_view(view, actual_hidden(game, view.seat), seeds=[0])
    network_playout(vg, bot.policy)
    hand = game.hand_number
    while not game.is_over and game.hand_number == hand:
        game.step(bot.choose(game.view(game.current_player), game.legal_actions()))
    assert vg.scores[0].tolist() == list(game.scores)
    assert bool(vg.done[0]) == game.is_over


@pytest.mark.parametrize("seed", [4, 6])
def test_own_throw_likelihood_is_the_networks_chance_of_the_throw_made(seed):
    """The weight of the real deal is the chance the network gives the other seat's throw,
    read from that seat's own view of its six cards, mixed with a tenth of 1/15."""
    import numpy as np

    from agents.ppo import throw_tables
    from agents.search.playouts import own_discard_likelihood
    from cribenv.observation import encode
    from cribenv.positions import actual_hidden

    bot = make_agent("ppo:scratch")
    game = Game(seed=seed)
    other = None
    while game.phase is Phase.DISCARD:
        seat = game.current_player
        if other is None and seat != game.dealer:     # the first throw of the pone's
            other, six = seat, game.view(seat)
        game.step(bot.choose(game.view(seat), game.legal_actions()))
    me = 1 - other
    while game.current_player != me:
        game.step(bot.choose(game.view(game.current_player), game.legal_actions()))
    view = game.view(me)
    assert list(view.scores) == list(six.scores)     # nothing scored since the throw
    cards, logp = bot.policy.throw_log_probs(encode(six)[None])
    thrown = throw_tables(6)[0]
    made = set(game.discards[other])
    t = next(i for i, pair in enumerate(thrown) if {int(cards[0, j]) for j in pair} == made)
    ll = own_discard_likelihood(view, actual_hidden(game, me), bot.policy)
    assert ll[0] == pytest.approx(np.log(0.9 * np.exp(logp[0, t]) + 0.1 / 15), rel=1e-9)


def test_own_models_call_no_heuristic_and_read_the_scratch_table(monkeypatch):
    """With models=own no heuristic kernel runs (the bot models, the greedy playouts, the
    expected-value tables) and the chance to win is read from the table of ppo:scratch's own
    hands."""
    import agents.search as search
    import agents.search.playouts as playouts
    from agents.winprob import SCRATCH_TABLE_FILE

    def forbidden(*args, **kwargs):
        raise AssertionError("a heuristic model ran")

    for name in ("playout", "discard_likelihood", "play_likelihood", "greedy_actions"):
        monkeypatch.setattr(playouts, name, forbidden)
    tables = []
    real = search.seat_wins

    def recorded(*args):
        tables.append(args[-1])
        return real(*args)

    monkeypatch.setattr(search, "seat_wins", recorded)
    game = play(["search:ppo:scratch?models=own&playouts=30", "expert"], seed=7)
    assert game.is_over and tables and set(tables) == {SCRATCH_TABLE_FILE}


def test_the_scratch_table_comes_from_the_scratch_agents_hands():
    import json

    import numpy as np

    from agents.winprob import SCRATCH_TABLE_FILE, dealer_wins

    with np.load(SCRATCH_TABLE_FILE) as data:
        meta = json.loads(bytes(data["meta"]))
    assert meta["agent"] == "ppo:scratch" and meta["hands"] >= 20_000
    assert 0.5 < float(dealer_wins(0, 0, table=SCRATCH_TABLE_FILE)) < 0.6


def test_a_table_of_your_own_is_read_and_a_bad_one_named(monkeypatch, tmp_path):
    """``table=FILE`` values the ends by that file (e.g. one solved from your network's
    hands); a file that is not a table is refused when the spec is read, named."""
    import numpy as np

    import agents.search as search
    from agents.winprob import TABLE_FILE

    tables = []
    real = search.seat_wins
    monkeypatch.setattr(search, "seat_wins", lambda *a: tables.append(a[-1]) or real(*a))
    play([f"search:ppo:scratch?models=own&playouts=30&table={TABLE_FILE}", "expert"], seed=7)
    assert tables and set(tables) == {TABLE_FILE}
    text = tmp_path / "notes.txt"
    text.write_text("not a table")
    half = tmp_path / "half.npz"
    np.savez(half, w121=np.full((121, 121), 0.5))
    wild = tmp_path / "wild.npz"
    np.savez(wild, w121=np.full((121, 121), 2.0), w61=np.zeros((61, 61)))
    words = tmp_path / "words.npz"
    np.savez(words, w121=np.full((121, 121), "x"), w61=np.full((61, 61), "x"))
    array = tmp_path / "array.npy"
    np.save(array, np.zeros((121, 121)))
    for bad in (tmp_path / "missing.npz", text, half, wild, words, array):
        with pytest.raises(ValueError, match=re.escape(f"search table {str(bad)!r}")):
            make_agent(f"search:ppo:scratch?models=own&table={bad}")
