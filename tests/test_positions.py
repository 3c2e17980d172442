"""Positions in the batched engine: ``VectorGame.from_view`` continues a seat's view with the
unseen cards dealt by ``cribenv.positions.sample_hidden``, step by step as ``Game`` continued
from the same filled-in position; the compiled greedy bot and the playouts as
``agents.greedy``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import make_agent
from cribenv.game import Game, Phase, Rules
from cribenv.observation import encode
from cribenv.positions import go_floors, sample_hidden
from cribenv.vector import VectorGame

RULES = [Rules(num_players=2), Rules(num_players=2, target=61), Rules(num_players=3),
         Rules(num_players=4), Rules(num_players=2, must_peg_out_exactly=True),
         Rules(num_players=3, target=61)]


def bits(s: int) -> list[int]:
    return [c for c in range(52) if (int(s) >> c) & 1]


def filled_game(game: Game, view, hidden, r: int, seed: int) -> Game:
    """``game`` with the unseen cards replaced by deal ``r`` of ``hidden`` and the generator
    seeded with ``seed``: the position row ``r`` of ``VectorGame.from_view`` holds."""
    g = game.clone()
    n = game.num_players
    g.hands = [bits(hidden.hands[r, q]) for q in range(n)]
    g.discards = [bits(hidden.discards[r, q]) for q in range(n)]
    g.crib = bits(hidden.crib_card[r]) + [c for d in g.discards for c in d]
    if view.phase is Phase.PLAY:
        g.kept = [sorted(g.hands[q] + [c for s, c in view.played if s == q]) for q in range(n)]
    g.deck = [int(c) for c in hidden.deck[r]]
    g._rng = random.Random(seed)
    return g


def random_position(rules: Rules, seed: int) -> Game:
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    for _ in range(rng.randrange(120)):
        if game.current_player is None:
            break
        game.step(rng.choice(game.legal_actions()))
    if game.current_player is None:
        return random_position(rules, seed + 1000)
    return game


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.num_players}p-{r.target}"
                         + ("-exact" if r.must_peg_out_exactly else ""))
def test_rows_play_as_the_filled_in_game_step_by_step(rules):
    greedy = make_agent("greedy")
    checked = {Phase.DISCARD: 0, Phase.PLAY: 0}
    for case in range(12):
        game = random_position(rules, 100 * case + rules.num_players)
        seat = (game.current_player + case) % rules.num_players   # any seat's view
        view = game.view(seat)
        checked[view.phase] += 1
        hidden = sample_hidden(view, np.random.default_rng(case), 3)
        seeds = [case * 7 + k for k in range(3)]
        vg = VectorGame.from_view(view, hidden, seeds, rules=rules)
        games = [filled_game(game, view, hidden, r, seeds[r]) for r in range(3)]
        rng = np.random.default_rng(case)
        for _ in range(400):
            if vg.done.all():
                break
            to_act = vg.to_act
            obs = vg.observe()
            greedy_cards = vg.greedy_actions()
            actions = np.zeros(3, np.int64)
            for r, g in enumerate(games):
                assert (g.current_player if g.current_player is not None else -1) == to_act[r]
                assert list(vg.scores[r]) == g.scores
                if g.current_player is None:
                    continue
                v = g.view(g.current_player)
                np.testing.assert_array_equal(obs[r], encode(v))
                assert greedy_cards[r] == greedy.choose(v, g.legal_actions())
                actions[r] = rng.choice(g.legal_actions())
            vg.step(actions)
            for r, g in enumerate(games):
                if g.current_player is not None:
                    g.step(int(actions[r]))
        for r, g in enumerate(games):
            assert vg.winner[r] == (-1 if g.winner is None else g.winner)
    assert min(checked.values()) > 0, checked


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_views_own_cards_and_counts_are_kept(players):
    for case in range(20):
        game = random_position(Rules(num_players=players), case)
        view = game.view(game.current_player)
        hidden = sample_hidden(view, np.random.default_rng(case), 50)
        seen = set(view.seen_cards())
        for r in range(50):
            dealt = []
            for q in range(players):
                hand, disc = bits(hidden.hands[r, q]), bits(hidden.discards[r, q])
                assert len(hand) == view.cards_held[q] and len(disc) == view.discards_made[q]
                if q == view.seat:
                    assert hand == view.hand and disc == view.discards
                else:
                    dealt += hand + disc
            dealt += bits(hidden.crib_card[r]) + list(hidden.deck[r])
            assert sorted(dealt) == view.unseen_cards() and not seen & set(dealt)


def test_go_floors_hold_in_every_deal():
    """A seat that said Go at count c holds only cards worth more than 31 - c in every deal,
    and the true deal always satisfies the floors (they are facts)."""
    found = 0
    for seed in range(300):
        game = random_position(Rules(num_players=2 + seed % 3), seed)
        if game.phase is not Phase.PLAY:
            continue
        view = game.view(game.current_player)
        floors = go_floors(view)
        for q in range(game.num_players):
            assert all(min(c >> 2, 9) + 1 >= floors[q] for c in game.hands[q]), (seed, q)
        if max(floors[q] for q in range(game.num_players) if q != view.seat) > 1:
            found += 1
            hidden = sample_hidden(view, np.random.default_rng(seed), 20)
            for q in range(game.num_players):
                if q != view.seat:
                    for r in range(20):
                        assert all(min(c >> 2, 9) + 1 >= floors[q]
                                   for c in bits(hidden.hands[r, q]))
    assert found > 20


@pytest.mark.parametrize("rules", RULES[:4], ids=lambda r: f"{r.num_players}p-{r.target}")
def test_playout_is_greedy_play_to_the_end_of_the_hand(rules):
    greedy = make_agent("greedy")
    for case in range(10):
        game = random_position(rules, 50 + case)
        view = game.view(game.current_player)
        hidden = sample_hidden(view, np.random.default_rng(case), 4)
        seeds = list(range(4))
        vg = VectorGame.from_view(view, hidden, seeds, rules=rules)
        vg.playout()
        for r in range(4):
            g = filled_game(game, view, hidden, r, seeds[r])
            hand = g.hand_number
            while g.current_player is not None and g.hand_number == hand:
                g.step(greedy.choose(g.view(g.current_player), g.legal_actions()))
            assert list(vg.scores[r]) == g.scores
            assert vg.hand_number[r] == g.hand_number and vg.to_act[r] == \
                (-1 if g.current_player is None else g.current_player)


def test_from_view_refuses_a_view_of_other_rules_or_a_finished_game():
    game = Game(Rules(num_players=2), seed=1)
    view = game.view(game.current_player)
    hidden = sample_hidden(view, np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="not the view's"):
        VectorGame.from_view(view, hidden, [0, 1], rules=Rules(num_players=2, target=61))
    with pytest.raises(ValueError, match="2 deals for 3 seeds"):
        VectorGame.from_view(view, hidden, [0, 1, 2])


def true_hidden(game: Game, seat: int):
    """The real deal of the cards ``seat`` cannot see, as a one-row ``Hidden``."""
    from cribenv.positions import Hidden

    n = game.num_players
    dealt = set(c for h in game.hands for c in h) | set(game.crib)
    def cset(cards):
        return sum(1 << c for c in cards)
    hands = np.array([[cset(h) for h in game.hands]], np.int64)
    discards = np.array([[cset(d) for d in game.discards]], np.int64)
    crib_card = np.array([cset(c for c in game.crib if not any(c in d for d in game.discards))])
    deck = np.array([[c for c in game.deck if c not in dealt]], np.int64)
    return Hidden(hands, discards, crib_card, deck)


def brute_force(game: Game, side: int, hand: int) -> float:
    """Minimax over ``Game`` clones: the value the solver must find."""
    from agents.winprob import seat_wins

    if game.current_player is None or game.hand_number != hand:
        if game.current_player is None:
            return 1.0 if game.winner == side else 0.0
        return float(seat_wins(game.scores[side], game.scores[1 - side],
                               game.dealer == side, game.rules.target))
    values = []
    for c in game.legal_actions():
        g = game.clone()
        g.step(c)
        values.append(brute_force(g, side, hand))
    return max(values) if game.current_player == side else min(values)


@pytest.mark.parametrize("target", [121, 61])
def test_solve_play_is_minimax_over_the_cards_held(target):
    from agents.winprob import _table

    solved = 0
    for seed in range(200):
        rng = random.Random(seed)
        game = Game(Rules(target=target), seed=seed)
        while game.current_player is not None and (game.phase is not Phase.PLAY or
                                                   sum(map(len, game.hands)) > 5
                                                   or rng.random() < 0.3):
            game.step(rng.choice(game.legal_actions()))
        if game.current_player is None or game.phase is not Phase.PLAY:
            continue
        seat = game.current_player
        side = seat % 2
        view = game.view(seat)
        vg = VectorGame.from_view(view, true_hidden(game, seat), [seed], rules=game.rules)
        got = vg.solve_play(side, np.array([game.hand_number]), _table(target))[0]
        assert got == brute_force(game, side, game.hand_number), seed
        solved += 1
    assert solved > 50
