"""Tianshou 2 (cribenv.integrations.tianshou): every agent's rewards on its own rows, the final
results included, and a masked DQN that trains through Tianshou's multi-agent API."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="the 'integrations' extra (tianshou) is not installed")
pytest.importorskip("torch", reason="tianshou needs torch")

from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402

import cribenv  # noqa: E402
from cribenv.integrations.tianshou import CribbageTianshouEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def credited_returns(env, rng: np.random.Generator) -> tuple[dict[str, float], tuple]:
    """One game with random legal cards; what Tianshou's dispatcher gives each agent: the sum
    of its own column over the rows where it acted (``obs.agent_id``)."""
    obs, _ = env.reset(seed=int(rng.integers(2**31)))
    got = dict.fromkeys(env.agents, 0.0)
    done = False
    while not done:
        agent = obs["agent_id"]
        action = int(rng.choice(np.flatnonzero(obs["mask"])))
        obs, rew, term, trunc, _ = env.step(action)
        got[agent] += float(rew[env.agent_idx[agent]])
        done = term or trunc
    return got, env.env.unwrapped.game


@pytest.mark.parametrize("num_players, reward", [(2, "win"), (3, "points"), (4, "win")])
def test_every_agent_is_credited_its_whole_result(num_players, reward):
    env = CribbageTianshouEnv(num_players=num_players, target=61, reward=reward)
    rng = np.random.default_rng(num_players)
    for _ in range(5):
        got, game = credited_returns(env, rng)
        for agent, total in got.items():
            side = game.side_of(env.agent_idx[agent])
            if reward == "win":
                want = 1.0 if side == game.winner else -1.0 / (game.rules.num_sides - 1)
            else:
                own = game.scores[side]
                others = [s for i, s in enumerate(game.scores) if i != side]
                want = own - sum(others) / len(others)
            assert total == pytest.approx(want), (agent, got, game.scores)


def test_the_stock_pettingzoo_env_loses_the_final_result():
    """Why the adapter exists: through Tianshou's own PettingZooEnv the agent that did not make
    the last move never sees its result (15 games: the losers' -1 is lost in most)."""
    env = PettingZooEnv(cribenv.env(target=61))
    rng = np.random.default_rng(0)
    lost = 0
    for _ in range(15):
        got, game = credited_returns(env, rng)
        lost += any(total == 0.0 for total in got.values())
    assert lost >= 5


def training_rows(make_env, games: int) -> tuple[np.ndarray, np.ndarray]:
    """Random players through Tianshou's own multi-agent Collector: each agent's reward summed
    over the buffer rows its algorithm trains on (its own column where ``obs.agent_id`` is it),
    and the true totals (the collector's episode returns: every row's whole reward vector)."""
    env = make_env()
    random_player = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[random_player] * len(env.agents),
                                             env=env)
    envs = DummyVectorEnv([make_env for _ in range(2)])
    envs.seed(0)
    buffer = VectorReplayBuffer(20_000, len(envs))
    np.random.seed(0)
    stats = Collector(algorithm, envs, buffer).collect(n_episode=games,
                                                       reset_before_collect=True)
    rows = buffer[buffer.sample_indices(0)]
    assert rows.done.sum() == games == len(stats.returns)
    trained = np.array([rows.rew[rows.obs.agent_id == agent, i].sum()
                        for i, agent in enumerate(env.agents)])
    return trained, stats.returns.sum(axis=0)


def test_the_stock_routes_training_rows_miss_the_results_the_adapters_are_exact():
    """The issue's finding, through Tianshou's Collector (win reward, 20 games): on the stock
    PettingZooEnv's rows the last mover's own column holds its result and the other agent's
    result is on a row it does not train on, so each agent's training rows add up to its results
    in the games where it moved last, here [9, 5] against the true totals [4, -4]; on
    CribbageTianshouEnv's rows they are the true totals."""
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    stock, truth = training_rows(lambda: PettingZooEnv(cribenv.env(target=61)), 20)
    assert truth.sum() == pytest.approx(0.0)        # the collector's returns: +1 and -1 a game
    assert not np.allclose(stock, truth) and stock.sum() > 0   # mostly the winners' +1 kept
    exact, truth = training_rows(lambda: CribbageTianshouEnv(target=61), 20)
    assert exact == pytest.approx(truth) and truth.sum() == pytest.approx(0.0)
    assert np.abs(truth).sum() > 0


def test_closing_steps_carry_an_all_true_mask_and_end_the_episode():
    env = CribbageTianshouEnv(num_players=3, target=61)
    obs, _ = env.reset(seed=1)
    rows = []
    done = False
    while not done:
        rows.append(obs)
        obs, rew, done, _, _ = env.step(int(np.flatnonzero(obs["mask"])[0]))
    closing = [r for r in rows if r["mask"].all()]
    assert len(closing) == 2 and rows[-1] is closing[-1]
    assert {r["agent_id"] for r in closing} | {rows[-3]["agent_id"]} == set(env.agents)


def test_env_or_kwargs_not_both():
    with pytest.raises(TypeError, match="not both"):
        CribbageTianshouEnv(cribenv.env(), target=61)


@pytest.mark.slow   # ~40 s, most of it Tianshou compiling its buffer code with numba
def test_the_example_trains_a_masked_dqn():
    spec = importlib.util.spec_from_file_location("tianshou_dqn", ROOT / "examples" /
                                                  "tianshou_dqn.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tianshou_dqn"] = module
    spec.loader.exec_module(module)
    out = module.main(["--iterations", "2", "--envs", "2", "--steps", "128", "--updates", "4",
                       "--batch-size", "32", "--games", "2"])
    assert out["games"] >= 1 and np.isfinite(out["loss"]) and 0 <= out["eval_win_rate"] <= 1
