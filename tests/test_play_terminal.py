"""``cribenv play`` speaks a card player's language: a throw on one line, messages that say
why a card is refused, the bots named by their spec, the partner named in 4 players, the cut
and the starter shown, and hints in the play."""

from __future__ import annotations

import argparse
import io
import re

from agents import terminal as play
from agents.words import bot_name, seat_names
from cribenv import cards
from cribenv.game import (
    Cut,
    Deal,
    Game,
    GameOver,
    Played,
    Rules,
    ShowScored,
    StarterTurned,
)

CARD = re.compile(r"\b(?:[A2-9TJQK][CDHS])\b")


def names(num_players: int, human: int, bot: str) -> list[str]:
    """The seats as the terminal's log calls them."""
    return seat_names(num_players, human, bot_name(bot), seat_numbers=True)


def session(answers, players=2, seed=4, seat=0, bot="expert", target=121):
    """Play with scripted answers (a function of the prompt and the call number); stop at
    the end of the script with 'q'. Returns (output, prompts)."""
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        reply = answers(prompt, len(prompts))
        return "q" if reply is None else reply

    out = io.StringIO()
    args = argparse.Namespace(bot=bot, players=players, target=target, seat=seat, seed=seed)
    assert play.run(args, input_fn=answer, out=out) == 0
    return out.getvalue(), prompts


def held(prompt: str) -> list[str]:
    return CARD.findall(prompt.split("]")[-1])


def test_a_throw_on_one_line_throws_both_cards():
    def answers(prompt, n):
        return " ".join(held(prompt)[-2:]) if n == 1 else None

    text, prompts = session(answers)
    assert len(prompts) == 2                  # asked once for the throw, then in the play
    assert "count" in prompts[1] and len(held(prompts[1])) == 4
    assert set(held(prompts[0])) - set(held(prompts[1])) == set(held(prompts[0])[-2:])


def test_refusals_say_why_in_a_players_words():
    def answers(prompt, n):
        hand = held(prompt)
        if n == 1:
            return " ".join(hand[:3])         # too many
        if n == 2:
            return f"{hand[0]} {hand[0]}"     # twice
        if n == 3:
            missing = next(c for c in ("AS", "AH", "AD", "AC") if c not in hand)
            return missing
        return None

    text, _ = session(answers)
    assert "throw 2 cards to the crib, not 3" in text
    assert "each card once" in text
    assert re.search(r"you don't hold A[SHDC] \(your hand: ", text)
    assert "seat 0 cannot" not in text and "cannot lay" not in text


def test_a_card_past_31_is_explained_with_the_cards_that_fit():
    deal = Deal(dealer=1, hands=[["KS", "KH", "5C", "AD", "2D", "3D"],
                                 ["QS", "QH", "9C", "7H", "4H", "6H"]], starter="8C")
    game = Game(Rules(), seed=0, deals=[deal])
    plan = {0: ["2D", "3D", "5C", "KS"], 1: ["4H", "6H", "QS"]}
    while plan[game.current_player]:
        game.step(plan[game.current_player].pop(0))
    assert (game.current_player, game.count) == (0, 25)   # the opponent said go
    out = io.StringIO()
    typed = iter(["KH", "AD"])
    human = play.Human(game, 0, lambda prompt: next(typed), out)
    card = human.choose(game.view(0), game.legal_actions())
    assert cards.to_str(card) == "AD"
    assert "KH would take the count past 31 (the count is 25); you can play AD" in out.getvalue()


def test_four_players_name_the_partner_and_score_by_partnership():
    text, prompts = session(lambda p, n: None, players=4, seat=1)
    assert ("You and expert (seat 3) are partners, across the table, against expert (seat 0) "
            "and expert (seat 2).") in text
    assert prompts[0].startswith("[expert (seat 0) & expert (seat 2) 0 | You & expert (seat 3) 0]")


def test_hint_in_the_play_ranks_every_legal_card_with_reasons():
    def answers(prompt, n):
        if "count" not in prompt:
            return held(prompt)[0]
        if "hint" not in asked:
            asked.append("hint")
            return "hint"
        return None

    asked: list[str] = []
    text, prompts = session(answers)
    play_prompt = next(p for p in prompts if "count" in p)
    hints = re.findall(r"  play ([A2-9TJQK][CDHS]): scores (\d+) now", text)
    count = int(re.search(r"count (\d+)", play_prompt).group(1))
    legal = [c for c in held(play_prompt) if cards.value(cards.parse(c)) + count <= 31]
    assert sorted(c for c, _ in hints) == sorted(legal)


