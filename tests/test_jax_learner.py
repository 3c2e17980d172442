"""examples/jax_ppo.py, self-play PPO in pure JAX: the tiny form end to end, its exported
policy played by ``cribenv tournament``, and the exported actor computing the JAX logits."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

PATH = Path(__file__).resolve().parents[1] / "examples" / "jax_ppo.py"
TINY = ["--num-games", "64", "--num-steps", "16", "--updates", "2", "--minibatches", "2"]


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("jax_ppo", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def trained(example, tmp_path_factory):
    path = tmp_path_factory.mktemp("jax_ppo") / "tiny.safetensors"
    result = example.main(TINY + ["--save", str(path)])
    return result, path


def test_the_tiny_form_runs_end_to_end(trained):
    result, path = trained
    assert result["updates"] == 2 and result["decisions"] == 2 * 64 * 16
    assert math.isfinite(result["loss"]) and math.isfinite(result["entropy"])
    assert path.is_file()


def test_the_exported_policy_plays_a_tournament(trained, tmp_path):
    from agents import make_agent
    from cribenv.cli import main

    _, path = trained
    agent = make_agent("ppo:" + str(path))
    assert agent.policy.config["num_players"] == 2 and agent.policy.config["arch"] == "mlp"
    assert main(["tournament", "--agents", f"jax=ppo:{path}", "random", "--games", "20",
                 "--seed", "7", "--workers", "1", "--db", str(tmp_path / "t.sqlite"),
                 "--out", str(tmp_path)]) == 0


def test_the_file_computes_the_jax_logits(example, trained):
    """Observations of real positions (from the JAX engine): the JAX actor's logits equal
    those ``agents.ppo`` computes from the exported file."""
    import jax

    from agents.ppo import load_policy
    from cribenv.jax import Cribbage

    result, path = trained
    env = Cribbage(num_players=2, target=121)
    step = jax.jit(env.step)
    state = jax.jit(env.init)(jax.random.PRNGKey(3))
    rows = []
    key = jax.random.PRNGKey(4)
    for _ in range(12):
        rows.append(np.asarray(state.observation))
        key, k_act, k_step = jax.random.split(key, 3)
        action = jax.random.categorical(k_act, np.where(state.legal_action_mask, 0.0, -np.inf))
        state = step(state, action, k_step)
    obs = np.stack(rows)
    params = result["params"]
    # the tiny run barely moves the weights from their init: make the logits matter
    params = jax.tree_util.tree_map(lambda x: x * 3.0, params)
    example.save_policy(str(path.with_name("scaled.safetensors")), params,
                        example.parse_args(TINY), 0)
    want = np.asarray(example.forward(params["actor"], obs))
    got = load_policy(path.with_name("scaled.safetensors")).logits(obs)
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_gae_follows_each_seats_chain(example):
    """Hand-computed, one game column of 2 seats: seat 0 decides at steps 0 and 2, seat 1 at
    step 1; step 1 pays (1, -1), step 2 ends the game paying (2, -2); step 3 is seat 1's first
    decision of the next game, cut by the rollout's end (bootstrapped with 7)."""
    import jax.numpy as jnp

    batch = {"seat": jnp.array([[0], [1], [0], [1]]),
             "value": jnp.array([[0.5], [0.25], [1.0], [4.0]]),
             "done": jnp.array([[False], [False], [True], [False]]),
             "reward": jnp.array([[[0.0, 0.0]], [[1.0, -1.0]], [[2.0, -2.0]], [[0.0, 0.0]]])}
    bootstrap = jnp.array([[5.0, 7.0]])
    g, lam = 0.9, 0.8
    adv3 = 0.0 + g * 7.0 - 4.0              # seat 1, cut: bootstrapped
    adv2 = 2.0 - 1.0                        # seat 0, ends the game
    adv1 = (-1.0 - 2.0) - 0.25              # seat 1: everything paid to it until the end
    adv0 = (1.0 + g * 1.0 - 0.5) + g * lam * adv2     # seat 0: paid 1 at step 1, then step 2
    got = np.asarray(example.advantages(batch, bootstrap, g, lam))[:, 0]
    np.testing.assert_allclose(got, [adv0, adv1, adv2, adv3], rtol=1e-6)
