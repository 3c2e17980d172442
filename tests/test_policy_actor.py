"""The torch actor of a policy file (train.policy_actor): the numpy player's logits, in every
phase, and the same file written back."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.policy_file import read_policy_file  # noqa: E402
from agents.ppo import PolicyFileError, load_policy, policy_path, save_tensors  # noqa: E402
from cribenv.game import Game  # noqa: E402
from cribenv.observation import encode  # noqa: E402
from train.policy_actor import PolicyActor  # noqa: E402


def observations(games: int = 3) -> np.ndarray:
    """The observations of every decision of a few seeded games of random play."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(games):
        g = Game(seed=seed)
        while not g.is_over:
            rows.append(encode(g.view(g.current_player)))
            legal = g.legal_actions()
            g.step(legal[rng.integers(len(legal))])
    return np.stack(rows)


def test_the_torch_actor_gives_the_numpy_players_logits():
    obs = observations()
    numpy_actor = load_policy(policy_path("scratch"))
    mine = PolicyActor.from_policy_file("scratch").logits(torch.as_tensor(obs)).detach().numpy()
    theirs = numpy_actor.logits(obs)
    held = (obs[:, :52] > 0)                  # the cards a seat may lay or throw
    assert held.sum(1).min() >= 1 and len(obs) > 100
    np.testing.assert_allclose(mine[held], theirs[held], atol=2e-4)


def test_the_file_written_back_is_the_file_read(tmp_path):
    written = PolicyActor.from_policy_file("scratch").save(tmp_path / "again.safetensors")
    assert written.read_bytes() == policy_path("scratch").read_bytes()
    tensors, config = read_policy_file(written)
    assert config["arch"] == "keeps" and "value.beta" in tensors


def test_an_mlp_file_is_read_and_an_expert_prior_one_refused(tmp_path):
    mlp = tmp_path / "mlp.safetensors"
    rng = np.random.default_rng(1)
    save_tensors(mlp, {"pi.0.weight": rng.normal(size=(8, 601)), "pi.0.bias": np.zeros(8),
                       "action.weight": rng.normal(size=(52, 8)),
                       "action.bias": np.zeros(52)}, {"arch": "mlp", "activation": "tanh"})
    obs = observations(1)
    net = PolicyActor.from_policy_file(mlp)
    np.testing.assert_allclose(net.logits(torch.as_tensor(obs)).detach().numpy(),
                               load_policy(mlp).logits(obs), atol=1e-4)
    with pytest.raises(PolicyFileError, match="not an 'mlp' or 'keeps'"):
        PolicyActor.from_policy_file("shipped")
