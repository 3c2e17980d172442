"""Positions in the batched engine: the search's ``agents.search.playouts.from_view``
continues a seat's view with the unseen cards dealt by ``cribenv.positions.sample_hidden``,
step by step as ``Game`` continued from the same filled-in position; the compiled greedy bot
and the playouts as ``agents.greedy``; the likelihoods as their plain Python softmax."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import make_agent
from agents.search.playouts import (
    discard_likelihood,
    from_view,
    greedy_actions,
    play_likelihood,
    playout,
)
from cribenv.cards import parse, parse_many
from cribenv.game import Game, Phase, Rules
from cribenv.observation import encode
from cribenv.positions import go_floors, sample_hidden

RULES = [Rules(num_players=2), Rules(num_players=2, target=61), Rules(num_players=3),
         Rules(num_players=4), Rules(num_players=2, must_peg_out_exactly=True),
         Rules(num_players=3, target=61)]


def bits(s: int) -> list[int]:
    return [c for c in range(52) if (int(s) >> c) & 1]


def filled_game(game: Game, view, hidden, r: int, seed: int) -> Game:
    """``game`` with the unseen cards replaced by deal ``r`` of ``hidden`` and the generator
    seeded with ``seed``: the position row ``r`` of ``from_view`` holds."""
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
        vg = from_view(view, hidden, seeds, rules=rules)
        games = [filled_game(game, view, hidden, r, seeds[r]) for r in range(3)]
        rng = np.random.default_rng(case)
        for _ in range(400):
            if vg.done.all():
                break
            to_act = vg.to_act
            obs = vg.observe()
            greedy_cards = greedy_actions(vg)
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


def lite_values(game: Game) -> dict[int, float]:
    """The playouts' pegging values in plain Python: for each card the seat to act can lay,
    the points it pegs less the expected best reply of the next seat (its cards a random set
    of those the seat has not seen); 1000 for a card that pegs out."""
    from cribenv.cards import RANK_VALUES
    from cribenv.scoring import peg_points_ids

    p, n = game.current_player, game.num_players
    side = game.side_of(p)
    seen = set(game.hands[p]) | set(game.discards[p]) | {game.starter} | \
        {c for _, c in game.played}
    unseen = [c for c in range(52) if c not in seen]
    ranks = [sum(1 for c in unseen if c >> 2 == r) for r in range(13)]
    q = (p + 1) % n
    held = len(game.hands[q])
    opponent = game.side_of(q) != side

    def none_drawn(total, marked, h):
        if marked <= 0:
            return 1.0
        if h > total - marked:
            return 0.0
        out = 1.0
        for j in range(h):
            out *= (total - marked - j) / (total - j)
        return out

    out = {}
    series = game.series
    for c in game.legal_actions():
        now = peg_points_ids(series + [c])
        if now >= game.rules.target - game.scores[side]:
            out[c] = 1000.0
            continue
        after = game.count + RANK_VALUES[c >> 2]
        expected = 0.0
        if held and after < 31:
            pts = [peg_points_ids(series + [c, 4 * r + ((c & 3) + 1) % 4])
                   if ranks[r] and RANK_VALUES[r] <= 31 - after else -1 for r in range(13)]
            for t in range(1, max(pts + [0]) + 1):
                marked = sum(ranks[r] for r in range(13) if pts[r] >= t)
                expected += 1.0 - none_drawn(len(unseen), marked, held)
        out[c] = now - expected if opponent else now + expected
    return out


def lite_card(game: Game) -> int:
    values = lite_values(game)
    return max(values, key=lambda c: (round(values[c], 9), c >> 2, -c))


@pytest.mark.parametrize("rules", RULES[:4], ids=lambda r: f"{r.num_players}p-{r.target}")
def test_the_playouts_pegging_values_are_the_plain_python_ones(rules):
    from agents.search import kernels as P

    checked = 0
    for case in range(40):
        game = random_position(rules, 300 + case)
        if game.phase is not Phase.PLAY:
            continue
        view = game.view(game.current_player)
        hidden = sample_hidden(view, np.random.default_rng(case), 1)
        vg = from_view(view, hidden, [case], rules=rules)
        g = filled_game(game, view, hidden, 0, case)
        values = np.empty(52)
        P._lite_values(vg.state, vg.config, 0, view.current_player, values)
        want = lite_values(g)
        assert sorted(np.flatnonzero(values > -np.inf).tolist()) == sorted(want)
        for c, v in want.items():
            assert values[c] == pytest.approx(v, rel=1e-12, abs=1e-12)
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("rules", RULES[:4], ids=lambda r: f"{r.num_players}p-{r.target}")
def test_a_playout_plays_the_hand_out_as_the_plain_python_rule(rules):
    greedy = make_agent("greedy")
    for case in range(10):
        game = random_position(rules, 50 + case)
        view = game.view(game.current_player)
        hidden = sample_hidden(view, np.random.default_rng(case), 4)
        seeds = list(range(4))
        vg = from_view(view, hidden, seeds, rules=rules)
        playout(vg)
        for r in range(4):
            g = filled_game(game, view, hidden, r, seeds[r])
            hand = g.hand_number
            while g.current_player is not None and g.hand_number == hand:
                if g.phase is Phase.DISCARD:
                    g.step(greedy.choose(g.view(g.current_player), g.legal_actions()))
                else:
                    g.step(lite_card(g))
            assert list(vg.scores[r]) == g.scores
            assert vg.hand_number[r] == g.hand_number and vg.to_act[r] == \
                (-1 if g.current_player is None else g.current_player)


def test_deals_that_explain_the_plays_weigh_more():
    """The log-likelihood of the plays seen is 0 with none laid, below 0 after, and a deal in
    which the opponent held a pair for the card it was offered (and did not pair it) is less
    likely than one without."""
    game = Game(deals=[{"dealer": 0, "hands": ["5H 5D 9S KS QD 2C", "10C 4H 6C 8S 7D AH"],
                        "starter": "JC"}])
    for c in ["7D", "AH", "KS", "QD", "10C", "2C", "4H"]:
        game.step(parse(c))
    view = game.view(0)   # the pone led 10, the dealer 2 (12), the pone 4 (16)
    from cribenv.positions import Hidden

    def cset(text):
        return sum(1 << c for c in parse_many(text))
    known = set(parse_many("5H 5D 9S KS QD JC 10C 2C 4H 7D AH"))
    worlds = []
    for pone in ("6C 8S", "2D 8S"):
        deck = [c for c in range(52) if c not in known | set(parse_many(pone))]
        worlds.append((cset(pone), deck))
    rows = Hidden(np.array([[cset("5H 5D 9S"), h] for h, _ in worlds]),
                  np.array([[cset("KS QD"), cset("7D AH")]] * 2),
                  np.zeros(2, np.int64), np.array([d for _, d in worlds]))
    ll = play_likelihood(from_view(view, rows, [0, 1]), 0)
    assert ll[0] < 0 and ll[1] < ll[0]    # with 2D it could have paired the 2 and did not


def test_from_view_refuses_a_view_of_other_rules_or_a_finished_game():
    game = Game(Rules(num_players=2), seed=1)
    view = game.view(game.current_player)
    hidden = sample_hidden(view, np.random.default_rng(0), 2)
    with pytest.raises(ValueError, match="not the view's"):
        from_view(view, hidden, [0, 1], rules=Rules(num_players=2, target=61))
    with pytest.raises(ValueError, match="2 deals for 3 seeds"):
        from_view(view, hidden, [0, 1, 2])


@pytest.mark.parametrize("model", ["greedy", "ev"])
def test_the_throws_likelihood_is_the_softmax_in_plain_python(model):
    import itertools
    import math

    from cribenv.discard import average_tables
    from cribenv.scoring import HAND4_POINTS, TWO_POINTS

    hand4, crib2 = (HAND4_POINTS, TWO_POINTS) if model == "greedy" else average_tables()

    checked = 0
    for case in range(60):
        game = random_position(Rules(num_players=2), 700 + case)
        view = game.view(game.current_player)
        other = 1 - view.seat
        hidden = sample_hidden(view, np.random.default_rng(case), 3)
        vg = from_view(view, hidden, [0, 1, 2])
        got = discard_likelihood(vg, view.seat, temperature=1.5, floor=0.1, model=model)
        for r in range(3):
            thrown = bits(hidden.discards[r, other])
            if len(thrown) < 2:
                assert got[r] == 0.0
                continue
            played = [c for s, c in view.played if s == other]
            dealt = sorted(bits(hidden.hands[r, other]) + played + thrown)
            own = rules_side(view.dealer) == rules_side(other)
            values, actual = [], None
            for t in itertools.combinations(dealt, 2):
                keep = [c for c in dealt if c not in t]
                rk = [c >> 2 for c in keep]
                pts = float(hand4[((rk[0] * 13 + rk[1]) * 13 + rk[2]) * 13 + rk[3]])
                pts += 4.0 if len({c & 3 for c in keep}) == 1 else 0.0
                tp = float(crib2[(t[0] >> 2) * 13 + (t[1] >> 2)])
                values.append((pts + (tp if own else -tp)) / 1.5)
                if sorted(t) == sorted(thrown):
                    actual = len(values) - 1
            top = max(values)
            z = sum(math.exp(v - top) for v in values)
            p = math.exp(values[actual] - top) / z
            assert got[r] == pytest.approx(math.log(0.9 * p + 0.1 / 15), rel=1e-12)
            checked += 1
    assert checked > 30


def rules_side(seat: int) -> int:
    return seat % 2
