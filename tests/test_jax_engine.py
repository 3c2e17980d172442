"""cribenv.jax against Game: the same deals and the same random actions give the same seat to
act, masks, scores, observations, terminal flag, winner and rewards after every action (the
comparison lives in cribenv.jax.differential, shared with scripts/jax_differential.py); and
the JAX scorers on hands counted by hand."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from cribenv import cards as C  # noqa: E402
from cribenv.jax import Cribbage, peg_points, show_points  # noqa: E402
from cribenv.jax.differential import Mismatch, play_both  # noqa: E402


@pytest.mark.parametrize("num_players, target, skunks, games", [
    (2, 121, False, 300),
    (2, 61, True, 300),
    (3, 61, True, 120),
    (4, 121, True, 100),
])
def test_the_jax_engine_plays_as_game_does(num_players, target, skunks, games):
    decisions = play_both(num_players, target, skunks, games, seed=num_players * 1000 + target)
    assert decisions > games * 40


def test_importing_cribenv_imports_no_jax():
    code = ("import sys, cribenv, cribenv.game, cribenv.observation, cribenv.aec; "
            "assert 'jax' not in sys.modules, 'jax imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_finished_game_stays_finished_and_an_illegal_card_loses():
    env = Cribbage()
    step = jax.jit(env.step)
    state = jax.jit(env.init)(jax.random.PRNGKey(3))
    illegal = int(np.flatnonzero(~np.asarray(state.legal_action_mask))[0])
    seat = int(state.current_player)
    lost = step(state, illegal, jax.random.PRNGKey(4))
    assert bool(lost.terminated) and bool(lost.legal_action_mask.all())
    assert lost.rewards.tolist() == [(-1.0 if s == seat else 1.0) for s in range(2)]
    again = step(lost, 0, jax.random.PRNGKey(5))
    assert bool(again.terminated) and not again.rewards.any()
    assert again.scores.tolist() == lost.scores.tolist()


def test_init_draws_the_deal_and_the_dealer_from_the_key():
    env = Cribbage()
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 64))
    assert np.asarray(states.hands.sum(axis=2) == 6).all()
    assert set(np.asarray(states.dealer).tolist()) == {0, 1}
    assert len({tuple(np.flatnonzero(h[0])) for h in np.asarray(states.hands)}) == 64


@pytest.mark.parametrize("hand, starter, crib, points", [
    ("5C 5D 5H JS", "5S", False, 29),      # fifteens 16, pairs 12, nobs 1
    ("4H 5H 6H 6C", "KS", False, 14),      # double run 6, pair 2, fifteens 6
    ("2H 4H 6H 8H", "KS", False, 4),       # a flush of four in the hand (even values: no 15)
    ("2H 4H 6H 8H", "KS", True, 0),        # four of a suit do not score in the crib
    ("2H 4H 6H 8H", "TH", True, 5),        # five do
    ("AC 3D 7H JS", "KS", False, 1),       # nobs alone
])
def test_show_points_by_hand(hand, starter, crib, points):
    got = int(show_points(jnp.asarray(C.parse_many(hand)), C.parse(starter), crib))
    assert got == points


@pytest.mark.parametrize("series, count, points", [
    ("5C TD", 15, 2),                 # fifteen
    ("7C 7D 7H", 21, 6),              # pair royal
    ("4C 4D 4H 4S", 16, 12),          # double pair royal
    ("8C 8D 9H", 25, 0),              # the pair is broken
    ("3C 5D 4H", 12, 3),              # a run of 3, out of order
    ("AC 2D 4H 3S", 10, 4),           # a run of 4
    ("3C 4D 3H 5S", 15, 5),           # fifteen, and the run 4 3 5 of the last three
    ("KC QD JH", 30, 3),              # a run of 3 at 30
    ("TC 5D 6H AS 9C", 31, 2),        # 31
])
def test_peg_points_by_hand(series, count, points):
    ids = C.parse_many(series)
    padded = jnp.asarray(ids + [0] * (16 - len(ids)))
    assert int(peg_points(padded, len(ids), count)) == points


def test_a_difference_is_reported_with_the_seed_game_and_action(monkeypatch):
    import cribenv.jax.differential as differential

    real = differential.encode
    monkeypatch.setattr(differential, "encode", lambda view: real(view) + 1)
    with pytest.raises(Mismatch, match=r"seed 5, 3 games: game 0, action 0: observation"):
        play_both(2, 121, False, 3, seed=5)


def test_pgx_users_auto_reset_and_vmap_loop_run_on_it_unchanged():
    """A Pgx user's loop, unchanged: ``pgx.experimental.auto_reset`` around ``step`` and
    ``init``, ``jit(vmap(...))`` over 64 games, a random legal card from the mask each step: the
    finished games restart, every state offers a legal card, and each step's rewards are
    zero-sum (+1 to a winner, -1 to a loser, or skunks' multiples)."""
    pgx_experimental = pytest.importorskip("pgx.experimental")
    import jax.numpy as jnp

    env = Cribbage(num_players=2, target=61)
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(pgx_experimental.auto_reset(env.step, env.init)))
    games = 64
    key = jax.random.PRNGKey(0)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, games))
    finished = 0
    for _ in range(400):
        key, pick, sub = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(pick, logits, axis=1)
        state = step(state, action, jax.random.split(sub, games))
        assert bool(state.legal_action_mask.any(axis=1).all())
        assert bool((state.rewards.sum(axis=1) == 0).all())
        finished += int(state.terminated.sum())
    assert finished >= games // 2          # games of 61 end within 400 decisions, and restart
    assert bool((state.current_player >= 0).all())


def test_mctx_searches_over_it_as_pgx_alphazero_example_does():
    """The shape of Pgx's AlphaZero example: ``mctx.gumbel_muzero_policy`` over a batch of
    states, its ``recurrent_fn`` stepping the engine (the reward the seat that moved earned,
    the discount -1 while the other seat is to act, 0 once the game is over), a uniform prior
    on the legal cards: every action it picks is legal."""
    mctx = pytest.importorskip("mctx")
    import jax.numpy as jnp

    env = Cribbage(num_players=2, target=61)
    batch = 8
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(3), batch))

    def prior(s):
        logits = jnp.where(s.legal_action_mask, 0.0, -1e9)
        return logits, jnp.zeros(s.legal_action_mask.shape[0])

    def recurrent_fn(params, key, action, s):
        player = s.current_player
        s = jax.vmap(env.step)(s, action, jax.random.split(key, action.shape[0]))
        logits, value = prior(s)
        reward = s.rewards[jnp.arange(action.shape[0]), player]
        same = s.current_player == player
        discount = jnp.where(s.terminated, 0.0, jnp.where(same, 1.0, -1.0))
        return mctx.RecurrentFnOutput(reward=reward, discount=discount,
                                      prior_logits=logits, value=value), s

    @jax.jit
    def search(s, key):
        logits, value = prior(s)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=s)
        return mctx.gumbel_muzero_policy(params=None, rng_key=key, root=root,
                                         recurrent_fn=recurrent_fn, num_simulations=16,
                                         invalid_actions=~s.legal_action_mask)

    for i in range(6):
        out = search(state, jax.random.PRNGKey(i))
        legal = state.legal_action_mask[jnp.arange(batch), out.action]
        assert bool(legal.all())
        keys = jax.random.split(jax.random.PRNGKey(i), batch)
        state = jax.vmap(env.step)(state, out.action, keys)
