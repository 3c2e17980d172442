"""SB3 on the batched engine: ``MaskablePPO`` and ``PPO`` train on
:class:`cribenv.integrations.sb3.BatchedVecEnv`, every action they take is legal, and the
episode returns SB3's ``VecMonitor`` records are the games' results; ``gymnasium.make_vec``
builds the batched env from the single env's arguments."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

import cribenv  # noqa: E402
from cribenv.integrations.sb3 import BatchedVecEnv  # noqa: E402
from cribenv.vector_env import CribbageVectorEnv, make_vector_env, per_row_opponent  # noqa: E402


class Results(BaseCallback):
    """Each finished game: VecMonitor's return beside the engine's result."""

    def __init__(self) -> None:
        super().__init__()
        self.games: list[tuple[float, list[int], int, bool]] = []

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            if done:
                self.games.append((info["episode"]["r"], info["scores"],
                                   info["learner_seat"], info["won"]))
        return True


@pytest.mark.parametrize("reward", ["points", "win"])
def test_maskable_ppo_trains_and_the_returns_are_the_games_results(reward):
    env = VecMonitor(BatchedVecEnv(num_envs=32, reward=reward, target=61, seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=256, n_epochs=1, seed=0,
                        device="cpu")
    results = Results()
    model.learn(32 * 32 * 4, callback=results)
    env.close()
    assert len(results.games) >= 20
    for ret, scores, seat, won in results.games:
        mine, theirs = scores[seat], scores[1 - seat]
        expected = mine - theirs if reward == "points" else (1.0 if won else -1.0)
        assert ret == pytest.approx(expected, abs=1e-4), (ret, scores, seat)
        assert won == (mine > theirs)


def test_plain_ppo_trains_with_illegal_cards_as_penalties():
    """PPO knows no masks: with illegal_action="penalty" an illegal card ends its game with the
    penalty (and nobody's win); with the default, the first one raises, naming it."""
    env = VecMonitor(BatchedVecEnv(num_envs=8, seed=0, illegal_action="penalty",
                                   illegal_reward=-2.0))
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0, device="cpu")
    results = Results()
    model.learn(512, callback=results)
    env.close()
    assert any(ret == -2.0 and not won for ret, _, _, won in results.games)
    strict = BatchedVecEnv(num_envs=8, seed=0)
    with pytest.raises(ValueError, match=r"cannot lay \w\w \(legal: "):
        PPO("MlpPolicy", strict, n_steps=16, batch_size=64, seed=0, device="cpu").learn(512)
    strict.close()


def test_masks_are_read_through_env_method_and_are_the_legal_cards():
    env = BatchedVecEnv(num_envs=4, seed=1)
    obs = env.reset()
    masks = np.stack(env.env_method("action_masks"))
    assert obs.shape == (4, 601) and masks.shape == (4, 52)
    assert (masks == env.venv.game.legal_mask()).all() and masks.any(axis=1).all()
    assert env.has_attr("action_masks") and not env.has_attr("nonsense")
    env.close()


def test_make_vec_builds_the_batched_env_from_the_single_envs_arguments():
    envs = gymnasium.make_vec(cribenv.GYM_ENV_ID, num_envs=6, opponent="greedy", reward="points",
                              target=61, seed=3, vectorization_mode="vector_entry_point")
    assert isinstance(envs, CribbageVectorEnv) and envs.rules.target == 61
    obs, info = envs.reset()
    again = make_vector_env(6, opponent="greedy", reward="points", target=61, seed=3)
    obs2, info2 = again.reset()
    assert (obs == obs2).all() and (info["action_mask"] == envs.action_masks()).all()
    rng = np.random.default_rng(0)
    for _ in range(30):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in envs.action_masks()])
        a, b = envs.step(acts), again.step(acts)
        assert (a[0] == b[0]).all() and (a[1] == b[1]).all()
    envs.close()
    again.close()


def test_a_per_row_opponent_plays_as_the_bot_does():
    from agents import make_agent

    greedy = make_agent("greedy")
    env = CribbageVectorEnv(num_envs=4, opponent=per_row_opponent(greedy), seed=0)
    env.reset()
    seen = []
    env.opponent = (lambda pick: lambda o, m: seen.append((o, m)) or pick(o, m))(env.opponent)
    env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
    for obs, mask in seen:
        want = [greedy.act({"observation": o, "action_mask": k.astype(np.int8)})
                for o, k in zip(obs, mask)]
        assert per_row_opponent(greedy)(obs, mask).tolist() == want
    env.close()


@pytest.mark.parametrize("kwargs, words", [
    ({"episode": "hand"}, "episode='hand'"),
    ({"illegal_action": "penalize"}, "illegal_action must be 'raise' or 'penalty'"),
    ({"render_mode": "ansi"}, "render_mode='ansi'"),
    ({"opponent": ["random", "greedy"]}, "one opponent for every other seat"),
    ({"opponent": 7}, "an opponent must be"),
])
def test_what_the_batched_env_cannot_do_is_refused_by_name(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        gymnasium.make_vec(cribenv.GYM_ENV_ID, num_envs=2, **kwargs)
