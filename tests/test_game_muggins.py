"""Muggins in the play (``Rules(muggins=True)``, human play only): a seat states what the card
it lays pegs with ``Game.step(card, claim=points)``; what it overlooks goes to the next seat's
side, which calls Muggins, and so does the excess of an over-claim (a false count); a claim is
never refused for its value, so claiming reveals nothing. With ``Game.hold_show`` the show
waits after the play for the count. Hand-computed cases, then an invariant over random
2/3/4-player hands."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cribenv import cards as C
from cribenv.game import (
    Deal,
    Game,
    GameOver,
    HandEnd,
    IllegalActionError,
    Muggins,
    Phase,
    Played,
    Rules,
    SeriesEnd,
    event_to_dict,
)

P = C.parse
# Seat 0 deals. Seat 1 keeps 5H 5C 9S 8S (throws QH QD), seat 0 keeps 5D KC 9H 8H (throws
# JH JD); the starter 2D is no Jack. The play, worked by hand:
#   seat 1 5H  count 5
#   seat 0 5D  count 10  a pair: 2
#   seat 1 5C  count 15  pair royal 6 + fifteen 2: 8
#   seat 0 KC  count 25  nothing; seat 1 (9S 8S) and seat 0 (9H 8H) cannot go on: go 1 to seat 0
#   seat 1 9S  count 9
#   seat 0 9H  count 18  a pair: 2
#   seat 1 8S  count 26  nothing; seat 0 (8H) cannot go on, seat 1 is out: go 1 to seat 1
#   seat 0 8H  count 8   last card: 1 to seat 0
DEAL = Deal(0, ["5D KC 9H 8H JH JD", "5H 5C 9S 8S QH QD"], "2D")
DISCARDS = ["QH", "QD", "JH", "JD"]


def dealt(**rules) -> Game:
    game = Game(Rules(muggins=True, **rules), seed=0, deals=[DEAL])
    for card in DISCARDS:
        game.step(card)
    assert game.phase is Phase.PLAY and game.current_player == 1 and game.scores == [0, 0]
    return game


def muggins_calls(events) -> list[Muggins]:
    return [e for e in events if type(e) is Muggins]


def test_a_claim_short_by_n_gives_n_to_the_next_side():
    game = dealt()
    game.step("5H")
    events = game.step("5D", claim=1)                  # a pair (2) counted as 1
    assert muggins_calls(events) == [Muggins(0, False, 1, 2, 1, P("5D"))]
    assert game.scores == [1, 1]
    events = game.step("5C", claim=6)                  # pair royal and fifteen (8) as 6
    assert muggins_calls(events) == [Muggins(1, False, 6, 8, 0, P("5C"))]
    assert game.scores == [1 + 2, 1 + 6]
    assert game.peg_claims == [(5, 1), (6, 6)]          # moves 5 and 6 (after 4 discards, 5H)


def test_an_exact_claim_gives_nothing_and_no_claim_counts_in_full():
    game = dealt()
    game.step("5H")
    assert not muggins_calls(game.step("5D", claim=2))
    assert game.scores == [2, 0]
    assert not muggins_calls(game.step("5C"))          # an agent's card: counted in full
    assert game.scores == [2, 8]


def test_the_go_and_the_last_card_are_pegged_as_they_fall_due():
    game = dealt()
    for card, claim in (("5H", 0), ("5D", 2), ("5C", 8)):
        game.step(card, claim=claim)
    events = game.step("KC", claim=0)                  # KC pegs nothing; the go follows
    assert not muggins_calls(events)
    assert SeriesEnd(0, 1, "go") in events and game.scores == [2 + 1, 8]
    for card in ("9S", "9H", "8S"):
        game.step(card, claim=0)                       # 9H's pair (2) overlooked: to seat 1
    assert game.scores == [3, 8 + 2 + 1]                # and seat 1's go after 8S
    events = game.step("8H", claim=0)
    assert events[:2] == [Played(0, P("8H"), 8, 0, (P("8H"),)), SeriesEnd(0, 1, "last card")]
    # last card, then seat 0's hand (5D+KC, 5D+8H+2D: 4) and crib (QQ, JJ, nobs JD: 5)
    assert game.scores[0] == 3 + 1 + 4 + 5


def test_a_claim_that_is_not_a_count_is_refused_and_the_game_unchanged():
    game = dealt()
    game.step("5H")
    before = (game.to_json(), list(game.events), [list(h) for h in game.hands], game.count)
    for claim, message in ((-1, "claims -1 for 5D: a claim is the points the card pegs"),
                           (30, "claims 30 for 5D"),
                           (True, "claims True"), ("2", "claims '2'"), (2.0, "claims 2.0")):
        with pytest.raises(IllegalActionError, match=message):
            game.step("5D", claim=claim)
        assert (game.to_json(), list(game.events), [list(h) for h in game.hands],
                game.count) == before
    with pytest.raises(IllegalActionError, match="cannot lay QS"):   # the card is checked first
        game.step("QS", claim=9)
    game.step("5D", claim=2)                            # the right count is taken
    assert game.scores == [2, 0] and game.peg_claims == [(5, 2)]


def test_an_over_claim_scores_the_true_count_and_gives_the_excess_away():
    game = dealt()
    game.step("5H")
    events = game.step("5D", claim=5)                  # a pair (2) claimed as 5: 3 too many
    assert muggins_calls(events) == [Muggins(0, False, 5, 2, 1, P("5D"))]
    assert game.scores == [2, 3]
    events = game.step("5C", claim=8)                  # right: no call
    assert not muggins_calls(events) and game.scores == [2, 3 + 8]
    events = game.step("KC", claim=4)                  # KC pegs nothing: all 4 go over
    assert muggins_calls(events) == [Muggins(0, False, 4, 0, 1, P("KC"))]
    assert game.scores == [2 + 1, 11 + 4]               # and seat 0's go after KC


def test_the_show_waits_for_the_count_with_hold_show():
    game = dealt()
    game.hold_show = True
    for card in ("5H", "5D", "5C", "KC", "9S", "9H", "8S", "8H"):
        game.step(card)
    assert game.show_due and game.current_player is None and game.legal_actions() == []
    assert game.scores == [2 + 1 + 2 + 1, 8 + 1]        # the play is pegged, the show is not
    with pytest.raises(IllegalActionError, match="the show waits for the count"):
        game.step("QS")
    game.claim(0, 4)                                   # seat 0's hand (5D+KC, 5D+8H+2D: 4)
    game.claim(0, 7, crib=True)                        # its crib (5) claimed as 7: 2 over
    game.claim(1, 2)                                   # seat 1's hand (5H 5C 9S 8S 2D: 6)
    game.count_show()
    assert not game.show_due and game.hand_number == 1 and game.current_player is not None
    assert muggins_calls(game.events) == [Muggins(1, False, 2, 6, 0, None),
                                          Muggins(0, True, 7, 5, 1, None)]
    assert game.scores == [6 + 4 + 4 + 5, 9 + 2 + 2]
    with pytest.raises(ValueError, match="no show waits"):
        game.count_show()
    again = Game.from_record(game.to_record())          # the record replays the wait too
    assert again.events == game.events and again.hold_show


def test_claims_only_in_the_play_of_a_muggins_game():
    game = Game(Rules(muggins=True), seed=0, deals=[DEAL])
    with pytest.raises(IllegalActionError, match="cannot claim points for a discard"):
        game.step("QH", claim=0)
    assert game.actions == [] and game.current_player == 1
    plain = Game(Rules(), seed=0, deals=[DEAL])
    for card in DISCARDS + ["5H"]:
        plain.step(card)
    with pytest.raises(IllegalActionError, match=r"Rules\(muggins=True\)"):
        plain.step("5D", claim=2)
    assert plain.scores == [0, 0] and len(plain.actions) == 5


def test_the_caller_pegs_out_with_a_muggins_call():
    game = dealt(target=5)
    game.step("5H")
    game.step("5D", claim=2)
    events = game.step("5C", claim=2)                  # 8 counted as 2: seat 0 takes 6, wins
    assert events[1:] == [Muggins(1, False, 2, 8, 0, P("5C")), HandEnd(0),
                          GameOver(0, (8, 2), 1)]
    assert game.is_over and game.winner == 0 and game.current_player is None


def test_the_claimer_pegs_out_first_and_the_caller_gets_nothing():
    game = dealt(target=5)
    game.step("5H")
    game.step("5D", claim=2)
    events = game.step("5C", claim=5)                  # seat 1 scores its 5 first: out
    assert events[-1] == GameOver(1, (2, 5), 1) and game.scores == [2, 5]
    assert muggins_calls(events) == [Muggins(1, False, 5, 8, 0, P("5C"))]


def test_records_replay_the_claims_move_by_move():
    game = dealt()
    game.claim(0, 3)                                   # seat 0's hand (4) counted as 3
    for card, claim in (("5H", 0), ("5D", 1), ("5C", None), ("KC", 0), ("9S", 0),
                        ("9H", 2), ("8S", 0)):
        game.step(card, claim=claim)
    middle = game.clone()
    game.step("8H", claim=0)
    record = game.to_record()
    assert record["peg_claims"] == [[4, 0], [5, 1], [7, 0], [8, 0], [9, 2], [10, 0], [11, 0]]
    again = Game.from_json(game.to_json())
    assert again.events == game.events and again.scores == game.scores
    assert again.peg_claims == game.peg_claims and again.claims == game.claims
    at = Game.from_record(record, moves=len(game.actions) - 1)   # the game one move earlier
    assert at.events == middle.events and at.scores == middle.scores
    assert event_to_dict(muggins_calls(game.events)[0])["card"] == "5D"
    assert event_to_dict(muggins_calls(game.events)[-1])["card"] is None   # the hand's show
    bad = dict(record, peg_claims=[[5, 30]])           # no card pegs 30
    with pytest.raises(ValueError, match="record action 5 .5D. is illegal: .*claims 30"):
        Game.from_record(bad)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 4]))
def test_claims_move_points_between_sides_and_lose_none(seed, num_players):
    """With random claims around what each card pegs, one hand loses no point it would score
    in full: each side's score is its full-count score less what it overlooked plus what it
    took by Muggins (overlooked points, or a false count's excess, which adds points)."""
    rules = Rules(num_players=num_players, muggins=True, target=1000)
    game, plain = Game(rules, seed=seed, max_hands=1), Game(rules, seed=seed, max_hands=1)
    rng = random.Random(seed)
    while not game.is_over:
        card = rng.choice(game.legal_actions())
        claim = None
        if game.phase is Phase.PLAY:
            pegs = game.clone().step(card)[0].points
            claim = rng.choice([None, rng.randint(0, pegs), rng.randint(0, pegs + 3)])
        game.step(card, claim=claim)
        plain.step(card)
    side = rules.side_of
    want = list(plain.scores)
    excess = 0
    for call in muggins_calls(game.events):
        assert call.caller == (call.seat + 1) % num_players
        assert call.scored + call.taken == max(call.points, call.claimed)
        want[side(call.seat)] += call.scored - call.points
        want[side(call.caller)] += call.taken
        excess += max(0, call.claimed - call.points)
    assert game.scores == want
    assert sum(game.scores) == sum(plain.scores) + excess
