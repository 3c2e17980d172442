"""The review of a finished game (``GET /game/ID/review``, :mod:`webtable.review`): the cost
of each decision of the person against the strongest agent's, on hand-made records, and the
page over HTTP (409 mid-game, 404, the worst three linked to the replay, the same review after
a reload and a restart)."""

from __future__ import annotations

import importlib.util
import re
import warnings

import numpy as np
import pytest
from web_tables import finish, finished_game  # noqa: E402

from agents.advice import PLAY_SPEC
from cribenv import cards as C
from cribenv.discard import analyse_discards
from cribenv.game import Deal, Game, Phase, Rules
from webtable.review import points_as_win, review_game
from webtable.table import Table

needs_search = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                  reason="the search agent needs numba (the 'vector' extra)")

# seat 1 deals: seat 0, the pone, holds a pair of fives (the best throw keeps them)
DEAL = Deal(1, ["5H 5S 9C TD JH QS", "AC 2C 3D 4D 7H KS"], "8D")


def one_hand(moves_after_discard=None, throw="5H 5S") -> Game:
    """A one-hand game of ``DEAL``: seat 0 throws ``throw``, seat 1 AC 2C, then the play by
    ``moves_after_discard(game)`` for seat 0 (its first legal card by default) and seat 1's
    first legal card."""
    game = Game(Rules(), seed=11, deals=[DEAL], max_hands=1)
    for card in [*throw.split(), "AC", "2C"]:
        game.step(card)
    while not game.is_over:
        legal = game.legal_actions()
        if game.current_player == 0 and moves_after_discard is not None:
            game.step(moves_after_discard(game, legal))
        else:
            game.step(legal[0])
    return game


def test_a_pair_of_fives_thrown_by_the_pone_costs_the_difference_of_the_values():
    game = one_hand()
    review = review_game(game.to_record(), plays=False)
    [d] = review.decisions
    options = analyse_discards("5H 5S 9C TD JH QS", is_dealer=False)
    chosen = next(o for o in options if C.to_str_many(o.throw) in ("5H 5S", "5S 5H"))
    assert d.kind == "discard" and d.move == 0 and d.hand_number == 0 and not d.dealer
    assert d.chosen == "5H 5S" and d.best == C.to_str_many(options[0].throw) == "9C QS"
    assert d.cost == pytest.approx(options[0].expected - chosen.expected)
    assert d.cost == pytest.approx(11.6104, abs=1e-4) and d.unit == "points"
    assert d.win_cost == pytest.approx(100 * points_as_win(d.cost, 0, 0, False))
    assert sorted(d.hand) == sorted(C.parse_many("5H 5S 9C TD JH QS"))
    assert len(d.options) == 15 and d.options[0]["throw"] == "9C QS"
    assert review.worst == [d] and review.totals()["discard_points"] == pytest.approx(d.cost)
    # the best throw costs nothing and is not among the worst
    best = review_game(one_hand(throw="9C QS").to_record(), plays=False)
    assert best.decisions[0].cost == 0 and best.decisions[0].matched and best.worst == []


def test_points_as_win_is_worth_more_in_a_close_race_near_the_end():
    start = points_as_win(4, 0, 0, True)
    assert 0.04 < start < 0.12   # about 2% a point
    assert points_as_win(4, 114, 114, True) > 2 * start
    assert points_as_win(4, 30, 100, False) < 0.001
    assert points_as_win(0, 60, 60, True) == 0


