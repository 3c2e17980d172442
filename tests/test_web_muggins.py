"""Muggins (``Rules(muggins=True)``, human play only): a person's claim of their own show, the
overlooked points (or a false count's excess) to the next side; shows nobody claims count in
full; at the web table the person lays a card, then claims, and counts after the play with the
crib turned; records replay it."""

from __future__ import annotations

import pytest

from cribenv import cards as C
from cribenv.game import Deal, Game, Muggins, Rules, ShowScored
from webtable.table import MoveError, Table

# seat 0 deals and keeps 5C 5D 5H JS (29 with the 5S starter); seat 1 keeps AH 2H 3H 7D
# (fifteen 5S+7D+2H+AH? 5+7+2+1 = 15: 2; 5S+7D+3H = 15: 2; run A-2-3: 3; 7 points)
DEAL = Deal(0, ["5C 5D 5H JS 2C 3C", "AH 2H 3H 7D 8D KS"], "5S")
MOVES = "8D KS 2C 3C AH 5C 2H 5D 3H 5H 7D JS".split()


def play(game: Game, moves=MOVES) -> None:
    for card in moves:
        game.step(card)


def pegging_points(game: Game) -> list[int]:
    """Each seat's points in the play (the deal above: go and last card included)."""
    pts = [0, 0]
    for ev in game.events:
        if type(ev).__name__ in ("Played", "SeriesEnd"):
            pts[ev.seat] += ev.points
    return pts


def test_shows_nobody_claims_count_in_full():
    plain, muggins = Game(Rules(), seed=0, deals=[DEAL]), Game(Rules(muggins=True), seed=0,
                                                               deals=[DEAL])
    play(plain)
    play(muggins)
    assert plain.scores == muggins.scores
    assert not [e for e in muggins.events if type(e) is Muggins]


def test_an_overlooked_point_goes_to_the_opponent():
    game = Game(Rules(muggins=True), seed=0, deals=[DEAL])
    game.claim(0, 27)                 # the 29 hand counted as 27
    game.claim(0, 4, crib=True)       # crib 8D KS 2C 3C + 5S: 15-2 x2 (5+KS, 5+8D+2C), ...
    play(game)
    shows = {(e.seat, e.is_crib): e.points for e in game.events if type(e) is ShowScored}
    peg = pegging_points(game)
    crib = shows[(0, True)]
    muggins = [e for e in game.events if type(e) is Muggins]
    assert shows[(0, False)] == 29 and shows[(1, False)] == 7
    assert muggins[0] == Muggins(0, False, 27, 29, 1)
    crib_claim = min(4, crib)
    assert game.scores == [peg[0] + 27 + crib_claim,
                           peg[1] + 7 + 2 + (crib - crib_claim)]
    # a claim over the true count scores the true count, and the excess goes to the caller
    over = Game(Rules(muggins=True), seed=0, deals=[DEAL])
    over.claim(0, 29)                 # right: no call
    over.claim(1, 12)                 # 7 claimed as 12: seat 0 takes the 5 over
    play(over)
    assert [e for e in over.events if type(e) is Muggins] == [Muggins(1, False, 12, 7, 0)]
    assert over.scores == [peg[0] + 29 + crib + 5, peg[1] + 7]


def test_claims_are_checked_and_recorded():
    game = Game(Rules(muggins=True), seed=0, deals=[DEAL])
    with pytest.raises(ValueError, match="0..29"):
        game.claim(0, 30)
    with pytest.raises(ValueError, match="does not deal"):
        game.claim(1, 3, crib=True)
    with pytest.raises(ValueError, match="Rules\\(muggins=True\\)"):
        Game(Rules(), seed=0).claim(0, 3)
    game.claim(1, 5)
    play(game)
    again = Game.from_json(game.to_json())
    assert again.scores == game.scores and again.claims == game.claims == [(0, 1, False, 5)]
    assert game.clone().claims == game.claims


def _to_the_count(table: Table) -> None:
    while table.stage != "count":
        if table.stage in ("cut", "show"):
            table.act(table.seq, action="next")
        elif table.stage == "discard":
            need = table.need - len(table.game.discards[table.human])
            table.act(table.seq, cards=[C.to_str(c) for c in table.game.legal_actions()[:need]])
        else:   # every card in the play comes with what it pegs: here, in full
            assert table.claims_due == ["play"]
            card = table.game.legal_actions()[0]
            pegs = table.game.clone().step(card)[0].points
            table.act(table.seq, cards=[C.to_str(card)], claims={"play": pegs})


