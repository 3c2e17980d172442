"""Observation encoding: lossless round trip and no hidden information."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cribenv.aec import CribbageEnv
from cribenv.game import Game, Phase, Rules
from cribenv.observation import LAYOUT, OBS_SIZE, OFFSETS, decode, encode

positions = st.tuples(
    st.sampled_from([2, 3, 4]),
    st.sampled_from([121, 61]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 400),
)


def advance(game: Game, steps: int, rng: random.Random) -> None:
    for _ in range(steps):
        if game.phase is Phase.GAME_OVER:
            return
        game.step(rng.choice(game.legal_actions()))


def test_layout_is_contiguous():
    assert sum(size for _, size, _ in LAYOUT) == OBS_SIZE
    assert OFFSETS["hand"].start == 0 and OFFSETS[LAYOUT[-1][0]].stop == OBS_SIZE


@settings(max_examples=60, deadline=None)
@given(positions)
def test_decode_inverts_encode(params):
    num_players, target, seed, steps = params
    game = Game(Rules(num_players=num_players, target=target), seed=seed)
    advance(game, steps, random.Random(seed))
    for seat in range(num_players):
        view = game.view(seat)
        vec = encode(view)
        assert vec.dtype == np.float32 and vec.shape == (OBS_SIZE,)
        assert decode(vec, seat=seat) == view


def hidden_permutation(game: Game, seat: int, rng: random.Random) -> None:
    """Shuffle every card ``seat`` cannot see among the places they can be, in place."""
    places: list[tuple[list[int], int]] = []
    for other in range(game.num_players):
        if other != seat:
            places += [(game.hands[other], i) for i in range(len(game.hands[other]))]
    own_discards = set(game.discards[seat])
    places += [(game.crib, i) for i, c in enumerate(game.crib) if c not in own_discards]
    places += [(game.deck, i) for i in range(len(game.deck))]
    cards = [lst[i] for lst, i in places]
    rng.shuffle(cards)
    for (lst, i), card in zip(places, cards):
        lst[i] = card


@settings(max_examples=60, deadline=None)
@given(positions)
def test_hidden_cards_never_change_an_observation(params):
    num_players, target, seed, steps = params
    rng = random.Random(seed)
    env = CribbageEnv(num_players=num_players, target=target)
    env.reset(seed=seed)
    game = env.game
    advance(game, steps, rng)
    if game.phase is Phase.GAME_OVER:
        return
    for seat, agent in enumerate(env.possible_agents):
        env._cache = {}
        before = env.observe(agent)
        before = {k: v.copy() for k, v in before.items()}
        hidden_permutation(game, seat, rng)
        env._cache = {}
        after = env.observe(agent)
        np.testing.assert_array_equal(before["observation"], after["observation"])
        np.testing.assert_array_equal(before["action_mask"], after["action_mask"])
        np.testing.assert_array_equal(before["observation"], encode(game.view(seat)))


def test_observation_differs_when_own_cards_differ():
    """The test above would pass for a constant encoding; this one would not."""
    a = Game(Rules(), seed=1)
    b = Game(Rules(), seed=2)
    assert not np.array_equal(encode(a.view(0)), encode(b.view(0)))


def test_decode_rejects_wrong_shape():
    import pytest

    with pytest.raises(ValueError, match="shape"):
        decode(np.zeros(10, np.float32))


def test_derived_features():
    from cribenv import cards as C
    from cribenv.game import Deal

    deal = Deal(dealer=0, hands=["5S 4S 2S 8D 6H 8C".split(), "TS 6D JH 4H KC 7C".split()],
                starter="5H")
    game = Game(Rules(), seed=0, deals=[deal])
    for card in ["TS", "KC", "8D", "8C", "JH", "5S", "7C"]:
        game.step(card)
    vec = encode(game.view(0))   # Alice holds 4S 2S 6H; laid 5S; starter 5H; saw JH 7C
    ranks = vec[OFFSETS["hand_ranks"]] * 4
    assert [int(x) for x in ranks] == [0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    unseen = vec[OFFSETS["unseen_ranks"]] * 4
    expect = [4] * 13
    for card in C.parse_many("4S 2S 6H 8D 8C 5S 5H JH 7C"):
        expect[C.rank(card)] -= 1
    assert [int(round(x)) for x in unseen] == expect
    tail = vec[OFFSETS["series_tail"]].reshape(3, 13)
    assert [int(np.argmax(row)) for row in tail] == [C.rank(C.parse(c)) for c in ("7C", "5S", "JH")]
