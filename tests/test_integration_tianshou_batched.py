"""Tianshou 2 on the batched engine (cribenv.integrations.tianshou_batched): a Collector lays
legal cards only, its episode returns are the games' results, finished games wait for their
reset, a DQN trains, and collection is faster than through DummyVectorEnv of per-env envs."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="the 'integrations' extra (tianshou) is not installed")
pytest.importorskip("torch", reason="tianshou needs torch")
pytest.importorskip("numba", reason="the batched engine needs the 'vector' extra (numba)")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import BaseVectorEnv, DummyVectorEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402

from cribenv.game import seat_side  # noqa: E402
from cribenv.integrations.tianshou_batched import BatchedTianshouVectorEnv, MaskInObs  # noqa: E402
from cribenv.vector import VectorIllegalActionError  # noqa: E402
from cribenv.wrappers import SingleAgentCribbageEnv  # noqa: E402

torch.set_num_threads(1)


def random_policy():
    """Tianshou's masked random player (reads ``batch.obs.mask``)."""
    return MARLRandomDiscreteMaskedOffPolicyAlgorithm(spaces.Discrete(52)).policy


def dqn(eps: float = 0.0) -> DQN:
    net = Net(state_shape=601, action_shape=52, hidden_sizes=[64])
    policy = DiscreteQLearningPolicy(model=net, action_space=spaces.Discrete(52),
                                     eps_training=eps, eps_inference=eps)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99,
               n_step_return_horizon=1, target_update_freq=50)


def all_rows(buffer: VectorReplayBuffer):
    return buffer[buffer.sample_indices(0)]


# ---------------------------------------------------------------- the vector env's interface
def test_it_is_a_tianshou_vector_env():
    envs = BatchedTianshouVectorEnv(num_envs=3, target=61, seed=0)
    assert isinstance(envs, BaseVectorEnv) and len(envs) == envs.env_num == 3
    assert envs.action_space == [spaces.Discrete(52)] * 3
    assert envs.observation_space[0]["obs"].shape == (601,) and not envs.is_async
    obs, info = envs.reset()
    assert obs.obs.dtype == np.float32 and obs.mask.dtype == bool and info.dtype == object
    assert info.tolist() == [{}, {}, {}]             # by default: nothing the collector reads
    envs.close()
    with pytest.raises(AssertionError, match="after close"):
        envs.reset()
    envs = BatchedTianshouVectorEnv(num_envs=3, target=61, seed=0, info="env_id")
    obs, info = envs.reset()
    assert [i["env_id"] for i in info] == [0, 1, 2]
    assert [i["env_id"] for i in envs.step(obs.mask.argmax(axis=1))[-1]] == [0, 1, 2]
    with pytest.raises(ValueError, match="info must be"):
        BatchedTianshouVectorEnv(num_envs=3, info="all")


def test_seeded_resets_repeat_and_partial_calls_touch_only_their_games():
    a = BatchedTianshouVectorEnv(num_envs=4, target=61, info="env_id")
    b = BatchedTianshouVectorEnv(num_envs=4, target=61, seed=7)
    a.seed(7)
    (oa, _), (ob, _) = a.reset(), b.reset()
    assert np.array_equal(oa.obs, ob.obs) and np.array_equal(oa.mask, ob.mask)
    cards = oa.mask.argmax(axis=1)
    obs, rew, term, trunc, info = a.step(cards[[2]], id=[2])
    assert obs.obs.shape == (1, 601) and info[0]["env_id"] == 2 and not trunc.any()
    now = a.game.observe(seats=a.venv.learner_seat)  # the games not named are as they were
    assert np.array_equal(now[[0, 1, 3]], oa.obs[[0, 1, 3]])
    obs, _ = a.reset(env_id=[1])
    assert obs.obs.shape == (1, 601) and obs.mask.any()
    with pytest.raises(ValueError, match="share one generator"):
        a.reset(env_id=[1], seed=3)
    with pytest.raises(ValueError, match="distinct"):
        a.step(np.array([0, 0]), id=[1, 1])


def test_a_finished_game_waits_for_its_reset():
    envs = BatchedTianshouVectorEnv(num_envs=2, target=61, reward="points", seed=3,
                                    info="game")
    obs, _ = envs.reset()
    rng = np.random.default_rng(0)
    done = np.zeros(2, bool)
    while not done[0]:
        act = np.array([rng.choice(np.flatnonzero(m)) for m in obs.mask])
        obs, rew, term, _, info = envs.step(act)
        done |= term
    final_obs, final_info = obs.obs[0].copy(), info[0]
    assert final_info["winner"] >= 0 and obs.mask[0].all()   # no decision: every card marked
    for _ in range(3):      # stepped again without a reset: unchanged, reward 0, terminated
        obs, rew, term, _, info = envs.step(np.array([0]), id=[0])
        assert term[0] and rew[0] == 0 and np.array_equal(obs.obs[0], final_obs)
        assert np.array_equal(info[0]["scores"], final_info["scores"])
    obs, info = envs.reset(env_id=0)
    assert info[0]["winner"] == -1 and not envs.game.done[0]


def test_illegal_cards_raise_or_forfeit_the_game():
    envs = BatchedTianshouVectorEnv(num_envs=2, target=61, seed=0)
    obs, _ = envs.reset()
    bad = np.array([np.flatnonzero(~m)[0] for m in obs.mask])
    with pytest.raises(VectorIllegalActionError, match="cannot lay"):
        envs.step(bad)
    envs = BatchedTianshouVectorEnv(num_envs=2, target=61, seed=0, illegal_action="penalty",
                                    illegal_reward=-5.0)
    obs, _ = envs.reset()
    act = np.array([np.flatnonzero(~obs.mask[0])[0], np.flatnonzero(obs.mask[1])[0]])
    obs, rew, term, _, info = envs.step(act)
    assert term.tolist() == [True, False] and rew[0] == -5.0
    assert [i["illegal_action"] for i in info] == [True, False] and obs.mask[0].all()
    obs, info = envs.reset(env_id=[0])
    assert not info[0]["illegal_action"] and not obs.mask[0].all()


