"""Property tests over random games for 2, 3 and 4 players."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from cribenv.game import Game, GameOver, Phase, Rules

games = st.tuples(
    st.sampled_from([2, 3, 4]),
    st.sampled_from([121, 61]),
    st.integers(0, 2**32 - 1),   # game seed
    st.integers(0, 2**32 - 1),   # action seed
)


def all_cards(game: Game) -> list[int]:
    cards = [c for h in game.hands for c in h] + game.crib + game.deck
    cards += [c for _, c in game.played]
    if game.starter is not None:
        cards.append(game.starter)
    return cards


@settings(max_examples=40, deadline=None)
@given(games)
def test_invariants_over_random_games(params):
    num_players, target, seed, action_seed = params
    rules = Rules(num_players=num_players, target=target)
    game = Game(rules, seed=seed)
    rng = random.Random(action_seed)
    prev_scores = list(game.scores)
    while game.phase is not Phase.GAME_OVER:
        cards = all_cards(game)
        assert sorted(cards) == list(range(52)), "cards must be conserved"
        assert max(game.scores) < target, "the game must end the moment a side reaches target"
        legal = game.legal_actions()
        assert legal and game.current_player is not None
        if game.phase is Phase.PLAY:
            assert all(game.count + min(c // 4 + 1, 10) <= 31 for c in legal)
        events = game.step(rng.choice(legal))
        assert all(new >= old for new, old in zip(game.scores, prev_scores))
        if game.phase is not Phase.GAME_OVER:
            assert not any(isinstance(e, GameOver) for e in events)
        prev_scores = list(game.scores)
    assert max(game.scores) >= target
    assert game.scores[game.winner] == max(game.scores)
    assert sum(s >= target for s in game.scores) == 1
    assert isinstance(game.events[-1], GameOver)
    assert game.game_points in (1, 2, 3)
    # the same seed and the same actions give the same game, event for event
    again = Game(rules, seed=seed)
    for action in game.actions:
        again.step(action)
    assert again.events == game.events
    # a serialised record replays identically
    replay = Game.from_json(game.to_json())
    assert replay.events == game.events and replay.scores == game.scores


@settings(max_examples=20, deadline=None)
@given(games)
def test_deal_sequence_depends_on_seed_only(params):
    """Different actions, same seed: every hand is dealt the same cards (duplicate deals)."""
    num_players, target, seed, action_seed = params
    rules = Rules(num_players=num_players, target=target)
    a, b = Game(rules, seed=seed), Game(rules, seed=seed)
    ra, rb = random.Random(action_seed), random.Random(action_seed + 1)
    dealt_a, dealt_b = {}, {}
    for game, rng, dealt in ((a, ra, dealt_a), (b, rb, dealt_b)):
        while not game.is_over and game.hand_number < 4:
            if game.phase is Phase.DISCARD and game.hand_number not in dealt:
                dealt[game.hand_number] = (game.dealer, [sorted(h) for h in game.hands])
            game.step(rng.choice(game.legal_actions()))
    common = set(dealt_a) & set(dealt_b)
    assert common
    for hand in common:
        assert dealt_a[hand] == dealt_b[hand]
