"""The web table's words: every pegging score said as a player says it (each case worked out by
hand), in the log and the advice, and the bots by the names the person sees."""

from __future__ import annotations

import random
import re

import pytest

pytest.importorskip("jinja2", reason="the web table's pages need the 'web' extra")

from agents.advice import describe_peg
from agents.words import score_words
from cribenv import cards as C
from cribenv.game import Deal, Game, Played, Rules, SeriesEnd, StarterTurned
from cribenv.scoring import peg_breakdown, peg_points
from webtable.opponents import (
    OPPONENTS,
    lobby_order,
    opponent_about,
    opponent_name,
    opponent_names,
)
from webtable.render import describe_event, log_lines, peg_call_html
from webtable.table import Table


def said(series: str) -> str:
    """What the last card of ``series`` scores, in words."""
    return score_words(peg_breakdown(C.parse_many(series)))


@pytest.mark.parametrize("series,words", [
    # nothing
    ("2C", ""),
    ("KC 4D", ""),                                   # 14
    # fifteen: 7 + 8
    ("7C 8D", "fifteen for 2"),
    ("KC 5D", "fifteen for 2"),
    # pairs: the last card's rank ending the series 2, 3, 4 times
    ("8D 8S", "pair for 2"),                         # 16
    ("8D 8S 8H", "pair royal for 6"),                # 24
    ("4C 4D 4H 4S", "double pair royal for 12"),     # 16
    ("8D 8S 7C 7H", "pair for 2"),                   # only the last two pair: 30
    # runs, in any order, of three to seven
    ("3C 5D 4H", "run of three for 3"),              # 12
    ("2C 4D 3H 5S", "run of four for 4"),            # 14
    ("6C 2D 4H 3S 5C", "run of five for 5"),         # 20
    ("AC 2D 3H 4S 6C 5D", "run of six for 6"),       # 21
    ("2C 3D 4H 5S 6C AD 7H", "run of seven for 7"),  # 28
    ("9C 3D 5H 4S", "run of three for 3"),           # 3 4 5 ends it, the 9 does not
    ("3C 4D 4H", "pair for 2"),                      # 3 4 4: a pair, no run
    # 31
    ("KC QD 5H 6S", "31 for 2"),
    # a card that scores several: fifteen or 31 first, then the pair or the run, with "a"
    ("3C 6D 6S", "fifteen for 2 and a pair for 2"),
    ("5C 5D 5H", "fifteen for 2 and a pair royal for 6"),
    ("AC 2D 3H 4S 5C", "fifteen for 2 and a run of five for 5"),
    ("4C 6C 5C", "fifteen for 2 and a run of three for 3"),
    ("KC 7D 7S 7H", "31 for 2 and a pair royal for 6"),
    ("KC 9D 4H 3S 5C", "31 for 2 and a run of three for 3"),
    ("3C 3D 3H 3S 9C TC", "31 for 2"),               # 12 + 9 + 10: no pair, no run
])
def test_what_a_card_scores_in_words(series, words):
    ids = C.parse_many(series)
    assert said(series) == words
    # the words add up to what the engine pegs for the card
    assert sum(int(p) for p in re.findall(r"for (\d+)", words)) == peg_points(ids)


def test_the_go_the_last_card_and_his_heels():
    assert score_words(SeriesEnd(0, 1, "go")) == "go for 1"
    assert score_words(SeriesEnd(1, 1, "last card")) == "last card for 1"
    assert score_words(SeriesEnd(1, 0, "31")) == ""   # the 2 for 31 are the card's
    assert score_words(StarterTurned(C.parse("JH"), 0, 2)) == "his heels for 2"
    assert score_words(StarterTurned(C.parse("QH"), 0, 0)) == ""
    # a card and the last card it earned: "and"; three parts: commas, then "and"
    pair = peg_breakdown(C.parse_many("8D 8S"))
    assert score_words(pair, SeriesEnd(0, 1, "last card")) == "pair for 2 and last card for 1"
    fifteen_pair = peg_breakdown(C.parse_many("3C 6D 6S"))
    assert score_words(fifteen_pair, SeriesEnd(0, 1, "last card")) == \
        "fifteen for 2, a pair for 2 and last card for 1"
    assert score_words(peg_breakdown(C.parse_many("5D")), SeriesEnd(0, 1, "go")) == "go for 1"
    with pytest.raises(TypeError, match="not a score"):
        score_words("fifteen")


