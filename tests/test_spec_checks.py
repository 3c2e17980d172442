"""Bot specs are checked when they are read: a value that cannot play is refused there (a
ValueError naming the setting and its range; exit 2 from the CLI), and the smallest values
accepted play (issue 52: specs that passed the check, then crashed at the first decision)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from cribenv.game import Game, Phase


def _at_play(seed: int = 1, legal: int = 2) -> Game:
    """A game at a play decision with ``legal`` cards to choose from."""
    bot = make_agent("greedy")
    for s in range(seed, seed + 50):
        game = Game(seed=s)
        while not game.is_over and not (game.phase is Phase.PLAY
                                        and len(game.legal_actions()) == legal):
            game.step(bot.choose(game.view(game.current_player), game.legal_actions()))
        if not game.is_over:
            return game
    raise AssertionError("no such decision")           # pragma: no cover


@pytest.mark.parametrize("spec, words", [
    # OpenSpiel's first simulation only evaluates the root: one simulation tries no card
    ("openspiel:mcts?simulations=1", "simulations must be a whole number from 2 to 100,000"),
    ("openspiel:ismcts?simulations=1", "simulations must be a whole number from 2 to 100,000"),
    # ... and each of mcts's worlds needs two of them
    ("openspiel:mcts?simulations=10&worlds=6", "worlds must be a whole number from 1 to 5 "
                                               "(each world's search needs 2 of the 10"),
    ("openspiel:mcts?simulations=10&worlds=10", "worlds must be a whole number from 1 to 5"),
    ("openspiel:mcts?simulations=3&worlds=2", "worlds must be a whole number from 1 to 1 "),
    ("openspiel:ismcts?simulations=5&simulations=6", "'simulations' is given twice"),
    # models=own reads the observations: the shipped expert-prior network has no model alone
    ("search:ppo:shipped?models=own", "'ppo:shipped' is an 'expert-prior' network"),
    ("search:ppo:scratch?playouts=5&playouts=6", "'playouts' is given twice"),
])
def test_a_spec_that_cannot_play_is_refused_when_read(spec, words):
    with pytest.raises(ValueError, match=words.replace("?", r"\?").replace("(", r"\(")):
        make_agent(spec, seed=0)


@pytest.mark.parametrize("spec", [
    "openspiel:mcts?simulations=2",
    "openspiel:ismcts?simulations=2",
    "openspiel:mcts?simulations=10&worlds=5&solve=false",
    "openspiel:ismcts?simulations=2&final_policy=normalized_visit_count",
    "openspiel:ismcts?simulations=2&final_policy=max_value&world_samples=1",
])
@pytest.mark.parametrize("legal", [2, 4])
def test_the_smallest_openspiel_budgets_play(spec, legal):
    pytest.importorskip("pyspiel", reason="the 'openspiel' extra (open_spiel)")
    game = _at_play(legal=legal)
    bot = make_agent(spec, seed=0)
    assert bot.choose(game.view(game.current_player), game.legal_actions()) \
        in game.legal_actions()


@pytest.mark.parametrize("spec", [
    "search:ppo:scratch?models=own&playouts=1",
    "search:ppo:scratch-exit?models=own&playouts=1",
    "search:expert?playouts=1",
    "search:ppo:MLP?models=own&playouts=5",
])
def test_the_smallest_search_budgets_and_every_own_network_play(spec, tmp_path):
    from agents.ppo import save_tensors

    mlp = tmp_path / "mlp.safetensors"
    rng = np.random.default_rng(1)
    save_tensors(mlp, {"pi.0.weight": rng.normal(size=(8, 601)), "pi.0.bias": np.zeros(8),
                       "action.weight": rng.normal(size=(52, 8)),
                       "action.bias": np.zeros(52)}, {"arch": "mlp", "activation": "tanh"})
    game = _at_play(legal=2)
    bot = make_agent(spec.replace("MLP", str(mlp)), seed=0)
    assert bot.choose(game.view(game.current_player), game.legal_actions()) \
        in game.legal_actions()
    assert bot.last["rows"] > 0


@pytest.mark.parametrize("spec", ["openspiel:mcts?simulations=1",
                                  "search:ppo:shipped?models=own"])
def test_the_cli_refuses_them_before_any_game(spec, tmp_path, capsys):
    """Exit 2 with the setting named, no traceback, and no database written."""
    from cribenv.cli import main

    db = tmp_path / "t.sqlite"
    status = main(["tournament", "--agents", spec, "random", "--games", "2", "--db", str(db),
                   "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err, err
    assert ("simulations must be" in err) if "openspiel" in spec else ("expert-prior" in err)
    assert not db.exists()


# ------------------------------------------------------------------------------------------
# The search's budget: bounded by the memory one decision takes
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("models", ["heuristic", "own"])
def test_the_budget_keeps_a_decision_within_its_memory(models):
    """The most playouts take at most DECISION_MEMORY at the measured memory a playout; one
    more is refused when the spec is read, the message saying why (nothing is searched)."""
    from agents.search import DECISION_MEMORY, MAX_PLAYOUTS, PLAYOUT_MEMORY

    assert MAX_PLAYOUTS * PLAYOUT_MEMORY <= DECISION_MEMORY <= 2 * 10**9
    spec = f"search:ppo:scratch?models={models}&playouts="
    assert make_agent(f"{spec}{MAX_PLAYOUTS}").playouts == MAX_PLAYOUTS
    for bad in (MAX_PLAYOUTS + 1, 1_000_000):
        with pytest.raises(ValueError, match=rf"from 1 to 200,000 \(a decision takes up to "
                                             rf"10 KB of memory a playout: 200,000 keep it "
                                             rf"within 2 GB\), got {bad}"):
            make_agent(f"{spec}{bad}")


@pytest.mark.parametrize("models", ["heuristic", "own"])
def test_the_models_read_a_part_at_a_time_and_decide_alike(models, monkeypatch):
    """The deals' likelihoods and the network's cards are computed NETWORK_ROWS rows at a
    time (what keeps the memory a playout small), with the values of one batch."""
    import agents.search.playouts as playouts
    from agents.ppo import KeepsActor

    game = _at_play(legal=2, seed=3)
    view, legal = game.view(game.current_player), game.legal_actions()
    spec = f"search:ppo:scratch?models={models}&playouts=200"   # 100 deals of 800 drawn
    whole = make_agent(spec, seed=4)
    whole.choose(view, legal)

    calls: dict[str, list[int]] = {"logits": [], "throw_log_probs": [], "likelihood": []}
    for name in ("logits", "throw_log_probs"):
        real = getattr(KeepsActor, name)
        monkeypatch.setattr(KeepsActor, name, lambda self, obs, real=real, name=name:
                            calls[name].append(len(np.atleast_2d(obs))) or real(self, obs))
    real_from_view = playouts.from_view

    def from_view(view, hidden, seeds, **kwargs):
        if seeds is None and view.phase is Phase.PLAY:     # the drawn deals, to be weighed
            calls["likelihood"].append(len(hidden.hands))
        return real_from_view(view, hidden, seeds, **kwargs)

    monkeypatch.setattr(playouts, "from_view", from_view)
    monkeypatch.setattr(playouts, "NETWORK_ROWS", 16)
    parts = make_agent(spec, seed=4)
    parts.choose(view, legal)
    weighed = calls["throw_log_probs"] if models == "own" else calls["likelihood"]
    assert sum(weighed) == 800 and max(weighed) == 16
    if models == "own":                                    # the playouts' cards
        assert max(calls["logits"]) == 16 and len(calls["logits"]) > 200 // 16
    np.testing.assert_allclose(parts.last["values"], whole.last["values"], rtol=0, atol=1e-12)
    assert parts.last["card"] == whole.last["card"]
