"""examples/cleanrl_selfplay.py, the one-file self-play PPO: its credit and GAE by hand, and a
short run that learns."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

PATH = Path(__file__).resolve().parents[1] / "examples" / "cleanrl_selfplay.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("cleanrl_selfplay", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_stands_alone():
    """A file users copy: numpy, torch and cribenv only (not the project's trainer)."""
    roots = set()
    for node in ast.walk(ast.parse(PATH.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.add(node.module.split(".")[0])
    assert roots <= {"__future__", "argparse", "time", "numpy", "torch", "cribenv"}, roots


def test_gae_follows_each_seats_chain(example):
    """Hand-computed: one game column, decisions at steps 0 (seat 0), 1 (seat 1), 2 (seat 0).
    Seat 0's chain is 0 -> 2 (cut at the rollout's end, bootstrapped with 5); seat 1's decision
    ends its game (terminal)."""
    b = {"reward": np.array([[1.0], [2.0], [3.0]], np.float32),
         "value": np.array([[0.5], [1.5], [4.0]], np.float32),
         "next_t": np.array([[2], [-1], [-1]]),
         "terminal": np.array([[False], [True], [False]]),
         "bootstrap": np.array([[0.0], [0.0], [5.0]], np.float32)}
    gamma, lam = 0.9, 0.8
    adv2 = 3.0 + 0.9 * 5.0 - 4.0                   # 3.5
    adv1 = 2.0 - 1.5                                # terminal: no next value
    adv0 = (1.0 + 0.9 * 4.0 - 0.5) + 0.9 * 0.8 * adv2
    np.testing.assert_allclose(example.advantages(b, gamma, lam)[:, 0], [adv0, adv1, adv2],
                               rtol=1e-6)


def test_every_point_paid_is_credited_once_to_the_seat_it_was_paid_to(example):
    """In a first rollout (every game fresh), the rewards credited to a seat's decisions add
    up to what the engine paid that seat; chains link decisions of one seat, forwards."""
    from cribenv.game import Rules
    from cribenv.vector import VectorGame

    paid = np.zeros((16, 3))

    class Recording(VectorGame):
        def step(self, actions, rows=None):
            rewards = super().step(actions, rows)
            paid[:] += rewards
            return rewards

    args = example.parse_args(["--num-games", "16", "--num-steps", "120", "--players", "3",
                               "--target", "61"])
    vg = Recording(Rules(num_players=3, target=61), seeds=np.arange(16), reward="points",
                   auto_reset=True, seed_stream=0)
    b = example.collect(vg, example.Agent(16), args)
    credited = np.zeros((16, 3))
    games = np.broadcast_to(np.arange(16), b["seat"].shape)
    np.add.at(credited, (games, b["seat"]), b["reward"])
    assert np.abs(paid).sum() > 100                  # points were scored
    np.testing.assert_allclose(credited, paid, atol=1e-4)
    t, i = np.nonzero(b["next_t"] >= 0)
    assert (b["next_t"][t, i] > t).all()
    assert (b["seat"][b["next_t"][t, i], i] == b["seat"][t, i]).all()
    assert b["terminal"].sum() >= 16                 # 61-point games end inside 120 steps


def test_a_short_run_learns_to_beat_random(example, tmp_path):
    import torch

    out = tmp_path / "agent.pt"
    result = example.main(["--total-steps", "60000", "--eval-games", "400", "--save", str(out)])
    assert result["steps"] >= 60000
    assert result["win_rate_end"] >= result["win_rate_start"] + 0.15, result
    weights = torch.load(out, weights_only=True)
    assert weights["actor.0.weight"].shape == (128, 601)