def test_the_web_table_asks_for_the_count_after_the_play():
    table = Table(Rules(muggins=True), bot="greedy", seed=5)
    _to_the_count(table)
    game = table.game
    assert game.show_due and not any(game.hands) and len(game.crib) == 4
    assert table.claims_due == (["hand", "crib"] if game.dealer == table.human else ["hand"])
    before = (table.seq, list(game.actions), list(game.events))
    for claims, message in (({"hand": "8"}, "count your hand: a whole number 0..29, got '8'"),
                            ({"hand": 30}, "got 30"), ({"play": 0}, "nothing to claim for play"),
                            ({}, "count your hand")):
        with pytest.raises(MoveError, match=message):
            table.act(table.seq, action="count", claims={**claims, **(
                {"crib": 0} if "crib" in table.claims_due else {})})
    with pytest.raises(MoveError, match="not your turn"):
        table.act(table.seq, cards=["AS"])
    assert (table.seq, list(game.actions), list(game.events)) == before
    claims = {what: 0 for what in table.claims_due}   # the person counts nothing at all
    table.act(table.seq, action="count", claims=claims)
    assert table.stage in ("show", "over") and not game.show_due
    assert not [e for e in game.events if type(e) is Muggins and e.card is not None]
    muggins = [e for e in game.events if type(e) is Muggins]
    shows = [e for e in game.events if type(e) is ShowScored and e.seat == table.human]
    # every point of the person's shows went to the bot, each with its Muggins event
    assert [(m.seat, m.is_crib, m.claimed, m.points) for m in muggins] == \
        [(e.seat, e.is_crib, 0, e.points) for e in shows if e.points]


def test_a_claim_at_the_table_is_final_and_an_over_claim_costs_the_excess():
    """No claim is refused for its value (a refusal would tell the count): 29 for any card
    is taken, scores what the card pegs and gives the rest to the bot."""
    table = Table(Rules(muggins=True), bot="greedy", seed=5)
    while table.stage != "play":
        table.act(table.seq, action="next") if table.stage == "cut" else table.act(
            table.seq, cards=[C.to_str(c) for c in table.game.legal_actions()[:2]])
    card = table.game.legal_actions()[0]
    pegs = table.game.clone().step(card)[0].points
    scores = list(table.game.scores)
    table.act(table.seq, cards=[C.to_str(card)], claims={"play": 29})
    call = next(e for e in table.game.events if type(e) is Muggins)
    assert (call.seat, call.claimed, call.points, call.taken) == (0, 29, pegs, 29 - pegs)
    assert table.game.scores[0] >= scores[0] + pegs   # (the bots may have pegged since)


def test_a_muggins_game_replays_with_its_claims():
    """A recorded Muggins game (claims in the play and in the show) steps through the replay
    viewer with the claims applied: every move as the engine replays it, the end as played."""
    from webtable.replay import Replay

    table = Table(Rules(muggins=True, target=61), bot="greedy", seed=3)
    while table.stage != "over":
        if table.stage in ("cut", "show"):
            table.act(table.seq, action="next")
        elif table.stage == "discard":
            need = table.need - len(table.game.discards[table.human])
            table.act(table.seq, cards=[C.to_str(c) for c in table.game.legal_actions()[:need]])
        elif table.stage == "count":   # nothing claimed at all: the bot takes every point
            table.act(table.seq, action="count", claims={w: 0 for w in table.claims_due})
        else:
            table.act(table.seq, cards=[C.to_str(table.game.legal_actions()[0])],
                      claims={"play": 0})
    game = table.game
    assert any(type(e) is Muggins and e.card is not None for e in game.events)
    record = game.to_record()
    replay = Replay.from_record(record)
    assert replay.total == len(game.actions)
    assert replay.game_at(replay.total).events == game.events
    for h, start in enumerate(replay.hand_starts):   # the move at which each hand begins
        assert Game.from_record(record, moves=start).hand_number == h
        if h:
            assert Game.from_record(record, moves=start - 1).hand_number == h - 1
    for step in range(0, replay.total, 7):
        at = replay.game_at(step)
        assert len(at.actions) == step
        assert at.events == Game.from_record(record, moves=step).events
    with pytest.raises(ValueError):   # the same moves without the claims: another game
        Game.from_record(dict(record, claims=[], peg_claims=[]))