@needs_search
def test_a_play_as_the_search_plays_costs_nothing_and_is_the_same_every_time():
    from agents.base import make_agent

    game = one_hand()
    record = game.to_record()
    review = review_game(record)
    plays = [d for d in review.decisions if d.kind == "play"]
    assert plays and review.plays_reviewed
    # every play with a choice is reviewed, forced ones skipped
    choices = [k for k in range(len(record["actions"]))
               if (g := Game.from_record(record, moves=k)).current_player == 0
               and g.phase is Phase.PLAY and len(g.legal_actions()) > 1]
    assert [d.move for d in plays] == choices
    for d in plays:
        # as the brief has it: the search asked at the person's view of the game replayed
        at = Game.from_record(record, moves=d.move)
        bot = make_agent(PLAY_SPEC, seed=0)
        bot.rng = np.random.default_rng([record["seed"], d.move])
        card = bot.choose(at.view(0), at.legal_actions())
        values = dict(zip(bot.last["cards"], bot.last["values"]))
        assert d.best == C.to_str(card) and d.chosen == C.to_str(C.parse(
            record["actions"][d.move]))
        assert d.cost == pytest.approx(100 * (max(values.values())
                                              - values[C.parse(d.chosen)]))
        assert d.unit == "% to win" and d.win_cost == d.cost
        assert [o["value"] for o in d.options] == sorted((o["value"] for o in d.options),
                                                         reverse=True)
        assert list(d.series) == at.view(0).series_cards and d.count == at.count
    assert review_game(record).decisions == review.decisions   # the same every time
    # the first play again, now the search's own card: it costs nothing
    first = plays[0]
    again = one_hand(lambda g, legal: C.parse(first.best) if len(g.actions) == first.move
                     else legal[0])
    same = next(d for d in review_game(again.to_record()).decisions if d.move == first.move)
    assert same.chosen == same.best == first.best
    assert same.cost == 0 and same.matched and same.options == first.options


def test_three_and_four_players_are_not_reviewed():
    for n in (3, 4):
        game = Game(Rules(num_players=n, target=61), seed=2)
        while not game.is_over:
            game.step(game.legal_actions()[0])
        review = review_game(game.to_record())
        assert review.decisions == [] and "Only 2-player games" in review.note


def test_a_muggins_game_is_reviewed_with_its_claims_replayed():
    table = Table(Rules(target=61, muggins=True), bot="greedy", seed=5)
    finish(table)
    record = table.game_record()
    assert record.get("claims") or record.get("peg_claims")
    review = review_game(record, plays=False)
    discards = [d for d in review.decisions if d.kind == "discard"]
    throws = [k for k in range(len(record["actions"]))
              if (g := Game.from_record(record, moves=k)).current_player == 0
              and g.phase is Phase.DISCARD and not g.discards[0]]
    assert [d.move for d in discards] == throws and discards == review.decisions
    for d in discards:   # the scores at each throw: those of the game replayed to it
        assert d.scores == Game.from_record(record, moves=d.move).scores


# ---------------------------------------------------------------------------- over HTTP

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

with warnings.catch_warnings():   # starlette's notice that it prefers httpx2 one day
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient  # noqa: E402

from webtable.app import create_app  # noqa: E402
from webtable.replay import Replay  # noqa: E402


def test_the_review_waits_for_the_end_and_an_unknown_game_is_404():
    with TestClient(create_app()) as c:
        r = c.post("/api/games", json={"bot": "greedy", "seed": 7})
        key = r.json()["id"]
        assert "review_url" not in r.json() and "Review this game" not in r.json()["html"]
        r = c.get(f"/game/{key}/review")
        assert r.status_code == 409 and "the review opens when the game is over" in r.text
        assert f'href="/game/{key}">back to the game' in r.text
        r = c.get("/game/nope/review")
        assert r.status_code == 404 and '<a href="/">back</a>' in r.text


