"""RLlib's single-agent env runner on the batched engine (``cribenv/SingleAgentCribbage-v0`` with
``gym_env_vectorize_mode="vector_entry_point"``): the next-step adapter on its own, then short
PPO runs in a local Ray instance (no env runner actors) checking that every card laid is legal
and every episode's return is its game's result; and ``PettingZooEnv(cribenv.env())`` with the
masking module."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray", reason="the 'rllib' extra (ray) is not installed")
pytest.importorskip("torch", reason="the 'train' extra (torch) is not installed")
pytest.importorskip("numba", reason="the 'vector' extra (numba) is not installed")

import gymnasium as gym  # noqa: E402

import cribenv  # noqa: E402
from cribenv.integrations import rllib  # noqa: E402
from cribenv.observation import OBS_SIZE  # noqa: E402
from cribenv.vector_env import make_vector_env  # noqa: E402


def random_legal(rng, mask):
    return np.array([rng.choice(np.flatnonzero(m)) for m in mask])


def test_the_adapter_resets_on_the_next_step_and_each_game_adds_up_to_its_result():
    env = rllib.NextStepCribbageVectorEnv(make_vector_env(6, reward="points", target=61))
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(1)
    returns, over, games = np.zeros(6), np.zeros(6, bool), 0
    while games < 12:
        obs, reward, terminated, truncated, info = env.step(random_legal(rng, obs["action_mask"]))
        assert env.observation_space.contains(obs) and not truncated.any()
        # the rows whose game ended last step: a new game, no reward, its first decision
        # (the discard: six cards in hand), the learner's seat of the new game
        assert not reward[over].any() and not terminated[over].any()
        assert (obs["action_mask"][over].sum(axis=1) == 6).all()
        returns += reward
        for i in np.flatnonzero(terminated):
            seat = info["learner_seat"][i]
            scores = info["scores"][i]
            assert returns[i] == scores[seat] - scores[1 - seat]
            assert info["won"][i] == (info["winner"][i] == seat) and max(scores) >= 61
            assert (obs["action_mask"][i] == 1).all()   # no decision pending: any card
            games += 1
        assert "scores" in info or not terminated.any()
        returns[terminated], over = 0.0, terminated
    env.close()


def test_the_adapter_refuses_illegal_cards_and_the_penalty_setting():
    env = rllib.NextStepCribbageVectorEnv(make_vector_env(2, seed=0))
    obs, _ = env.reset()
    acts = np.array([np.flatnonzero(obs["action_mask"][0] == 0)[0], 0])
    with pytest.raises(ValueError, match="game 0: seat .* cannot lay"):
        env.step(acts)
    with pytest.raises(ValueError, match="illegal_action must be 'raise'"):
        rllib.NextStepCribbageVectorEnv(make_vector_env(2, illegal_action="penalty"))


def test_the_creator_gives_the_batched_or_the_single_env_both_with_masks_in_the_observation():
    batched = rllib.single_agent_env_creator({"num_envs": 3, "opponent": "greedy", "seed": 0})
    assert isinstance(batched, rllib.NextStepCribbageVectorEnv) and batched.num_envs == 3
    obs, _ = batched.reset()
    assert obs["observations"].shape == (3, OBS_SIZE) and obs["action_mask"].shape == (3, 52)
    batched.close()
    single = rllib.single_agent_env_creator({"target": 61, "episode": "hand"})
    assert isinstance(single, rllib.MaskInObservation)
    obs, info = single.reset(seed=0)
    assert single.observation_space.contains(obs) and "action_mask" not in info
    assert obs["action_mask"].sum() == 6


def test_the_module_refuses_observations_without_the_mask_naming_what_to_use():
    space = gym.spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32)   # Gymnasium's id, bare
    with pytest.raises(ValueError, match="SingleAgentEnvCreator"):
        rllib.MaskedActorCritic(observation_space=space, action_space=gym.spaces.Discrete(52),
                                model_config={"hidden": [8]})
    # the AEC env's dict (cribenv.env(), as RLlib's PettingZooEnv passes it on) is read
    aec = cribenv.env()
    module = rllib.MaskedActorCritic(observation_space=aec.observation_space("player_0"),
                                     action_space=gym.spaces.Discrete(52),
                                     model_config={"hidden": [8]})
    assert module.obs_key == "observation"


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    rllib.register_envs()   # Tune's registry is per Ray session
    try:
        yield
    finally:
        ray.shutdown()


def episode_checks():
    """Callbacks run in this process (``num_env_runners=0``; plain functions, which RLlib's
    config copies share, unlike bound methods), and what they saw: the cards laid that were
    illegal in the observation they answered, and each finished episode's rewards (summed over
    the chunks RLlib cuts it into) with its game's result; and the episodes whose first
    observation was not a game's first decision (the discard: six cards, all legal)."""
    seen = {"illegal": 0, "results": [], "returns": {}, "bad_starts": 0}

    def on_start(*, episode, **kwargs):
        seen["bad_starts"] += int(episode.get_observations(-1)["action_mask"].sum() != 6)

    def on_step(*, episode, **kwargs):
        mask = episode.get_observations(-2)["action_mask"]
        seen["illegal"] += int(mask[int(episode.get_actions(-1))] <= 0)
        seen["returns"][episode.id_] = seen["returns"].get(episode.id_, 0.0) + float(
            episode.get_rewards(-1))

    def on_end(*, episode, **kwargs):   # both routes' last info: the winner, the learner's seat
        info = episode.get_infos(-1)
        seen["results"].append((seen["returns"].pop(episode.id_),
                                info["winner"] == info["learner_seat"]))

    return seen, dict(on_episode_start=on_start, on_episode_step=on_step,
                      on_episode_end=on_end)


