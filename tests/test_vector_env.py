"""The Gymnasium VectorEnv on the batched engine: spaces, masks, autoreset, rewards against
``Game``, determinism, and ``VectorGame.step(rows=...)``."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from cribenv.game import Game, Rules, seat_side
from cribenv.vector import VectorGame, VectorIllegalActionError
from cribenv.vector_env import CribbageVectorEnv, random_opponent


def random_learner(rng: np.random.Generator):
    pick = random_opponent(rng)
    return lambda env: pick(None, env.action_masks())


def test_spaces_dtypes_and_shapes():
    env = CribbageVectorEnv(num_envs=5, num_players=2)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (601,)
    assert env.single_action_space.n == 52
    obs, info = env.reset(seed=3)
    assert obs.shape == (5, 601) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert info["action_mask"].shape == (5, 52) and info["action_mask"].dtype == bool
    np.testing.assert_array_equal(info["action_mask"], env.action_masks())
    act = random_learner(np.random.default_rng(0))(env)
    assert env.action_space.contains(act)
    obs, reward, term, trunc, info = env.step(act)
    assert obs.shape == (5, 601) and obs.dtype == np.float32
    assert reward.shape == (5,) and reward.dtype == np.float32
    assert term.dtype == bool and trunc.dtype == bool and not trunc.any()
    env.close()


def test_observation_is_the_learners_view():
    env = CribbageVectorEnv(num_envs=6, num_players=3)
    obs, _ = env.reset(seed=1)
    vg = env.game
    assert (vg.to_act == env.learner_seat).all()
    np.testing.assert_array_equal(obs, vg.observe())
    np.testing.assert_array_equal(env.action_masks(), vg.legal_mask())


@pytest.mark.parametrize("players", [2, 3, 4])
def test_masks_never_empty_and_games_end(players):
    env = CribbageVectorEnv(num_envs=16, num_players=players, target=61)
    env.reset(seed=players)
    learner = random_learner(np.random.default_rng(1))
    ended = 0
    for _ in range(300):
        _, _, term, _, info = env.step(learner(env))
        assert info["action_mask"].any(axis=1).all()
        assert (env.game.to_act == env.learner_seat).all()
        if term.any():
            assert info["_final_obs"].tolist() == term.tolist()
            assert not info["final_obs"][term].sum(axis=1).min() == 0
            assert (info["final_info"]["winner"][term] >= 0).all()
        ended += int(term.sum())
    assert ended > 16


@pytest.mark.parametrize("players, seat", [(2, None), (3, 1), (4, None)])
def test_points_rewards_sum_to_the_score_difference_of_game(players, seat):
    """Replays every game's cards (the learner's and the opponents') in ``Game`` from its
    seed: the same final scores, and the learner's rewards add up to its side's score
    difference (own minus the mean of the other sides, as the AEC env)."""
    moves: dict[tuple[int, int], list[int]] = {}
    envs: list[CribbageVectorEnv] = []
    pick = random_opponent(np.random.default_rng(7))

    def opponent(obs, mask):
        env = envs[0]
        cards = pick(obs, mask)
        to_act = env.game.to_act
        rows = np.flatnonzero((to_act >= 0) & (to_act != env.learner_seat))
        for r, c in zip(rows, cards):
            moves.setdefault((int(r), int(env.game_seeds[r])), []).append(int(c))
        return cards

    n = 6
    env = CribbageVectorEnv(num_envs=n, num_players=players, reward="points", opponent=opponent,
                            learner_seat=seat)
    envs.append(env)
    env.reset(seed=11)
    totals = np.zeros(n)
    learner = random_learner(np.random.default_rng(2))
    checked = 0
    while checked < 2 * n:
        act = learner(env)
        seeds, seats = env.game_seeds.copy(), env.learner_seat.copy()
        for i in range(n):
            moves.setdefault((i, int(seeds[i])), []).append(int(act[i]))
        _, reward, term, _, info = env.step(act)
        totals += reward
        for i in np.flatnonzero(term):
            game = Game(Rules(num_players=players), seed=int(seeds[i]))
            for card in moves.pop((int(i), int(seeds[i]))):
                game.step(card)
            assert game.is_over
            assert list(info["final_info"]["scores"][i]) == game.scores
            assert info["final_info"]["winner"][i] == game.winner
            assert info["final_info"]["learner_seat"][i] == seats[i]
            own = game.scores[seat_side(int(seats[i]), players)]
            diff = own - (sum(game.scores) - own) / (len(game.scores) - 1)
            assert totals[i] == pytest.approx(diff)
            totals[i] = 0.0
            checked += 1


def test_determinism_under_seed():
    def run(seed):
        env = CribbageVectorEnv(num_envs=8, num_players=2)
        obs, _ = env.reset(seed=seed)
        learner = random_learner(np.random.default_rng(5))
        out = [obs.copy()]
        for _ in range(60):
            obs, rew, term, _, _ = env.step(learner(env))
            out += [obs.copy(), rew.copy(), term.copy()]
        return out

    a, b, c = run(4), run(4), run(5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_random_against_random_wins_about_half():
    env = CribbageVectorEnv(num_envs=64, num_players=2, target=61)
    env.reset(seed=0)
    learner = random_learner(np.random.default_rng(0))
    wins = games = 0
    while games < 400:
        _, reward, term, _, info = env.step(learner(env))
        if term.any():
            won = info["final_info"]["won"][term]
            wins += int(won.sum())
            games += int(term.sum())
            np.testing.assert_array_equal(reward[term], np.where(won, 1.0, -1.0))
    assert 0.38 < wins / games < 0.62


def test_illegal_learner_action_raises():
    env = CribbageVectorEnv(num_envs=2)
    env.reset(seed=0)
    act = np.where(env.action_masks(), 0, 1).argmax(axis=1)   # an illegal card in each game
    with pytest.raises(VectorIllegalActionError):
        env.step(act)


def test_vector_game_step_rows_matches_stepping_alone():
    rules = Rules(num_players=3)
    whole = VectorGame(rules, seeds=[1, 2, 3, 4], reward="points")
    part = VectorGame(rules, seeds=[1, 2, 3, 4], reward="points")
    rng = np.random.default_rng(0)
    for k in range(40):
        rows = np.array([0, 2]) if k % 2 else np.array([1, 2, 3])
        acts = whole.random_actions(rng)
        part.step(acts, rows=rows)
        assert not part.rewards[np.setdiff1d(np.arange(4), rows)].any()
        whole_acts = acts.copy()
        whole.step(whole_acts)
        # rows not stepped in `part`: catch them up so both stay equal
        rest = np.setdiff1d(np.arange(4), rows)
        part.step(acts, rows=rest)
        np.testing.assert_array_equal(part.scores, whole.scores)
        np.testing.assert_array_equal(part.to_act, whole.to_act)
        np.testing.assert_array_equal(part.cumulative_rewards, whole.cumulative_rewards)
    mask = part.legal_mask(rows=[3, 1])
    np.testing.assert_array_equal(mask, whole.legal_mask()[[3, 1]])
    np.testing.assert_array_equal(part.observe(rows=[2]), whole.observe()[[2]])


def test_a_policy_network_as_opponent_and_threads():
    """The adapter of docs/vector.md: agents.ppo's MlpActor (random weights) playing the opponents,
    the engine on 2 threads; every opponent card is legal (the engine would raise)."""
    from agents.ppo import MlpActor

    rng = np.random.default_rng(0)
    actor = MlpActor([(rng.normal(size=(16, 601)), np.zeros(16))],
                     (rng.normal(size=(52, 16)), np.zeros(52)))

    def opponent(obs, mask):
        return np.where(mask, actor.logits(obs), -np.inf).argmax(axis=1)

    env = CribbageVectorEnv(num_envs=8, num_players=4, target=61, opponent=opponent, threads=2)
    env.reset(seed=0)
    learner = random_learner(np.random.default_rng(1))
    ended = 0
    for _ in range(200):
        _, _, term, _, info = env.step(learner(env))
        assert info["action_mask"].any(axis=1).all()
        ended += int(term.sum())
    assert ended > 0
    env.close()
