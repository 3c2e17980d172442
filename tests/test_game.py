"""Rules engine: hand-computed cases and the RULES.md worked example, event by event."""

from __future__ import annotations

import pytest

from cribenv import cards as C
from cribenv.game import (
    Cut,
    Deal,
    Dealt,
    Discarded,
    Game,
    GameOver,
    Go,
    HandEnd,
    IllegalActionError,
    Phase,
    Played,
    Rules,
    SeriesEnd,
    ShowScored,
    StarterTurned,
)

P = C.parse
PM = C.parse_many


def play_cards(game: Game, *cards: str) -> list:
    events = []
    for card in cards:
        events += game.step(card)
    return events


def worked_example_game(**rules_kw) -> Game:
    rules = Rules(num_players=2, **rules_kw)
    alice = "5S 4S 2S 8D 6H 8C".split()
    bob = "TS 6D JH 4H KC 7C".split()
    return Game(rules, seed=1, deals=[Deal(dealer=0, hands=[alice, bob], starter="5H")])


def test_worked_example_event_by_event():
    game = worked_example_game()
    assert game.dealer == 0 and game.phase is Phase.DISCARD
    assert game.current_player == 1  # Bob (pone) throws first
    assert game.step("TS") == [Discarded(1, P("TS"))]
    assert game.current_player == 1  # the same seat acts twice in a row
    game.step("KC")
    assert game.current_player == 0
    game.step("8D")
    events = game.step("8C")
    assert events == [Discarded(0, P("8C")), StarterTurned(P("5H"), 0, 0)]
    assert game.phase is Phase.PLAY and game.current_player == 1

    def played(seat, card, count, points):
        ev = game.step(card)
        assert ev[0] == Played(seat, P(card), count, points, ev[0].series), ev
        return ev

    played(1, "JH", 10, 0)
    played(0, "5S", 15, 2)
    played(1, "7C", 22, 0)
    ev = played(0, "6H", 28, 3)
    assert ev[1:] == [Go(1, 28)]  # Bob's Go is applied by the engine
    assert game.current_player == 0 and game.legal_actions() == [P("2S")]
    ev = played(0, "2S", 30, 0)
    assert ev[1:] == [Go(0, 30), SeriesEnd(0, 1, "go")]
    assert game.current_player == 1 and game.count == 0
    played(1, "6D", 6, 0)
    played(0, "4S", 10, 0)
    ev = game.step("4H")
    assert ev[0] == Played(1, P("4H"), 14, 2, ev[0].series)
    assert ev[1] == SeriesEnd(1, 1, "last card")
    shows = [e for e in ev if isinstance(e, ShowScored)]
    assert [(s.seat, s.is_crib, s.points) for s in shows] == [(1, False, 9), (0, False, 12),
                                                              (0, True, 6)]
    assert sorted(shows[0].cards) == sorted(PM("6D JH 4H 7C"))
    assert sorted(shows[2].cards) == sorted(PM("TS 8D KC 8C"))
    assert isinstance(ev[-2], HandEnd)
    assert isinstance(ev[-1], Dealt) and ev[-1].dealer == 1  # the deal passes left
    assert game.scores == [6 + 12 + 6, 3 + 9]
    # pegging totals: Alice 6, Bob 3
    pegs = [0, 0]
    for e in game.events:
        if isinstance(e, Played):
            pegs[e.seat] += e.points
        elif isinstance(e, SeriesEnd):
            pegs[e.seat] += e.points
    assert pegs == [6, 3]
    assert shows[1].breakdown.total == 12 and shows[0].breakdown.nobs_points == 1


def test_illegal_actions_leave_game_unchanged():
    game = worked_example_game()
    before = (list(game.actions), len(game.events), [list(h) for h in game.hands])
    with pytest.raises(IllegalActionError, match="not in its hand"):
        game.step("5S")  # Alice's card, Bob to act
    with pytest.raises(IllegalActionError, match="is not a card"):
        game.step("1X")
    assert (list(game.actions), len(game.events), [list(h) for h in game.hands]) == before
    play_cards(game, "TS", "KC", "8D", "8C", "JH", "5S", "7C")
    play_cards(game, "6H")  # count 28; Bob's Go is automatic, Alice holds 4S 2S
    assert game.count == 28
    snapshot = game.to_record()
    with pytest.raises(IllegalActionError, match="past 31"):
        game.step("4S")
    assert game.to_record() == snapshot