def test_the_log_speaks_of_plays_and_partnerships():
    seats = names(4, 0, "expert")
    assert seats == ["You", "expert (seat 1)", "expert (seat 2)", "expert (seat 3)"]
    played = Played(seat=2, card=cards.parse("5H"), count=15, points=2,
                    series=(cards.parse("TD"), cards.parse("5H")))
    assert play.describe(played, seats) == "expert (seat 2) plays 5H  (count 15), 2 for fifteen"
    assert play.describe(played._replace(seat=0), seats) == \
        "You play 5H  (count 15), 2 for fifteen"
    over = GameOver(winner=0, scores=(121, 85), game_points=2)
    assert play.describe(over, names(4, 2, "greedy")) == \
        ("Game over: greedy (seat 0) & You win, greedy (seat 0) & You 121 | "
         "greedy (seat 1) & greedy (seat 3) 85, a skunk (2 game points)")
    assert play.describe(over._replace(winner=1), names(2, 0, "ppo:shipped")) == \
        "Game over: the bot wins, You 121 | the bot 85, a skunk (2 game points)"


def test_a_bot_given_by_a_path_is_called_the_bot():
    """``--bot ppo:runs/quick/policy.safetensors`` printed "Ppo:runs/quick/...'s hand"."""
    from agents.ppo import SHIPPED_POLICY

    text, _ = session(lambda prompt, n: " ".join(held(prompt)[-2:]) if n == 1 else None,
                      bot=f"ppo:{SHIPPED_POLICY}")
    assert text.startswith(f"Cribbage to 121: you are seat 0 against ppo:{SHIPPED_POLICY} "
                           "(called the bot below).")
    assert "ppo:" not in text.split("\n", 1)[1] and "Ppo" not in text
    show = ShowScored(seat=1, is_crib=False, cards=tuple(cards.parse_many("5H 5S 5C JD")),
                      starter=cards.parse("5D"), points=29)
    seats = names(2, 0, f"ppo:{SHIPPED_POLICY}")
    assert play.describe(show, seats).startswith("The bot's hand: ")


def test_the_starter_and_his_heels_name_the_dealer():
    jack = StarterTurned(card=cards.parse("JH"), dealer=1, heels=2)
    assert play.describe(jack, names(2, 0, "expert")) == \
        "Starter: JH (expert scores 2 for his heels)"
    assert play.describe(jack._replace(dealer=0), names(2, 0, "expert")) == \
        "Starter: JH (You score 2 for his heels)"
    assert play.describe(jack._replace(card=cards.parse("5C"), heels=0),
                         names(3, 0, "expert")) == "Starter: 5C"
    cut = Cut(rounds=((cards.parse("7C"), cards.parse("7H")),
                      (cards.parse("KS"), cards.parse("AD"))), dealer=1)
    assert play.describe(cut, names(2, 0, "greedy")) == \
        "Cut for deal: You 7C, greedy 7H; a tie, cut again: You KS, greedy AD; greedy deals first"


def test_the_game_shows_the_cut_and_the_starter_with_the_bots_by_name():
    def answers(prompt, n):
        return held(prompt)[-1] if n == 1 else None

    text, prompts = session(answers, players=3, seed=18)
    assert ("  Cut for deal: You 3S, expert (seat 1) 2S, expert (seat 2) JH; "
            "expert (seat 1) deals first\n") in text
    assert "  Starter: JC (expert (seat 1) scores 2 for his heels)\n" in text
    assert "Discard to expert (seat 1)'s crib" in prompts[0]
    text, _ = session(answers, players=3, seed=0)   # a tie for low card: the tied cut again
    assert ("  Cut for deal: You 7C, expert (seat 1) KC, expert (seat 2) 7H; a tie, cut again: "
            "You AH, expert (seat 2) 5C; You deal first\n") in text
    assert "Bot" not in text


def test_the_end_of_the_game_names_the_winner():
    def first_fitting(prompt, n):
        count = int(re.search(r"count (\d+)", prompt).group(1)) if "count" in prompt else 0
        return next(c for c in held(prompt) if cards.value(cards.parse(c)) + count <= 31)

    text, _ = session(first_fitting, bot="greedy", target=61, seed=2)
    last = text.splitlines()[-1]
    assert re.fullmatch(r"  Game over: (You win|greedy wins), You \d+ \| greedy \d+.*", last)
    assert "Bot" not in text