def test_the_words_add_up_to_the_engine_on_random_series():
    rng = random.Random(0)
    for _ in range(3000):
        deck = list(range(52))
        rng.shuffle(deck)
        series, count = [], 0
        for card in deck:
            value = min(10, card // 4 + 1)
            if count + value > 31 or len(series) >= rng.randint(1, 8):
                break
            series.append(card)
            count += value
        words = score_words(peg_breakdown(series))
        assert sum(int(p) for p in re.findall(r"for (\d+)", words)) == peg_points(series), \
            (C.to_str_many(series), words)


# ------------------------------------------------------------------ the log

NAME = {0: "You", 1: "Expert"}.get


def test_log_lines_say_each_score():
    laid = Played(1, C.parse("8D"), 16, 2, tuple(C.parse_many("8S 8D")))
    assert describe_event(laid, NAME) == "Expert lays 8D: 16, pair for 2"
    mine = Played(0, C.parse("9C"), 9, 0, (C.parse("9C"),))
    assert describe_event(mine, NAME) == "You lay 9C: 9"
    assert describe_event(SeriesEnd(1, 1, "go"), NAME) == "Expert pegs go for 1"
    assert describe_event(SeriesEnd(0, 1, "last card"), NAME) == "You peg last card for 1"
    assert describe_event(SeriesEnd(0, 0, "31"), NAME) == "31: the count starts again"
    assert describe_event(StarterTurned(C.parse("JS"), 1, 2), NAME) == \
        "Starter JS: his heels for 2 to Expert"
    assert describe_event(StarterTurned(C.parse("JS"), 0, 2), NAME) == \
        "Starter JS: his heels for 2 to you"
    assert describe_event(StarterTurned(C.parse("5S"), 0, 0), NAME) == "Starter 5S"
    # the last card's point said with the card that earned it; a go after a Go stays apart
    last = [Played(0, C.parse("8D"), 23, 2, tuple(C.parse_many("7C 8S 8D"))),
            SeriesEnd(0, 1, "last card")]
    assert log_lines(last, NAME) == ["You lay 8D: 23, pair for 2 and last card for 1"]


def _hand(game: Game) -> list:
    starts = [i for i, e in enumerate(game.events) if type(e).__name__ == "Dealt"]
    return game.events[starts[0]:starts[1] if len(starts) > 1 else None]


def test_a_whole_hand_in_the_log():
    """Seat 0 deals; the play worked out by hand: every score in words, the heels too."""
    deal = Deal(0, ["5D KC 9H 8H JH JD", "5H 5C 9S 8S QH QD"], "JS")
    game = Game(Rules(), seed=0, deals=[deal])
    for card in "QH QD JH JD 5H 5D 5C 9H 9S 8H 8S KC".split():
        game.step(card)
    lines = log_lines(_hand(game), NAME)
    assert lines[:-3] == [
        "Hand 1: You deal",
        "Starter JS: his heels for 2 to you",
        "Expert lays 5H: 5",
        "You lay 5D: 10, pair for 2",
        "Expert lays 5C: 15, fifteen for 2 and a pair royal for 6",
        "You lay 9H: 24",
        "Expert says Go",       # 9S and 8S do not fit
        "You say Go",           # nor KC and 8H
        "You peg go for 1",
        "Expert lays 9S: 9",
        "You lay 8H: 17",
        "Expert lays 8S: 25, pair for 2",
        "You say Go",           # KC does not fit; Expert has no card left
        "Expert pegs go for 1",
        "You lay KC: 10, last card for 1",
    ]
    assert [line.split(":")[0] for line in lines[-3:]] == ["Expert hand", "You hand",
                                                           "You crib"]
    pegged = [0, 0]
    for ev in _hand(game):
        if type(ev) in (Played, SeriesEnd):
            pegged[ev.seat] += ev.points
        elif type(ev) is StarterTurned:
            pegged[ev.dealer] += ev.heels
    assert pegged == [2 + 2 + 1 + 1, 8 + 2 + 1]   # what the lines say, seat by seat


def test_the_advice_and_the_play_panel_say_it_in_words():
    assert describe_peg(C.parse_many("4C 6C 5C")) == "fifteen for 2 and a run of three for 3"
    laid = Played(0, C.parse("8D"), 23, 2, tuple(C.parse_many("7C 8S 8D")))
    panel = peg_call_html([laid, SeriesEnd(0, 1, "last card")], 0, NAME)
    assert "Your card 8D: 23, pair for 2 and last card for 1</h3>" in panel
    assert '<li data-kind="pair" data-points="2">' in panel


# ------------------------------------------------------------------ the bots' names

def test_the_bots_are_named_for_people():
    assert [(o.name, o.spec) for o in OPPONENTS] == [
        ("Beginner", "random"), ("Greedy", "greedy"), ("Self-taught", "ppo:scratch"),
        ("Expert", "expert"), ("Graduate", "ppo:scratch-exit"),
        ("Prodigy", "search:ppo:scratch?models=own&playouts=300"),
        ("Master", "ppo:shipped"), ("Champion", "search:ppo:shipped")]
    assert "10-20 ms a card" in opponent_about("search:ppo:shipped", "search:ppo:shipped")
    assert opponent_name("greedy", "greedy") == "Greedy"
    assert opponent_name("greedy", "ppo:runs/a.safetensors") == "greedy"   # not the built-in
    assert opponent_name("mine", "greedy") == "mine"
    assert opponent_about("mine", "greedy") == "was given when the server started (greedy)"
    assert lobby_order(["expert", "greedy", "random", "mine", "ppo:shipped"]) == \
        ["random", "greedy", "expert", "ppo:shipped", "mine"]
    assert opponent_names({"expert": "expert", "Expert": "greedy", "mine": "random"}) == \
        {"expert": "Expert (expert)", "Expert": "Expert (Expert)", "mine": "mine"}


def test_a_table_names_its_bot():
    table = Table(Rules(target=61), bot="ppo:shipped", seed=1)
    assert (table.bot_label, table.bot_name, table.seat_names()) == \
        ("ppo:shipped", "Master", ["You", "Master"])
    three = Table(Rules(num_players=3, target=61), bot="random", seed=1)
    assert three.seat_names() == ["You", "Beginner 2", "Beginner 3"]
    mine = Table(Rules(), bot="greedy", bot_label="mine", seed=1)
    assert mine.bot_name == "mine"
    record = table.to_record()
    assert record["bot_name"] == "Master"
    del record["bot_name"]   # a record saved before the names: named again from its label
    assert Table.from_record(record).bot_name == "Master"


def test_the_felt_says_what_the_bots_scored_since_your_card():
    """A log made up for the case (the function reads only the events): your 6D made fifteen
    before your 7C (23) and its go; then the Expert lays 8S (nothing), 7S (fifteen for 2), you
    say Go, 7D (a pair and the last card). The felt says the Expert's two scores as the log
    says them; nothing from before your last card, and nothing of yours."""
    from cribenv.game import Go
    from webtable.views import said_since_your_card

    name = {0: "You", 1: "Expert"}.get
    c = C.parse
    first = (c("9S"), c("6D"), c("AS"), c("7C"))
    events = [Played(1, c("9S"), 9, 0, first[:1]), Played(0, c("6D"), 15, 2, first[:2]),
              Played(1, c("AS"), 16, 0, first[:3]), Played(0, c("7C"), 23, 0, first)]
    assert said_since_your_card(events, 0, name) == ""
    series = (c("8S"), c("7S"), c("7D"))
    events += [SeriesEnd(0, 1, "go"), Played(1, c("8S"), 8, 0, series[:1]),
               Played(1, c("7S"), 15, 2, series[:2]), Go(0, 15),
               Played(1, c("7D"), 22, 2, series), SeriesEnd(1, 1, "last card")]
    assert said_since_your_card(events, 0, name) == (
        "Expert lays 7S: 15, fifteen for 2; Expert lays 7D: 22, pair for 2 and last card for 1")
    assert log_lines(events, name)[-1] == "Expert lays 7D: 22, pair for 2 and last card for 1"