def test_his_heels_scores_two_and_can_win():
    deal = Deal(dealer=0, hands=["5S 4S 2S 8D 6H 8C".split(), "TS 6D 9H 4H KC 7C".split()],
                starter="JH")
    game = Game(Rules(), seed=3, deals=[deal])
    ev = play_cards(game, "TS", "KC", "8D", "8C")
    assert StarterTurned(P("JH"), 0, 2) in ev and game.scores == [2, 0]
    # heels winning: dealer at 119 before the cut
    game = Game(Rules(), seed=3, deals=[deal])
    game.scores[0] = 119
    ev = play_cards(game, "TS", "KC", "8D", "8C")
    assert game.phase is Phase.GAME_OVER and game.winner == 0 and game.scores == [121, 0]
    assert isinstance(ev[-1], GameOver) and ev[-1].game_points == 3
    assert game.legal_actions() == [] and game.current_player is None


def test_non_dealer_wins_in_show_before_dealer_counts():
    game = worked_example_game()
    game.scores[:] = [110, 115]  # Bob (pone) pegs 3, then counts 9 first
    ev = play_cards(game, "TS", "KC", "8D", "8C", "JH", "5S", "7C", "6H", "2S", "6D", "4S", "4H")
    shows = [e for e in ev if isinstance(e, ShowScored)]
    assert len(shows) == 1 and shows[0].seat == 1
    assert game.winner == 1 and game.scores == [116, 127]  # recorded uncapped
    assert game.game_points == 1


def test_game_ends_mid_pegging():
    game = worked_example_game()
    game.scores[:] = [119, 50]
    play_cards(game, "TS", "KC", "8D", "8C", "JH")
    ev = game.step("5S")  # fifteen 2 takes Alice to 121
    assert game.winner == 0 and game.scores == [121, 50] and game.game_points == 3
    assert isinstance(ev[-1], GameOver)
    assert not any(isinstance(e, ShowScored) for e in game.events)


@pytest.mark.parametrize("loser,points", [(91, 1), (90, 2), (61, 2), (60, 3)])
def test_skunk_lines(loser, points):
    game = worked_example_game()
    game.scores[:] = [119, loser]
    play_cards(game, "TS", "KC", "8D", "8C", "JH", "5S")
    assert game.winner == 0 and game.game_points == points


@pytest.mark.parametrize("loser,points", [(31, 1), (30, 2), (0, 2)])
def test_short_game_skunk_line(loser, points):
    game = worked_example_game(target=61)
    assert game.rules.skunk_line == 31
    game.scores[:] = [59, loser]
    play_cards(game, "TS", "KC", "8D", "8C", "JH", "5S")
    assert game.winner == 0 and game.game_points == points


def test_must_peg_out_exactly():
    game = worked_example_game(must_peg_out_exactly=True)
    game.scores[:] = [118, 0]
    play_cards(game, "TS", "KC", "8D", "8C", "JH")
    game.step("5S")  # fifteen 2 -> 120: not past the target, scored
    assert game.scores == [120, 0]
    play_cards(game, "7C")
    game.step("6H")  # run 3 -> 123 > 121: not scored
    assert game.scores == [120, 0] and game.winner is None
    ev = game.step("2S")  # go point 1 -> exactly 121
    assert game.winner == 0 and isinstance(ev[-1], GameOver)


def test_31_with_a_pair_scores_four_and_resets():
    # count 21 after T, 5, 6(?); build: pone 8, dealer 7 (15 -> 2), pone 8 ... use a fixed deal
    deal = Deal(dealer=0, hands=["8H 8S 3C 9D KC QC".split(), "7H 8D 8C 2D KD QD".split()],
                starter="AS")
    game = Game(Rules(), seed=0, deals=[deal])
    play_cards(game, "KD", "QD", "KC", "QC")
    # pone: 7H 8D 8C 2D; dealer: 8H 8S 3C 9D
    ev = play_cards(game, "7H")
    ev = game.step("8H")  # 15 for 2
    assert ev[0].points == 2
    ev = game.step("8D")  # 23, pair 2
    assert ev[0].points == 2
    ev = game.step("8S")  # 31, pair royal 6 + 31 for 2 = 8
    assert ev[0].points == 8 and ev[0].count == 31
    assert ev[1] == SeriesEnd(0, 0, "31")
    assert game.count == 0 and game.current_player == 1  # left of the last player leads
    assert game.scores == [10, 2]


def test_several_cards_in_a_row_after_go():
    deal = Deal(dealer=0, hands=["KH QH 2C AD 5S 5C".split(), "KS QS JC 9D 8S 8C".split()],
                starter="3H")
    game = Game(Rules(), seed=0, deals=[deal])
    play_cards(game, "8S", "8C", "5S", "5C")
    # pone: KS QS JC 9D; dealer: KH QH 2C AD
    play_cards(game, "KS", "KH")         # 20, pair 2 for dealer
    ev = game.step("9D")                 # 29: dealer has 2C AD -> 2C fits
    assert game.current_player == 0 and not any(isinstance(e, Go) for e in ev)
    ev = game.step("2C")                 # 31 for 2
    assert ev[0].points == 2 and ev[1] == SeriesEnd(0, 0, "31")
    # pone leads: QS; dealer QH (pair 2), pone JC (30), dealer AD 31 for 2
    play_cards(game, "QS")
    assert game.step("QH")[0].points == 2
    ev = game.step("JC")
    assert ev[0].count == 30
    ev = game.step("AD")
    assert ev[0].points == 2 and ev[0].count == 31
    # all cards out: the 31 was the last card, no extra point
    assert ev[1] == SeriesEnd(0, 0, "31")


