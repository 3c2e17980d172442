"""The single-agent Gymnasium env (learner vs opponents), the SB3 vec-env helper, and the
env's fast paths (observation encoding, the one-layer StandardWrapper) against the plain ones."""

from __future__ import annotations

import random
import subprocess
import sys
import time
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.utils import wrappers as pz_wrappers

import cribenv
from cribenv import cards as C
from cribenv.aec import CribbageEnv, StandardWrapper
from cribenv.game import Deal, Discarded, IllegalActionError, Phase
from cribenv.observation import OBS_SIZE, encode, legal_mask
from cribenv.wrappers import GYM_ENV_ID, SingleAgentCribbageEnv, make_vec_env


def first_legal(observation: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def play_episode(env: SingleAgentCribbageEnv, rng: random.Random, seed: int | None = None,
                 options: dict | None = None) -> tuple[float, list[float], dict]:
    """Random legal learner play; returns (return, rewards, final info)."""
    obs, info = env.reset(seed=seed, options=options)
    rewards = []
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        obs, reward, term, trunc, info = env.step(int(legal[rng.randrange(len(legal))]))
        assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
        assert isinstance(reward, float) and trunc is False
        rewards.append(reward)
        done = term
    return sum(rewards), rewards, info


# --------------------------------------------------------------------------------- Gymnasium API

@pytest.mark.parametrize("kwargs", [{}, {"num_players": 3, "reward": "points"},
                                    {"num_players": 4, "learner_seat": 2, "target": 61}])
def test_check_env_passes_without_warnings(kwargs):
    # check_env steps random cards (action_space.sample()), most of them illegal: with the
    # default illegal_action="raise" it would stop at the first one, so it runs in "penalty"
    # mode. Registered through gymnasium.make so that it has a spec (check_env then also checks
    # every render mode); .unwrapped because check_env wants the env without wrappers.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gymnasium.make(GYM_ENV_ID, illegal_action="penalty", **kwargs).unwrapped
        check_env(env)
    assert isinstance(env, SingleAgentCribbageEnv)
    assert env.observation_space == gymnasium.spaces.Box(0.0, 2.0, (OBS_SIZE,), np.float32)
    assert env.action_space == gymnasium.spaces.Discrete(52)


def test_illegal_learner_action_raises_a_clear_error_and_changes_nothing():
    env = SingleAgentCribbageEnv(seed=0)
    obs, info = env.reset()
    mask = env.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    before = [list(h) for h in env.game.hands]
    with pytest.raises(IllegalActionError, match=rf"illegal action {C.to_str(illegal)}.*legal"):
        env.step(illegal)
    for bad in (52, -1, "5H", None, float(np.flatnonzero(mask)[0])):
        with pytest.raises(IllegalActionError, match="illegal action"):
            env.step(bad)
    assert [list(h) for h in env.game.hands] == before
    env.step(int(np.flatnonzero(mask)[0]))     # the episode goes on


def test_illegal_action_penalty_mode_ends_the_episode():
    env = SingleAgentCribbageEnv(seed=0, illegal_action="penalty", illegal_reward=-3)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, term, trunc, info = env.step(illegal)
    assert (reward, term, trunc, info["illegal_action"]) == (-3.0, True, False, illegal)
    assert not env.action_masks().any() and info["action_mask"].all()   # END_MASK in the info
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_step_before_reset_and_after_the_end_raise():
    env = SingleAgentCribbageEnv(target=61, seed=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    play_episode(env, random.Random(1))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentCribbageEnv(learner_seat=2)
    with pytest.raises(ValueError, match="2 opponent"):
        SingleAgentCribbageEnv(opponent=["random"], num_players=3)
    with pytest.raises(TypeError, match="opponent"):
        SingleAgentCribbageEnv(opponent=42)
    with pytest.raises(ValueError, match="illegal_action"):
        SingleAgentCribbageEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="reward"):
        SingleAgentCribbageEnv(reward="score")


# --------------------------------------------------------------------------------- rewards

@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_points_return_is_the_final_score_difference(num_players):
    """Everything scored on the opponents' turns (pegging, heels, their show) reaches the
    learner's rewards: the episode return is exactly its final point differential."""
    env = SingleAgentCribbageEnv(reward="points", num_players=num_players, target=61, seed=7)
    rng = random.Random(7)
    for _ in range(4):
        total, rewards, info = play_episode(env, rng)
        game = env.game
        side = game.side_of(env.learner_seat)
        own = game.scores[side]
        others = [s for i, s in enumerate(game.scores) if i != side]
        assert total == pytest.approx(own - sum(others) / len(others))
        assert info["scores"] == tuple(game.scores)
        assert any(r < 0 for r in rewards)   # points the opponents made on their turns


def test_opponent_heels_reach_the_learners_next_reward():
    """The learner (pone) makes its second discard; the dealer (opponent) then discards and
    turns a Jack: its 2 for his heels are in the reward of the learner's discard."""
    deal = Deal(dealer=0, hands=["5S 4S 2S 8D 6H 8C".split(), "TS 6D 9H 4H KC 7C".split()],
                starter="JH")
    env = SingleAgentCribbageEnv(opponent=first_legal, reward="points", learner_seat=1)
    env.reset(seed=0, options={"deals": [deal]})
    _, r1, *_ = env.step(C.parse("TS"))
    _, r2, term, _, _ = env.step(C.parse("KC"))
    assert (r1, r2, term) == (0.0, -2.0, False)
    assert env.game.phase is Phase.PLAY and env.game.scores == [2, 0]


@pytest.mark.parametrize("skunks", [False, True])
def test_win_reward_is_the_result_only(skunks):
    env = SingleAgentCribbageEnv(reward="win", skunks=skunks, target=61, seed=3)
    rng = random.Random(3)
    for _ in range(3):
        total, rewards, info = play_episode(env, rng)
        won = info["winner"] == env.game.side_of(env.learner_seat)
        scale = info["game_points"] if skunks else 1
        assert rewards[-1] == total == (scale if won else -scale)
        assert all(r == 0 for r in rewards[:-1])


def test_shaping_adds_the_point_differential():
    env = SingleAgentCribbageEnv(reward="win", shaping=0.01, target=61, seed=4)
    total, _, info = play_episode(env, random.Random(4))
    game = env.game
    s = env.learner_seat
    won = 1.0 if info["winner"] == s else -1.0
    assert total == pytest.approx(won + 0.01 * (game.scores[s] - game.scores[1 - s]))


# --------------------------------------------------------------------------------- seats, seeds

def test_random_seat_each_episode_and_fixed_seat():
    env = SingleAgentCribbageEnv(num_players=3, seed=0)
    seats = {env.reset()[1]["learner_seat"] for _ in range(40)}
    assert seats == {0, 1, 2}
    env = SingleAgentCribbageEnv(num_players=3, learner_seat=2, seed=0)
    for _ in range(10):
        _, info = env.reset()
        assert info["learner_seat"] == env.learner_seat == 2 and env.learner == "player_2"
        assert env.aec.agent_selection == "player_2"
    _, info = env.reset(options={"learner_seat": 1})   # one episode only
    assert info["learner_seat"] == 1
    assert env.reset()[1]["learner_seat"] == 2


def test_reset_seed_fixes_the_episode():
    def trajectory(env, seed):
        rng = random.Random(0)
        obs, _ = env.reset(seed=seed)
        out = [obs.copy()]
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            obs, r, done, _, _ = env.step(int(legal[rng.randrange(len(legal))]))
            out.append(obs.copy())
        return out, env.learner_seat, list(env.game.scores)

    env = SingleAgentCribbageEnv(opponent="random", target=61)
    a = trajectory(env, 11)
    b = trajectory(env, 11)
    c = trajectory(SingleAgentCribbageEnv(opponent="random", target=61), 11)
    assert a[1:] == b[1:] == c[1:]
    assert all(np.array_equal(x, y) for x, y in zip(a[0], c[0])) and len(a[0]) == len(c[0])
    d = trajectory(env, 12)
    assert (d[1], d[2]) != (a[1], a[2]) or len(d[0]) != len(a[0])
    # the constructor's seed seeds the first reset
    e1, e2 = SingleAgentCribbageEnv(seed=5), SingleAgentCribbageEnv(seed=5)
    assert np.array_equal(e1.reset()[0], e2.reset()[0])


def test_reset_options_pass_deals_and_first_dealer():
    deal = Deal(dealer=None, hands=["5S 4S 2S 8D 6H 8C".split(), "TS 6D 9H 4H KC 7C".split()],
                starter="JH")
    env = SingleAgentCribbageEnv(learner_seat=0)
    env.reset(seed=0, options={"deals": [deal], "first_dealer": 1})
    assert env.game.dealer == 1
    assert sorted(env.game.hands[0]) == sorted(C.parse_many("5S 4S 2S 8D 6H 8C"))


# --------------------------------------------------------------------------------- masks

@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_action_masks_match_the_legal_cards(num_players):
    env = SingleAgentCribbageEnv(num_players=num_players, target=61, seed=num_players)
    rng = random.Random(0)
    for _ in range(2):
        obs, info = env.reset()
        done = False
        while not done:
            game = env.game
            assert game.current_player == env.learner_seat
            masks = env.action_masks()
            assert masks.dtype == bool and masks.shape == (52,)
            assert list(np.flatnonzero(masks)) == game.legal_actions()
            assert info["action_mask"].dtype == np.int8
            assert np.array_equal(info["action_mask"].astype(bool), masks)
            np.testing.assert_array_equal(obs, encode(game.view(env.learner_seat)))
            legal = np.flatnonzero(masks)
            obs, _, done, _, info = env.step(int(legal[rng.randrange(len(legal))]))
        # over: no legal card; the last info's mask is END_MASK (every card, for samplers)
        assert not env.action_masks().any() and info["action_mask"].all()


# --------------------------------------------------------------------------------- opponents

def test_opponent_forms_and_lazy_spec():
    from agents import RandomAgent

    calls = []

    def greedy_low(observation):
        calls.append(1)
        return first_legal(observation)

    for opponent in ("random", RandomAgent(seed=0), greedy_low, ["random"], [greedy_low]):
        env = SingleAgentCribbageEnv(opponent=opponent, target=61, seed=0)
        play_episode(env, random.Random(0))
    assert calls
    env = SingleAgentCribbageEnv(opponent="random")
    assert env.opponents == ["random"]          # a spec is resolved at the first reset
    env.reset(seed=0)
    assert isinstance(env.opponents[0], RandomAgent)
    env = SingleAgentCribbageEnv(opponent=["random", greedy_low, RandomAgent(seed=1)],
                                 num_players=4, learner_seat=0, target=61)
    play_episode(env, random.Random(0), seed=0)
    assert [type(o).__name__ for o in env.opponents] == ["RandomAgent", "function",
                                                         "RandomAgent"]


def test_unknown_spec_fails_at_reset_with_make_agents_message():
    env = SingleAgentCribbageEnv(opponent="no-such-bot")
    with pytest.raises(ValueError, match="unknown agent"):
        env.reset(seed=0)


def test_spec_strings_build_what_agents_make_agent_builds():
    """A spec goes through cribenv.opponents to the installed maker (agents.make_agent): the
    same class, seeded as make_agent would seed it, so the games are the same as before."""
    from agents import make_agent

    env = SingleAgentCribbageEnv(opponent=["greedy", "expert"], num_players=3, seed=5)
    env.reset()
    assert [type(o).__name__ for o in env.opponents] == ["GreedyAgent", "ExpertAgent"]
    rng = np.random.default_rng(5)
    rng.integers(3), rng.integers(2**63 - 1)          # the learner's seat, the game seed
    seeds = [int(rng.integers(2**31)) for _ in range(2)]
    for bot, spec, seed in zip(env.opponents, ["greedy", "expert"], seeds):
        twin = make_agent(spec, seed=seed)
        assert bot.rng.integers(1 << 30) == twin.rng.integers(1 << 30)


@pytest.fixture
def fake_makers(tmp_path, monkeypatch):
    """Installed makers, as if declared by packages in the 'cribenv.opponents' group."""
    from importlib import metadata

    from cribenv import opponents

    (tmp_path / "fake_bots.py").write_text(
        "def make_first(spec, seed=None):\n"
        "    if spec != 'first':\n"
        "        raise ValueError(f'fake_bots: unknown {spec!r}')\n"
        "    return lambda obs: int(obs['action_mask'].argmax())\n"
        "def make_last(spec, seed=None):\n"
        "    if not spec.startswith('last'):\n"
        "        raise ValueError(f'fake_bots: unknown {spec!r}')\n"
        "    return lambda obs: int(52 - 1 - obs['action_mask'][::-1].argmax())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    declared: list = []
    monkeypatch.setattr(opponents.metadata, "entry_points",
                        lambda group: [ep for ep in declared if ep.group == group])
    opponents._entry_point_makers.cache_clear()
    yield lambda name, value: declared.append(
        metadata.EntryPoint(name, value, opponents.ENTRY_POINT_GROUP))
    opponents._entry_point_makers.cache_clear()
    sys.modules.pop("fake_bots", None)


def test_opponents_come_from_installed_makers_loaded_at_first_use(fake_makers):
    from cribenv import opponents

    with pytest.raises(ValueError, match="pip install -e ."):
        opponents.make("greedy")                     # nothing installed, nothing registered
    opponents._entry_point_makers.cache_clear()
    fake_makers("b_last", "fake_bots:make_last")
    fake_makers("a_first", "fake_bots:make_first")
    env = SingleAgentCribbageEnv(opponent="last:x", learner_seat=0, seed=0)
    assert "fake_bots" not in sys.modules            # loaded at the first reset, not before
    env.reset()
    assert "fake_bots" in sys.modules and sorted(opponents.makers()) == ["a_first", "b_last"]
    game = env.game
    while game.phase is Phase.DISCARD:
        env.step(int(env.action_masks().argmax()))
    thrown = [e.card for e in game.events if isinstance(e, Discarded) and e.seat == 1]
    assert len(thrown) == 2                          # the opponent laid its highest cards
    assert min(thrown) > max(game.view(1).hand)
    assert callable(opponents.make("first"))         # a_first knows it (asked first)
    with pytest.raises(ValueError, match="a_first: fake_bots: unknown 'zz'; b_last: "):
        opponents.make("zz")


def test_a_registered_kind_wins_over_installed_makers(fake_makers):
    from cribenv import opponents

    fake_makers("a_first", "fake_bots:make_first")
    made = []
    opponents.register("first", lambda spec, seed=None: made.append((spec, seed)) or first_legal)
    try:
        env = SingleAgentCribbageEnv(opponent="first:arg", seed=0)
        env.reset()
        assert made and made[0][0] == "first:arg" and isinstance(made[0][1], int)
        assert "fake_bots" not in sys.modules
    finally:
        opponents.unregister("first")
    with pytest.raises(ValueError, match="without ':'"):
        opponents.register("a:b", first_legal)
    with pytest.raises(TypeError, match="callable"):
        opponents.register("x", 42)


def test_agent_reset_is_called_before_each_game():
    class Counting:
        name = "counting"

        def __init__(self):
            self.resets = 0

        def reset(self):
            self.resets += 1

        def act(self, observation):
            return first_legal(observation)

    bot = Counting()
    env = SingleAgentCribbageEnv(opponent=bot)
    env.reset(seed=0)
    env.reset()
    assert bot.resets == 2


def test_set_opponent_applies_from_the_next_episode():
    seen = {"a": 0, "b": 0}

    def make(tag):
        def act(observation):
            seen[tag] += 1
            return first_legal(observation)
        return act

    env = SingleAgentCribbageEnv(opponent=make("a"), target=61, learner_seat=1, seed=0)
    env.reset()
    env.set_opponent(make("b"))
    done = False
    while not done:                     # the episode in progress keeps its opponent
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    a_moves = seen["a"]
    assert a_moves > 0 and seen["b"] == 0
    env.reset()
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert seen["b"] > 0 and seen["a"] == a_moves


def test_illegal_opponent_card_is_reported():
    def cheat(observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    env = SingleAgentCribbageEnv(opponent=cheat, learner_seat=0)
    with pytest.raises(IllegalActionError, match=r"opponent 'cheat' \(player_1\) chose an "
                                                 r"illegal card: seat 1 cannot lay"):
        env.reset(seed=0, options={"first_dealer": 0})   # player_1 is pone: it discards first


def test_importing_cribenv_wrappers_imports_neither_agents_nor_torch():
    code = ("import sys, cribenv, cribenv.wrappers, cribenv.aec; "
            "bad = [m for m in ('agents', 'torch', 'stable_baselines3') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------------- SB3

def test_make_vec_env_dummy():
    pytest.importorskip("stable_baselines3")
    venv = make_vec_env(3, "random", seed=0, reward="points", target=61)
    obs = venv.reset()
    assert obs.shape == (3, OBS_SIZE) and obs.dtype == np.float32
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (3, 52) and masks.dtype == bool and masks.any(axis=1).all()
    venv.env_method("set_opponent", "random")
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = venv.step(actions)
        finished += int(dones.sum())
        for done, info in zip(dones, infos):
            if done:
                assert "terminal_observation" in info and "episode" in info  # Monitor
    assert finished > 0
    venv.close()
    # a factory gives each env its own opponent
    venv = make_vec_env(2, lambda rank: "random" if rank == 0 else first_legal, seed=1)
    assert [type(o).__name__ for o in venv.get_attr("opponents")[1]] == ["function"]
    venv.close()


def test_make_vec_env_subproc():
    pytest.importorskip("stable_baselines3")
    venv = make_vec_env(2, "random", seed=0, vec="subproc", target=61)
    try:
        obs = venv.reset()
        assert obs.shape == (2, OBS_SIZE)
        masks = np.stack(venv.env_method("action_masks"))
        obs, rewards, dones, infos = venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        assert obs.shape == (2, OBS_SIZE)
    finally:
        venv.close()
    with pytest.raises(ValueError, match="vec"):
        make_vec_env(2, vec="ray")


def test_maskable_ppo_smoke():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    venv = make_vec_env(2, "random", seed=0, reward="points", target=61)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", venv, n_steps=128, batch_size=128, n_epochs=1, seed=0, device="cpu",
        policy_kwargs={"net_arch": [32]}, verbose=0)
    model.learn(total_timesteps=2048)
    env = SingleAgentCribbageEnv(reward="points", target=61, seed=1)
    for _ in range(2):
        obs, _ = env.reset()
        done = False
        while not done:
            masks = env.action_masks()
            action, _ = model.predict(obs, action_masks=masks, deterministic=True)
            assert masks[int(action)], "MaskablePPO chose an illegal card"
            obs, _, done, _, _ = env.step(int(action))
    venv.close()
    assert time.perf_counter() - start < 30


# --------------------------------------------------------------------------------- fast paths

@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("target", [121, 61])
def test_env_observation_is_encode_of_the_view(num_players, target):
    """The env encodes from the game state directly: it must equal encode(view) exactly."""
    env = CribbageEnv(num_players=num_players, target=target)
    rng = random.Random(num_players)
    for seed in range(2):
        env.reset(seed=seed)
        while True:
            game = env.game
            for seat, agent in enumerate(env.possible_agents):
                obs = env.observe(agent)
                view = game.view(seat)
                np.testing.assert_array_equal(obs["observation"], encode(view))
                np.testing.assert_array_equal(obs["action_mask"], legal_mask(view))
                assert obs["action_mask"].dtype == np.int8
            if game.current_player is None:
                break
            legal = game.legal_actions()
            env.step(legal[rng.randrange(len(legal))])
    out = np.full(OBS_SIZE, 7.0, np.float32)
    view = env.game.view(0)
    assert encode(view, out) is out and np.array_equal(out, encode(view))


def test_observations_are_fresh_arrays_each_step():
    env = cribenv.env()
    env.reset(seed=0)
    first = env.observe(env.agent_selection)
    env.step(first_legal(first))
    second = env.observe(env.agent_selection)
    assert not np.shares_memory(first["observation"], second["observation"])
    assert not np.shares_memory(first["action_mask"], second["action_mask"])


def test_wrapped_env_keeps_pettingzoos_wrapper_behaviour():
    """``cribenv.env()`` is one public ``BaseWrapper`` (``StandardWrapper``) with the
    behaviour of PettingZoo's three standard wrappers (tests/test_aec_wrappers.py compares the
    two in full)."""
    env = cribenv.env()
    assert isinstance(env, StandardWrapper) and isinstance(env, pz_wrappers.BaseWrapper)
    assert isinstance(env.env, CribbageEnv)
    assert str(env) == "cribbage_v0"
    for name in ("agents", "agent_selection", "rewards", "terminations", "infos", "num_agents"):
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            getattr(env, name)
    with pytest.raises(AttributeError, match="private attribute"):
        env._skip_agent_selection  # noqa: B018
    env.reset(seed=0)
    raw = env.unwrapped
    assert env.agents is raw.agents and env.terminations is raw.terminations
    assert env.env.agent_selection == raw.agent_selection == env.agent_selection
    assert env._cumulative_rewards is raw._cumulative_rewards
    assert env.num_agents == 2
    with pytest.raises(AssertionError, match="action space"):
        env.step(52)
    assert env.action_space("player_0").contains(51)
    assert not env.action_space("player_0").contains(52)
    assert env.action_space("player_0").contains(np.int64(3))
    assert not env.action_space("player_0").contains(3.0)


def test_engine_inline_shuffle_is_random_shuffle():
    """The engine's inlined shuffle (a speed-up) draws exactly as random.Random.shuffle, so
    every seed still deals the same cards (belongs with tests/test_game.py)."""
    from cribenv.game import _shuffle

    for seed in range(300):
        a, b = random.Random(seed), random.Random(seed)
        for n in (52, 51, 13, 2, 1, 0):
            x, y = list(range(n)), list(range(n))
            a.shuffle(x)
            _shuffle(b, y)
            assert x == y
        assert a.getstate() == b.getstate()


def _stock_stack(**kwargs):
    """What ``cribenv.env()`` stands for: PettingZoo's own wrapper classes around the raw env
    (tests/test_aec_wrappers.py holds the longer comparison)."""
    e = pz_wrappers.TerminateIllegalWrapper(CribbageEnv(**kwargs), illegal_reward=-1.0)
    return pz_wrappers.OrderEnforcingWrapper(pz_wrappers.AssertOutOfBoundsWrapper(e))


@pytest.mark.parametrize("obs_type", ["dict", "flat"])
def test_wrapper_fast_paths_equal_pettingzoos_wrappers(obs_type, caplog):
    """``cribenv.env()``'s one layer does the work of PettingZoo's three: step for step (legal
    and illegal cards, numpy ints, the final None steps, a step after the end) it returns and
    logs what PettingZoo's own wrapper stack does."""
    rng = random.Random(0)
    fast, stock = cribenv.env(obs_type=obs_type), _stock_stack(obs_type=obs_type)

    def same(a, b) -> None:
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            for k in a:
                same(a[k], b[k])
        elif isinstance(a, tuple):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                same(x, y)
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b

    illegal_seen = 0
    for episode in range(12):
        for env in (fast, stock):
            env.reset(seed=episode)
        for agent, other in zip(fast.agent_iter(), stock.agent_iter()):
            assert agent == other
            last = fast.last()
            same(last, stock.last())
            obs, _, term, trunc, info = last
            mask = obs["action_mask"] if obs_type == "dict" else info["action_mask"]
            if term or trunc:
                action = None
            elif rng.random() < 0.01:   # an illegal card: the episode ends with the penalty
                action = int(rng.choice(np.flatnonzero(mask == 0)))
                illegal_seen += 1
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
                action = np.int64(action) if rng.random() < 0.2 else action
            caplog.clear()
            fast.step(action)
            fast_log = caplog.messages
            caplog.clear()
            stock.step(action)
            assert fast_log == caplog.messages
            same(fast.rewards, stock.rewards)
            same(fast._cumulative_rewards, stock._cumulative_rewards)
            same(fast.terminations, stock.terminations)
        caplog.clear()
        fast.step(None)                  # after the end: PettingZoo's warning, both times
        fast_log = caplog.messages
        caplog.clear()
        stock.step(None)
        assert fast_log == caplog.messages and "terminated" in fast_log[0]
    assert illegal_seen >= 2
    with pytest.raises(AssertionError, match="need to call step"):
        fast.reset(seed=0)
        it = iter(fast.agent_iter())
        next(it)
        next(it)
