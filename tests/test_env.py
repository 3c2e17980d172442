"""PettingZoo AEC environment: conformance, masks, rewards, no leaks."""

from __future__ import annotations

import random
import warnings
from functools import partial

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import cribenv
from cribenv import cards as C
from cribenv.aec import CribbageEnv
from cribenv.game import Deal, IllegalActionError, Phase

# api_test warns about any dict observation; nothing else may warn.
DICT_OBS_WARNINGS = [
    "ignore:Observation space for each agent probably should be gymnasium.spaces.box",
    "ignore:Observation is not a NumPy array",
]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pettingzoo_conformance(num_players):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for msg in DICT_OBS_WARNINGS:
            warnings.filterwarnings("ignore", msg.split(":", 1)[1])
        api_test(cribenv.env(num_players=num_players), num_cycles=2000)
        seed_test(partial(cribenv.env, num_players=num_players), num_cycles=500)
        render_test(partial(cribenv.env, num_players=num_players, render_mode="ansi"))
        parallel_api_test(turn_based_aec_to_parallel(cribenv.env(num_players=num_players)),
                          num_cycles=1000)


def test_registered_with_pettingzoo():
    env = pettingzoo.make("aec", "cribenv/cribbage-v0", num_players=3)
    assert env.metadata["name"] == "cribbage_v0"
    assert env.metadata["is_parallelizable"] is False
    env.reset(seed=0)
    assert env.num_agents == 3


def random_episode(env, seed: int):
    """Play one episode with random legal actions; return per-agent reward totals."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(rng.choice(legal))
        env.step(action)
    return totals


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("reward", ["win", "points"])
def test_rewards_are_zero_sum_and_never_lost(num_players, reward):
    for seed in range(3):
        env = cribenv.env(num_players=num_players, reward=reward, target=61)
        totals = random_episode(env, seed)
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
        game = env.unwrapped.game
        if reward == "points":
            if num_players in (2, 4):
                for agent, total in totals.items():
                    side = game.side_of(env.unwrapped.agent_name_mapping[agent])
                    diff = game.scores[side] - game.scores[1 - side]
                    assert total == pytest.approx(diff)
            else:
                for agent, total in totals.items():
                    seat = env.unwrapped.agent_name_mapping[agent]
                    others = [s for i, s in enumerate(game.scores) if i != seat]
                    assert total == pytest.approx(game.scores[seat] - sum(others) / 2)
        else:
            for agent, total in totals.items():
                side = game.side_of(env.unwrapped.agent_name_mapping[agent])
                expect = 1.0 if side == game.winner else -1.0 / (game.rules.num_sides - 1)
                assert total == pytest.approx(expect)


def test_skunk_scaling_and_shaping():
    env = cribenv.env(reward="win", skunks=True, target=61)
    totals = random_episode(env, 5)
    gp = env.unwrapped.game.game_points
    assert sorted(totals.values()) == [-gp, gp]
    env = cribenv.env(reward="win", shaping=0.01, target=61)
    totals = random_episode(env, 5)
    game = env.unwrapped.game
    w = game.winner
    assert totals[f"player_{w}"] == pytest.approx(
        1 + 0.01 * (game.scores[w] - game.scores[1 - w]))


def test_reward_for_points_scored_on_another_agents_turn():
    """His heels is scored for the dealer when the pone's last discard turns the starter."""
    deal = Deal(dealer=0, hands=["5S 4S 2S 8D 6H 8C".split(), "TS 6D 9H 4H KC 7C".split()],
                starter="JH")
    env = cribenv.env(reward="points")
    env.reset(seed=0, options={"deals": [deal]})
    order = []
    for card in ["TS", "KC", "8D", "8C"]:
        order.append(env.agent_selection)
        env.step(C.parse(card))
    assert order == ["player_1", "player_1", "player_0", "player_0"]
    # player_1 acts next; player_0's heels reached both agents' cumulative rewards
    assert env.agent_selection == "player_1"
    assert env.unwrapped._cumulative_rewards == {"player_0": 2.0, "player_1": -2.0}


def test_masks_and_observe_any_agent_any_time():
    env = cribenv.env(num_players=3)
    env.reset(seed=3)
    for _ in range(30):
        actor = env.agent_selection
        for agent in env.agents:
            obs = env.observe(agent)
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (52,)
            if agent == actor:
                legal = env.unwrapped.game.legal_actions()
                assert list(np.flatnonzero(mask)) == legal and legal
            else:
                assert not mask.any()
        env.step(int(np.flatnonzero(env.observe(actor)["action_mask"])[0]))


def test_illegal_action_terminates_with_penalty(caplog):
    env = cribenv.env(illegal_reward=-5)
    env.reset(seed=0)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    env.step(illegal)
    assert "Illegal move" in caplog.text
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == -5
    raw = CribbageEnv()
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError, match="not in its hand"):
        raw.step(illegal)


def test_hand_episode_is_one_deal():
    env = cribenv.env(episode="hand", reward="points")
    totals = random_episode(env, 11)
    game = env.unwrapped.game
    assert game.hand_number == 0 and game.phase is Phase.GAME_OVER
    assert sum(totals.values()) == pytest.approx(0)
    assert totals["player_0"] == pytest.approx(game.scores[0] - game.scores[1])


def test_bad_options_raise():
    with pytest.raises(ValueError, match="reward"):
        cribenv.env(reward="score")
    with pytest.raises(ValueError, match="episode"):
        cribenv.env(episode="match")
    with pytest.raises(ValueError, match="target"):
        cribenv.env(target=100)


def test_render_ansi_shows_the_table():
    env = cribenv.env(render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert "scores" in text and "count" in text and ">" in text
    hand = env.unwrapped.game.hands[env.unwrapped.game.current_player]
    assert C.to_str(hand[0]) in text