def test_ppo_trains_on_the_batched_engine_by_gymnasiums_id(local_ray):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    seen, callbacks = episode_checks()
    config = (
        PPOConfig()
        .environment("cribenv/SingleAgentCribbage-v0",
                     env_config={"reward": "win", "target": 61, "opponent": "random"})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=16,
                     gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=RLModuleSpec(module_class=rllib.MaskedActorCritic,
                                               model_config={"hidden": [16]}))
        .training(train_batch_size_per_learner=512, minibatch_size=256, num_epochs=1)
        .callbacks(**callbacks)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        assert isinstance(algo.env_runner.env.unwrapped, rllib.NextStepCribbageVectorEnv)
        before = algo.get_module().actor[0].weight.detach().clone()
        for _ in range(2):
            runners = algo.train()["env_runners"]
        assert not np.allclose(algo.get_module().actor[0].weight.detach(), before)   # learnt
    finally:
        algo.stop()
    assert seen["illegal"] == 0 and seen["bad_starts"] == 0
    assert len(seen["results"]) >= 10
    assert all(ret == (1.0 if won else -1.0) for ret, won in seen["results"])
    assert {runners["episode_return_min"], runners["episode_return_max"]} <= {-1.0, 1.0}


def test_pettingzoo_env_of_cribenv_env_trains_with_the_masking_module(local_ray):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    register_env("cribbage_pz", lambda cfg: PettingZooEnv(cribenv.env(reward="win", target=61)))
    finals: list[dict[str, float]] = []

    def on_end(*, episode, **kwargs):   # 'win': a game's rewards are all in its last chunk
        finals.append({aid: e.get_return() for aid, e in episode.agent_episodes.items()})

    spec = RLModuleSpec(module_class=rllib.MaskedActorCritic, model_config={"hidden": [16]})
    config = (
        PPOConfig()
        .environment("cribbage_pz")
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent, *args, **kwargs: "p")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"p": spec}))
        .training(train_batch_size_per_learner=256, minibatch_size=256, num_epochs=1)
        .callbacks(on_episode_end=on_end)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        algo.train()
    finally:
        algo.stop()
    assert finals and all(sorted(f.values()) == [-1.0, 1.0] for f in finals)


@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-single-agent-env-v0")
def test_the_helper_trains_on_the_per_env_route_too(local_ray):
    seen, callbacks = episode_checks()
    config = rllib.single_agent_ppo_config(
        env_config={"reward": "win", "target": 61, "opponent": "greedy"}, vectorize="sync",
        num_envs_per_env_runner=4, hidden=[16], train_batch_size_per_learner=256,
        minibatch_size=256, num_epochs=1).callbacks(**callbacks)
    algo = config.build_algo()
    try:
        assert type(algo.env_runner.env.unwrapped).__name__ == "SyncVectorEnv"
        algo.train()
    finally:
        algo.stop()
    assert seen["illegal"] == 0 and seen["bad_starts"] == 0 and seen["results"]
    assert all(ret == (1.0 if won else -1.0) for ret, won in seen["results"])