def test_the_review_page_after_a_game_a_reload_and_a_restart(tmp_path):
    db = tmp_path / "games.sqlite"
    with TestClient(create_app(db=db)) as c:
        state, table = finished_game(c)
        key = state["id"]
        c.app.state.saved.save(key, table.to_record())   # moved past the API: saved here
        assert state["review_url"] == f"/game/{key}/review"
        assert (f'<a class="button" rel="review" href="/game/{key}/review">Review this game'
                in state["html"])
        first = c.get(state["review_url"])
        assert first.status_code == 200 and c.get(state["review_url"]).text == first.text
    review = table.game_review()
    html = first.text
    assert f'data-decisions="{len(review.decisions)}"' in html
    kinds = re.findall(r'<li class="decision (discard|play)', html)
    assert kinds == [d.kind for d in review.decisions] and "discard" in kinds
    # the worst three at the top, costliest first, each linked to its step of the replay
    worst = re.findall(r'<li class="worst-item" data-move="(\d+)" data-kind="(\w+)" '
                       r'data-cost="([\d.]+)" data-win-cost="([\d.]+)"><a rel="step" '
                       r'href="([^"]+)">', html)
    assert 1 <= len(worst) <= 3 and len(worst) == len(review.worst)
    assert [int(m) for m, *_ in worst] == [d.move for d in review.worst]
    wins = [float(w) for *_, w, _ in worst]
    assert wins == sorted(wins, reverse=True)
    assert all(not d.matched for d in review.worst)
    unworst = [d for d in review.decisions if d not in review.worst]
    assert all(d.win_cost <= min(wins) + 1e-3 for d in unworst)
    replay = Replay.from_record(table.game_record())
    for move, _, _, _, url in worst:
        assert url == f"/game/{key}/replay?step={move}"
        assert replay.game_at(int(move)).current_player == table.human   # its decision
    assert re.search(r"<h2>Your (three |two )?costliest decisions?</h2>", html)
    for d in review.decisions:   # each decision says the person's choice and the best
        block = re.search(rf'<li class="decision [^"]*" id="move-{d.move}".*?</li>', html,
                          re.S).group(0)
        assert f'data-chosen="{d.chosen}" data-best="{d.best}"' in block
        assert (f"the best throw was {d.best}" if d.kind == "discard" else
                f"the strongest agent lays {d.best}") in block or d.matched
    with TestClient(create_app(db=db)) as again:   # the server restarted: the same review
        assert again.get(f"/game/{key}/review").text == first.text
        assert again.get("/game/nope/review").status_code == 404


def test_three_players_get_no_review_link_and_a_page_that_says_why():
    with TestClient(create_app()) as c:
        state, _ = finished_game(c, players=3)
        assert "Review this game" not in state["html"]
        r = c.get(f"/game/{state['id']}/review")
        assert r.status_code == 200 and "Only 2-player games are reviewed" in r.text


def test_the_advice_in_the_play_is_the_strongest_agents():
    """With 2 players the play's advice is the search's (the Champion): its card, each card's
    chance to win from the same seeded search as the review, the same on every render; the
    result counts the chance given up, not points. The discard's advice marks the Champion's
    throw beside the exact values."""
    pytest.importorskip("numba")
    from agents.advice import advice_summary, search_values, strongest_throw, throw_key

    table = Table(Rules(target=61), bot="greedy", seed=11, advice=True)
    seen = 0
    while table.stage != "over":
        if table.stage in ("cut", "show"):
            table.act(table.seq, action="next")
            continue
        advice = table.advice()
        legal = table.game.legal_actions()
        if table.stage == "discard":   # the exact values, and the Champion's own throw
            thrown = strongest_throw(table.game)
            assert advice.champion == throw_key(advice, thrown) and len(thrown) == 2
            assert advice.champion in advice.values and "The Champion throws" in advice.reason
        if table.stage == "play" and len(legal) > 1:
            assert advice.unit == "win" and advice == table.advice()
            card, win = search_values(table.view(), legal, 11, len(table.game.actions))
            assert advice.best == C.to_str(card)
            assert advice.values == {C.to_str(c): 100.0 * v for c, v in win.items()}
            assert "the Champion lays" in advice.reason
            seen += 1
        need = (table.need - len(table.game.discards[0]) if table.stage == "discard" else 1)
        table.act(table.seq, cards=legal[-need:])      # not always the advice
    summary = advice_summary(table.decisions)
    plays = [d for d in table.decisions if d.kind == "play" and d.advice.unit == "win"]
    assert seen >= 5 and summary["play_win"] == pytest.approx(sum(d.loss for d in plays))
    assert all(d.advice.unit == "points" for d in summary["worst"])