# ---------------------------------------------------------------- through Tianshou's Collector
@pytest.mark.parametrize("make_policy", [random_policy, lambda: dqn(eps=0.5).policy],
                         ids=["masked-random", "dqn-eps-greedy"])
def test_a_collector_lays_legal_cards_only(make_policy):
    envs = BatchedTianshouVectorEnv(num_envs=8, target=61, seed=1)
    buffer = VectorReplayBuffer(2_000, len(envs))
    collector = Collector(make_policy(), envs, buffer, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_step=400)
    assert stats.n_collected_steps == 400 and stats.n_collected_episodes >= 1
    rows = all_rows(buffer)
    live = ~rows.done                         # the last row's obs is a live decision too
    assert len(rows) == 400 and rows.obs.mask.any(axis=1).all()
    assert rows.obs.mask[np.arange(len(rows)), rows.act.astype(int)].all()
    assert rows.obs_next.mask[live].any(axis=1).all()


def game_result(info: dict, num_players: int, reward: str) -> float:
    """The learner's result of a finished game, from its last row's info."""
    side = seat_side(info["learner_seat"], num_players)
    scores = np.asarray(info["scores"])
    if reward == "win":
        return 1.0 if info["winner"] == side else -1.0 / (len(scores) - 1)
    others = np.delete(scores, side)
    return float(scores[side] - others.mean())


@pytest.mark.parametrize("num_players, reward", [(2, "points"), (2, "win"), (3, "points"),
                                                 (4, "win")])
def test_the_collectors_episode_returns_are_the_games_results(num_players, reward):
    envs = BatchedTianshouVectorEnv(num_envs=8, num_players=num_players, target=61,
                                    reward=reward, seed=num_players, info="game")
    finished = []      # the hook runs once for each return the collector reports, in order

    def record(episode):
        finished.append(episode.info[-1])    # the game's last row
        assert (episode.info.env_id == episode.info.env_id[0]).all() and episode.done[-1]
        assert not episode.done[:-1].any()

    collector = Collector(random_policy(), envs, VectorReplayBuffer(8_000, len(envs)),
                          on_episode_done_hook=record)
    stats = collector.collect(n_episode=24, reset_before_collect=True)
    assert len(stats.returns) == len(finished) == 24
    want = [game_result(i, num_players, reward) for i in finished]
    assert stats.returns == pytest.approx(want)
    if reward == "points":
        assert len(set(stats.returns)) > 3      # real score differences, not a constant


@pytest.mark.slow   # ~30 s on a busy machine, most of it numba compiling Tianshou's returns
def test_a_short_dqn_run_trains():
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.manual_seed(0)
    np.random.seed(0)
    algorithm = dqn(eps=0.1)
    envs = BatchedTianshouVectorEnv(num_envs=32, target=61, reward="win", seed=0)
    buffer = VectorReplayBuffer(5_000, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    before = [p.detach().clone() for p in algorithm.policy.model.parameters()]
    losses = []
    for _ in range(3):
        collector.collect(n_step=128)
        with policy_within_training_step(algorithm.policy):
            for _ in range(4):
                stats = algorithm.update(buffer, sample_size=64)
        losses.append(stats.loss)
    assert len(buffer) == 384 and np.isfinite(losses).all()
    after = list(algorithm.policy.model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
    algorithm.eval()
    evaluation = Collector(algorithm, BatchedTianshouVectorEnv(num_envs=4, target=61, seed=1))
    result = evaluation.collect(n_episode=8, reset_before_collect=True)
    assert len(result.returns) == 8 and set(np.abs(result.returns)) == {1.0}


def steps_per_second(collector: Collector, n_step: int) -> float:
    collector.collect(n_step=collector.env_num * 4)            # warm up
    start = time.perf_counter()
    stats = collector.collect(n_step=n_step)
    return stats.n_collected_steps / (time.perf_counter() - start)


def test_collection_is_faster_than_through_dummy_vector_env():
    """Steps (learner decisions) a second of Tianshou's Collector with a masked random policy:
    the batched env (its default infos, and ``env_id`` in each as DummyVectorEnv's have)
    against DummyVectorEnv of 64 per-env single-agent envs, in the same run."""
    policy = random_policy()
    speed = {}
    for info in ("none", "env_id"):
        envs = BatchedTianshouVectorEnv(num_envs=256, target=61, seed=0, info=info)
        collector = Collector(policy, envs, VectorReplayBuffer(20_000, 256))
        collector.reset()
        speed[info] = steps_per_second(collector, 256 * 16)
    per_env = Collector(policy, DummyVectorEnv(
        [lambda: MaskInObs(SingleAgentCribbageEnv(target=61)) for _ in range(64)]),
        VectorReplayBuffer(8_000, 64))
    per_env.reset()
    slow = steps_per_second(per_env, 64 * 16)
    print(f"\nTianshou Collector, masked random policy, steps/s: BatchedTianshouVectorEnv"
          f"(256) {speed['none']:,.0f} ({speed['none'] / slow:.1f}x), with info='env_id' "
          f"{speed['env_id']:,.0f} ({speed['env_id'] / slow:.1f}x); DummyVectorEnv of 64 "
          f"SingleAgentCribbageEnv {slow:,.0f}")
    assert speed["none"] > slow and speed["env_id"] > slow