def test_one_player_lays_several_cards_after_go_and_runs_count():
    deal = Deal(dealer=0, hands=["AH 2H 3H KC QC JC".split(), "TS TD 9C 9S 8D 8H".split()],
                starter="4D")
    game = Game(Rules(), seed=0, deals=[deal])
    play_cards(game, "8D", "8H", "KC", "QC")
    # pone: TS TD 9C 9S ; dealer: AH 2H 3H JC
    play_cards(game, "TS", "JC")  # 20
    ev = game.step("9C")          # 29; dealer can lay AH or 2H
    assert game.current_player == 0
    ev = game.step("AH")          # 30; pone says go; dealer lays again? 2H -> 32 no. go point
    assert any(isinstance(e, Go) and e.seat == 1 for e in ev)
    assert ev[-1] == SeriesEnd(0, 1, "go")
    # pone leads 9S? pone has TD 9S; dealer 2H 3H
    assert game.current_player == 1
    play_cards(game, "TD")        # 10
    ev = game.step("2H")          # 12
    ev = game.step("9S")          # 21
    ev = game.step("3H")          # 24, last card 1
    assert ev[0].points == 0 and ev[1] == SeriesEnd(0, 1, "last card")


def test_run_made_by_consecutive_cards_of_one_player_after_go():
    # dealer lays 3 cards in a row after pone's go and they form a run with the series
    deal = Deal(dealer=0, hands=["AH 2H 3D KC QC 4C".split(), "TS TD 9C 9S 8D 8H".split()],
                starter="6D")
    game = Game(Rules(), seed=0, deals=[deal])
    play_cards(game, "8D", "8H", "KC", "QC")
    # pone TS TD 9C 9S; dealer AH 2H 3D 4C
    play_cards(game, "TS", "4C", "TD")  # 24
    ev = game.step("3D")   # 27, pone can't play 9 -> go
    assert any(isinstance(e, Go) for e in ev) and game.current_player == 0
    ev = game.step("2H")   # 29: run 4-3-2? series T 4 T 3 2 -> last 3: T,3,2 no
    assert ev[0].points == 0
    ev = game.step("AH")   # 30: last 3 = 3,2,A run of 3 -> 3; then go 1
    assert ev[0].points == 3 and SeriesEnd(0, 1, "go") in ev


def test_pairs_broken_by_another_rank():
    deal = Deal(dealer=0, hands=["5H 6H 7H KC QC JC".split(), "5S 6S 2S TS TD 9D".split()],
                starter="AC")
    game = Game(Rules(), seed=0, deals=[deal])
    play_cards(game, "TS", "TD", "KC", "QC")
    assert game.step("5S")[0].points == 0
    assert game.step("6H")[0].points == 0   # 11
    assert game.step("6S")[0].points == 2   # pair
    assert game.step("5H")[0].points == 0   # 22: 5 after 6 6: no pair
    # runs out of order: 7H would make series 5,6,6,5,7 -> last 3 = 6,5,7 run 3
    assert game.step("2S")[0].points == 0   # 24
    assert game.step("7H")[0].points == 2   # 31 for 2 (last three 5,2,7 no run)


def three_player_game() -> Game:
    hands = ["AH 2H 3H 4H 5H".split(), "AS 2S 3S 4S 5S".split(), "AD 2D 3D 4D 5D".split()]
    return Game(Rules(num_players=3), seed=0,
                deals=[Deal(dealer=0, hands=hands, starter="KC", crib_card="KD")])


def test_three_players_crib_card_and_rotation():
    game = three_player_game()
    assert game.crib == [P("KD")]
    assert game.current_player == 1
    ev = play_cards(game, "5S", "5D", "5H")
    assert [e.seat for e in ev if isinstance(e, Discarded)] == [1, 2, 0]
    assert len(game.crib) == 4 and game.phase is Phase.PLAY and game.current_player == 1
    assert all(len(h) == 4 for h in game.hands)


