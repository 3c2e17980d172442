"""cribenv.turn_mask.TurnMaskWrapper, torch-free: through PettingZoo's parallel route every agent's
mask has a card on every row (the acting agent's exactly its legal cards), and the "on_turn"
rewards add up to the env's own over a whole game."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import cribenv
from cribenv.turn_mask import TurnMaskWrapper

ROOT = Path(__file__).resolve().parents[1]


def play_parallel(env, seed: int):
    """One whole game through ``turn_based_aec_to_parallel(env)``, the acting agent playing
    random legal cards (drawn from the legal cards of the unwrapped env, so the same seed plays
    the same game with or without the wrapper) and every other agent sampling from its own mask,
    as a masked policy does. Returns the rows, one per step and the final observation:
    (acting agent or None, observations, the legal cards of the acting agent), and the rewards
    of every step."""
    par = turn_based_aec_to_parallel(env)
    raw = par.unwrapped
    obs, _ = par.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows, rewards = [], []
    while par.agents:
        actor = par.aec_env.agent_selection
        legal = raw.action_mask().astype(bool)
        rows.append((actor, obs, legal))
        card = int(rng.choice(np.flatnonzero(legal)))
        actions = {a: card if a == actor else
                   int(np.flatnonzero(o["action_mask"])[0]) if o["action_mask"].any() else None
                   for a, o in obs.items()}
        obs, reward, *_ = par.step(actions)
        rewards.append(reward)
    rows.append((None, obs, None))   # the final observation: the game is over, no one acts
    return rows, rewards, raw.game.scores


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_parallel_route_without_the_wrapper_gives_waiting_agents_empty_masks(players):
    rows, _, _ = play_parallel(cribenv.env(target=61, num_players=players), seed=players)
    waiting = [o["action_mask"] for actor, obs, _ in rows for a, o in obs.items() if a != actor]
    empty = sum(not m.any() for m in waiting)
    assert empty == len(waiting) > 0     # the problem: no card to sample from, on every such row


@pytest.mark.parametrize("players", [2, 3, 4])
def test_with_the_wrapper_every_mask_has_a_card_and_the_actor_sees_its_legal_cards(players):
    rows, _, _ = play_parallel(TurnMaskWrapper(cribenv.env(target=61, num_players=players)),
                               seed=players)
    assert len(rows) > 50
    agents = set(cribenv.env(num_players=players).possible_agents)
    for actor, obs, legal in rows:
        assert set(obs) == agents
        for agent, o in obs.items():
            mask = o["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (52,) and mask.any()
            if agent == actor:
                assert np.array_equal(mask.astype(bool), legal)   # exactly the legal cards
            else:
                assert mask.all()                                  # waiting: all ones


@pytest.mark.parametrize("players", [2, 3, 4])
def test_on_turn_rewards_add_up_to_the_envs_own_over_a_game(players):
    kwargs = {"target": 61, "num_players": players, "reward": "points"}
    _, bare, scores = play_parallel(cribenv.env(**kwargs), seed=10 + players)
    rows, on_turn, again = play_parallel(TurnMaskWrapper(cribenv.env(**kwargs)),
                                         seed=10 + players)
    assert again == scores                     # the same game
    agents = list(rows[0][1])
    env_totals = {a: sum(r.get(a, 0.0) for r in bare) for a in agents}
    totals = {a: sum(r.get(a, 0.0) for r in on_turn) for a in agents}
    assert totals == pytest.approx(env_totals)
    assert any(v != 0 for v in totals.values())
    # paid on the agent's own rows and on the final row only
    for (actor, _, _), reward in zip(rows[:-2], on_turn[:-1]):
        assert all(r == 0 or a == actor for a, r in reward.items())
    # the env pays some of those rewards on other agents' turns: the timing did move them
    moved = sum(r != 0 and a != actor for (actor, _, _), reward in zip(rows[:-2], bare[:-1])
                for a, r in reward.items())
    assert moved > 0
    if players == 2:
        assert totals == {agents[0]: scores[0] - scores[1], agents[1]: scores[1] - scores[0]}


def test_as_scored_and_zeros_keep_the_envs_behaviour():
    kwargs = {"target": 61, "reward": "points"}
    _, bare, _ = play_parallel(cribenv.env(**kwargs), seed=3)
    rows, as_scored, _ = play_parallel(
        TurnMaskWrapper(cribenv.env(**kwargs), idle_mask="zeros", rewards="as_scored"), seed=3)
    assert as_scored == bare
    assert any(not o["action_mask"].any() for _, obs, _ in rows for o in obs.values())


def test_the_wrapper_pays_each_seat_its_final_differential():
    env = TurnMaskWrapper(cribenv.env(target=61, reward="points", num_players=3))
    env.reset(seed=4)
    got = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(4)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        for a, r in env.rewards.items():
            assert r == 0 or a == agent or all(env.terminations.values())
            got[a] += r
    game = env.unwrapped.game
    for seat, agent in enumerate(env.possible_agents):
        own = game.scores[seat]
        others = [s for i, s in enumerate(game.scores) if i != seat]
        assert got[agent] == pytest.approx(own - sum(others) / 2)


def test_bad_options():
    with pytest.raises(ValueError, match="idle_mask"):
        TurnMaskWrapper(cribenv.env(), idle_mask="none")
    with pytest.raises(ValueError, match="rewards"):
        TurnMaskWrapper(cribenv.env(), rewards="later")
    with pytest.raises(ValueError, match="dict observations"):
        TurnMaskWrapper(cribenv.env(obs_type="flat"))


def test_the_wrapper_needs_no_torch():
    code = ("import sys, cribenv\n"
            "from pettingzoo.utils.conversions import turn_based_aec_to_parallel\n"
            "from cribenv.turn_mask import TurnMaskWrapper\n"
            "par = turn_based_aec_to_parallel(TurnMaskWrapper(cribenv.env()))\n"
            "obs, _ = par.reset(seed=0)\n"
            "assert all(o['action_mask'].any() for o in obs.values())\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'torchrl', 'tensordict', 'tianshou', 'ray', 'supersuit'))\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
