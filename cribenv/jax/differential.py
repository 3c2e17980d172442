"""The JAX engine against :class:`cribenv.game.Game`, action by action: the comparison behind
``tests/test_jax_engine.py`` (hundreds of games) and ``scripts/jax_differential.py`` (10^5).

:func:`play_both` deals the same random deck orders to a batch of JAX games (``vmap``ped
``init_with_deck``/``step_with_deck``) and to one ``Game`` per game (``deals=`` and
``first_dealer=``), plays the same random legal cards on both and checks after every action:
the end flag, the scores, the seat to act, the legal mask, the observation of the seat to act
and of the next seat (``observe``), and at the end the winner, the game points and the
rewards. A difference raises :class:`Mismatch` naming the seed, the game and the action, from
which ``play_both`` with the same arguments reproduces it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from cribenv.game import Deal, Game, Rules
from cribenv.jax.engine import Cribbage
from cribenv.observation import encode
from cribenv.rules import win_reward

__all__ = ["HANDS", "Mismatch", "compiled", "deal_from_deck", "play_both"]

HANDS = 48   # deals given per game: far more than a game to 121 lasts


class Mismatch(AssertionError):
    """The engines differ: ``where`` is (seed, game, action) of the first difference."""

    def __init__(self, message: str, seed: int, game: int, action: int) -> None:
        super().__init__(message)
        self.seed, self.game, self.action = seed, game, action


def deal_from_deck(deck: np.ndarray, dealer: int, rules: Rules) -> Deal:
    """The Deal the JAX engine deals from ``deck`` (its documented order)."""
    n, size = rules.num_players, rules.num_players * rules.hand_size
    hands = [[int(c) for i, c in enumerate(deck[:size]) if (dealer + 1 + i) % n == seat]
             for seat in range(n)]
    return Deal(None, hands, int(deck[size]), int(deck[51]) if n == 3 else None)


_COMPILED: dict[tuple, tuple] = {}


def compiled(env: Cribbage) -> tuple:
    """``jit(vmap(...))`` of ``init_with_deck``, ``step_with_deck`` and ``observe``, once per
    (players, target, skunks)."""
    key = (env.n, env.target, env.skunks)
    if key not in _COMPILED:
        _COMPILED[key] = (jax.jit(jax.vmap(env.init_with_deck)),
                          jax.jit(jax.vmap(env.step_with_deck)),
                          jax.jit(jax.vmap(env.observe)))
    return _COMPILED[key]


def _differ(want: object, got: object) -> str:
    want, got = np.asarray(want), np.asarray(got)
    if want.shape == got.shape and want.ndim == 1 and want.size > 8:
        at = np.flatnonzero(want != got).tolist()
        return f"differ at {at}: Game {want[at].tolist()}, JAX {got[at].tolist()}"
    return f"Game {want.tolist()}, JAX {got.tolist()}"


def play_both(num_players: int, target: int, skunks: bool, games: int, seed: int) -> int:
    """Play ``games`` random games on both engines, comparing after every action (and the
    observation of the next seat too); returns the number of decisions compared. The decks,
    first dealers and actions all come from ``numpy.random.default_rng(seed)``."""
    rules = Rules(num_players=num_players, target=target)
    env = Cribbage(num_players=num_players, target=target, skunks=skunks)
    init, step, observe = compiled(env)
    rng = np.random.default_rng(seed)
    decks = np.argsort(rng.random((games, HANDS, 52)), axis=2).astype(np.int32)
    first = rng.integers(0, num_players, games).astype(np.int32)
    pool = [Game(rules, seed=0, first_dealer=int(first[g]),
                 deals=[deal_from_deck(decks[g, h], (int(first[g]) + h) % num_players, rules)
                        for h in range(HANDS)]) for g in range(games)]
    state = init(jnp.asarray(decks[:, 0]), jnp.asarray(first))
    last = [-1] * games          # the seat that made each game's last action
    live = np.ones(games, bool)
    decisions = 0

    def check(ok: bool, g: int, what: str, want: object = None, got: object = None) -> None:
        if not ok:
            detail = "" if want is None else ": " + _differ(want, got)
            raise Mismatch(f"{num_players} players, target {target}, skunks {skunks}, seed "
                           f"{seed}, {games} games: game {g}, action {len(pool[g].actions)}: "
                           f"{what}{detail}", seed, g, len(pool[g].actions))

    while live.any():
        st = jax.device_get(state)
        others = (st.current_player + 1) % num_players   # observe() of a seat not to act
        seen = np.asarray(observe(state, jnp.asarray(others)))
        actions = np.zeros(games, np.int32)
        for g in np.flatnonzero(live):
            game = pool[g]
            check(bool(st.terminated[g]) == game.is_over, g, "game over",
                  game.is_over, bool(st.terminated[g]))
            check(list(st.scores[g]) == game.scores, g, "scores", game.scores, st.scores[g])
            seat = last[g] if game.is_over else game.current_player
            want = encode(game.view(seat))
            check(np.array_equal(st.observation[g], want), g, f"observation of seat {seat}",
                  want, st.observation[g])
            other = encode(game.view(int(others[g])))
            check(np.array_equal(seen[g], other), g, f"observe(seat {others[g]})", other,
                  seen[g])
            if game.is_over:
                check(int(st.current_player[g]) == last[g], g, "last seat to act", last[g],
                      st.current_player[g])
                check(bool(st.legal_action_mask[g].all()), g, "final mask all True")
                check(int(st.winner[g]) == game.winner, g, "winner", game.winner,
                      st.winner[g])
                check(int(st.game_points[g]) == game.game_points, g, "game points",
                      game.game_points, st.game_points[g])
                scale = game.game_points if skunks else 1
                want = [win_reward(rules.side_of(s) == game.winner, scale, rules.num_sides)
                        for s in range(num_players)]
                check(np.allclose(st.rewards[g], want), g, "rewards", want, st.rewards[g])
                live[g] = False
            else:
                check(not st.rewards[g].any(), g, "rewards before the end", 0, st.rewards[g])
                check(int(st.current_player[g]) == seat, g, "seat to act", seat,
                      st.current_player[g])
                legal = np.flatnonzero(st.legal_action_mask[g])
                check(legal.tolist() == game.legal_actions(), g, "legal cards",
                      game.legal_actions(), legal)
                actions[g] = card = rng.choice(legal)
                last[g] = seat
                game.step(int(card))
                decisions += 1
            check(game.hand_number < HANDS - 1, g, f"the game outlasted its {HANDS} deals")
        nxt = decks[np.arange(games), np.minimum(st.hand_number + 1, HANDS - 1)]
        state = step(state, jnp.asarray(actions), jnp.asarray(nxt))
    return decisions