def test_go_rotation_with_three_players():
    hands = ["TH JH QH KH 5C".split(), "TS JS QS KS 5S".split(), "9D 8D 7D 6D 5D".split()]
    game = Game(Rules(num_players=3), seed=0,
                deals=[Deal(dealer=0, hands=hands, starter="AC", crib_card="AD")])
    play_cards(game, "5S", "5D", "5C")
    # seat1 leads TS(10), seat2 9D(19), seat0 TH(29): seats 1 and 2 say go, seat 0 cannot play
    play_cards(game, "TS", "9D")
    ev = game.step("TH")
    gos = [e.seat for e in ev if isinstance(e, Go)]
    assert gos == [1, 2, 0]
    assert SeriesEnd(0, 1, "go") in ev
    assert game.current_player == 1  # left of the last player leads


def test_four_player_partners_share_score():
    hands = ["5H 6H 7H 8H KC".split(), "5S 6S 7S 8S KS".split(), "5D 6D 7D 8D KD".split(),
             "5C 6C 7C 8C KH".split()]
    game = Game(Rules(num_players=4), seed=0, deals=[Deal(dealer=3, hands=hands, starter="2C")])
    assert game.current_player == 0 and len(game.scores) == 2
    play_cards(game, "KC", "KS", "KD", "KH")
    assert game.current_player == 0
    game.step("7H")                 # 7
    ev = game.step("8S")            # 15 for seat 1 -> side 1
    assert ev[0].points == 2 and game.scores == [0, 2]
    ev = game.step("6D")            # 21, run 6-7-8 for seat 2 -> side 0
    assert ev[0].points == 3 and game.scores == [3, 2]
    assert game.side_of(2) == 0 and game.side_of(3) == 1


def test_cut_for_first_deal_lowest_deals():
    for seed in range(20):
        game = Game(Rules(num_players=3), seed=seed)
        cut = game.events[0]
        assert isinstance(cut, Cut)
        last = cut.rounds[-1]
        ranks = {s: C.rank(c) for s, c in enumerate(last) if c is not None}
        assert cut.dealer == min(ranks, key=ranks.get)
        assert sorted(ranks.values()).count(min(ranks.values())) == 1
        assert game.dealer == cut.dealer


def test_deal_rotates_left_and_validation():
    with pytest.raises(ValueError, match="needs 2 hands"):
        Game(Rules(), deals=[Deal(0, [["5H"] * 6], "5S")])
    with pytest.raises(ValueError, match="twice"):
        Game(Rules(), deals=[Deal(0, ["5H 6H 7H 8H 9H TH".split(), "5H 2S 3S 4S 6S 7S".split()],
                                  "KD")])
    with pytest.raises(ValueError, match="num_players"):
        Rules(num_players=5)
    with pytest.raises(ValueError, match="first_dealer"):
        Game(Rules(), first_dealer=2)
    with pytest.raises(ValueError, match="crib_card"):
        Game(Rules(num_players=3), deals=[Deal(0, [["AH"] * 5] * 3, "KD")])


def test_record_roundtrip_and_clone():
    import random

    game = Game(Rules(num_players=3, target=61), seed=7)
    rng = random.Random(1)
    for _ in range(40):
        game.step(rng.choice(game.legal_actions()))
    clone = game.clone()
    replay = Game.from_json(game.to_json())
    assert replay.events == game.events and replay.scores == game.scores
    while not clone.is_over:
        clone.step(rng.choice(clone.legal_actions()))
    assert len(game.actions) == 40  # the original was not touched by the clone
    with pytest.raises(ValueError, match="not a cribenv game record"):
        Game.from_record({"format": "x"})
    bad = game.to_record()
    bad["actions"][3] = "ZZ"
    with pytest.raises(ValueError, match="record action 3"):
        Game.from_record(bad)


def test_view_hides_other_hands():
    game = worked_example_game()
    view = game.view(1)
    assert sorted(view.hand) == sorted(PM("TS 6D JH 4H KC 7C"))
    assert view.legal == sorted(view.hand) and game.view(0).legal == []
    play_cards(game, "TS", "KC")
    assert game.view(0).discards == [] and game.view(0).discards_made == [0, 2]
    assert game.view(1).discards == sorted(PM("TS KC"))


def test_go_rotation_with_four_players():
    hands = ["TH JH QH KH 5C".split(), "TS JS QS KS 5S".split(), "TD JD QD KD 5D".split(),
             "9C 8C 7C 6C 5H".split()]
    game = Game(Rules(num_players=4), seed=0, deals=[Deal(dealer=3, hands=hands, starter="AC")])
    play_cards(game, "5C", "5S", "5D", "5H")
    assert game.current_player == 0
    play_cards(game, "TH")
    assert game.step("TS")[0].points == 2            # pair, side 1
    ev = game.step("TD")                             # 30: pair royal 6, side 0
    assert ev[0].points == 6
    assert [e.seat for e in ev if isinstance(e, Go)] == [3, 0, 1, 2]
    assert SeriesEnd(2, 1, "go") in ev
    assert game.scores == [7, 2]                     # partners share the score
    assert game.current_player == 3                  # left of the last player leads
