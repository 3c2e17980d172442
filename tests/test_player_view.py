"""What a :class:`PlayerView` answers for bots (sides, crib, scores, unseen cards, the series),
checked on hand-made positions with hand-computed answers, and against the raw fields on
random games."""

from __future__ import annotations

import random

import pytest

from cribenv import cards as C
from cribenv.game import Deal, Game, Phase, Rules


def two_player_play() -> Game:
    """Seat 0 deals; seat 1 throws 8D KS, seat 0 throws 10S 6C; starter 5D; then A, 4, 3, 5
    are laid (seat 0's 5H makes the run 3-4-5: 3 points)."""
    deal = Deal(dealer=0, hands=["5H 5S JD 4C 6C 10S", "AH 2H 3H 7D 8D KS"], starter="5D")
    game = Game(Rules(), seed=0, deals=[deal])
    for card in C.parse_many("8D KS 10S 6C AH 4C 3H 5H"):
        game.step(card)
    return game


def test_two_player_view_in_the_play():
    game = two_player_play()
    assert game.phase is Phase.PLAY and game.current_player == 1 and game.scores == [3, 0]
    pone, dealer = game.view(1), game.view(0)
    assert (pone.side, pone.is_dealer, pone.crib_is_own) == (1, False, False)
    assert (dealer.side, dealer.is_dealer, dealer.crib_is_own) == (0, True, True)
    assert pone.next_seat() == 0 and dealer.next_seat() == 1 and dealer.next_seat(2) == 0
    assert pone.discards_per_player == 2
    assert (pone.own_score, pone.other_scores, pone.points_to_win) == (0, [3], 121)
    assert (dealer.own_score, dealer.other_scores, dealer.points_to_win) == (3, [0], 118)
    assert pone.series_cards == C.parse_many("AH 4C 3H 5H")
    assert pone.series_ranks == (0, 3, 2, 4)
    assert pone.series == [(1, C.parse("AH")), (0, C.parse("4C")), (1, C.parse("3H")),
                           (0, C.parse("5H"))]
    assert pone.own_cards == sorted(C.parse_many("2H 7D 8D KS"))
    # seen by the pone: 2H 7D (hand), 8D KS (discards), 5D (starter), AH 4C 3H 5H (laid)
    #            A  2  3  4  5  6  7  8  9  T  J  Q  K
    expected = [3, 3, 3, 3, 2, 4, 3, 3, 4, 4, 4, 4, 3]
    assert pone.unseen_rank_counts() == expected
    assert len(pone.unseen_cards()) == 43 == sum(expected)
    assert C.parse("5S") in pone.unseen_cards() and C.parse("5H") not in pone.unseen_cards()
    # the dealer saw 5S JD (hand), 10S 6C (discards), 5D, and the four cards laid
    assert dealer.unseen_rank_counts() == [3, 4, 3, 3, 1, 3, 4, 4, 4, 3, 3, 4, 4]


def test_a_new_series_starts_empty():
    game = two_player_play()
    game.step(C.parse("2H"))   # count 15: fifteen 2 and the run A-2-3-4-5, 5
    assert game.scores == [3, 7]
    view = game.view(0)
    assert view.series_ranks == (0, 3, 2, 4, 1) and view.count == 15
    # seat 0 (5S JD left) lays JD: 25; seat 1 lays 7D: 32 is too many, Go; seat 0 lays 5S: 30
    for card in C.parse_many("JD 5S"):
        game.step(card)
    assert game.scores == [4, 7]          # the go point to seat 0
    view = game.view(1)
    assert view.series_cards == []       # the go reset the count; seat 1 leads again
    assert view.series_ranks == () and view.count == 0 and view.hand == [C.parse("7D")]


def test_discard_view_own_cards_are_the_cards_dealt():
    deal = Deal(dealer=0, hands=["5H 5S JD 4C 6C 10S", "AH 2H 3H 7D 8D KS"], starter="5D")
    game = Game(Rules(), seed=0, deals=[deal])
    game.step(C.parse("8D"))
    view = game.view(1)
    assert view.own_cards == sorted(C.parse_many("AH 2H 3H 7D 8D KS"))
    assert view.hand == sorted(C.parse_many("AH 2H 3H 7D KS"))
    assert len(view.unseen_cards()) == 46 and view.unseen_rank_counts()[12] == 3


def test_four_player_partnerships():
    hands = ["AH 2H 3H 4H 5H", "AS 2S 3S 4S 5S", "AD 2D 3D 4D 5D", "AC 2C 3C 4C 5C"]
    game = Game(Rules(num_players=4), seed=0, deals=[Deal(dealer=3, hands=hands,
                                                          starter="KS")])
    views = [game.view(s) for s in range(4)]
    assert [v.side for v in views] == [0, 1, 0, 1]
    assert [v.crib_is_own for v in views] == [False, True, False, True]
    assert [v.is_dealer for v in views] == [False, False, False, True]
    assert views[0].discards_per_player == 1 and views[0].num_sides == 2
    assert views[2].next_seat(3) == 1
    assert views[0].unseen_rank_counts() == [3, 3, 3, 3, 3] + [4] * 8


def test_three_player_sides_and_scores():
    hands = ["AH 2H 3H 4H 5H", "AS 2S 3S 4S 5S", "AD 2D 3D 4D 5D"]
    game = Game(Rules(num_players=3), seed=0,
                deals=[Deal(dealer=2, hands=hands, starter="JC", crib_card="KC")])
    for card in C.parse_many("5H 5S 5D"):
        game.step(card)
    assert game.scores == [0, 0, 2]           # his heels for the dealer
    view = game.view(0)
    assert (view.side, view.crib_is_own, view.discards_per_player) == (0, False, 1)
    assert (view.own_score, view.other_scores, view.points_to_win) == (0, [0, 2], 121)
    assert game.view(2).crib_is_own and game.view(2).other_scores == [0, 0]
    # seat 0 saw its 5 cards and the starter JC; the crib card KC stays unseen
    assert view.unseen_rank_counts() == [3, 3, 3, 3, 3] + [4] * 5 + [3, 4, 4]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_answers_agree_with_the_fields_on_random_games(num_players):
    rules = Rules(num_players=num_players)
    for seed in range(20):
        game = Game(rules, seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(60)):
            if game.current_player is None:
                break
            game.step(rng.choice(game.legal_actions()))
        for seat in range(num_players):
            view = game.view(seat)
            unseen = view.unseen_cards()
            hidden = (set(range(52)) - set(game.hands[seat]) - set(game.discards[seat])
                      - {c for _, c in game.played}
                      - ({game.starter} if game.starter is not None else set()))
            assert set(unseen) == hidden
            assert view.unseen_rank_counts() == [sum(1 for c in unseen if c >> 2 == r)
                                                 for r in range(13)]
            assert view.side == rules.side_of(seat)
            assert view.crib_is_own == (rules.side_of(game.dealer) == rules.side_of(seat))
            assert view.own_score + sum(view.other_scores) == sum(game.scores)
            assert view.series_cards == game.series
