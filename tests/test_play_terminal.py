"""``cribenv play`` speaks a card player's language: a throw on one line, messages that say
why a card is refused, the partner named in 4 players, and hints in the play."""

from __future__ import annotations

import argparse
import io
import re

from cribenv import cards
from cribenv.commands import play
from cribenv.game import Deal, Game, GameOver, Played, Rules

CARD = re.compile(r"\b(?:[A2-9TJQK][CDHS])\b")


def session(answers, players=2, seed=4, seat=0):
    """Play with scripted answers (a function of the prompt and the call number); stop at
    the end of the script with 'q'. Returns (output, prompts)."""
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        reply = answers(prompt, len(prompts))
        return "q" if reply is None else reply

    out = io.StringIO()
    args = argparse.Namespace(bot="expert", players=players, target=121, seat=seat, seed=seed)
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
    assert "You and Bot3 (across the table) are partners against Bot0 and Bot2." in text
    assert prompts[0].startswith("[Bot0 & Bot2 0 | You & Bot3 0]")


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
    rules = Rules(num_players=4)
    game = Game(rules, seed=1)
    played = Played(seat=2, card=cards.parse("5H"), count=15, points=2,
                    series=(cards.parse("TD"), cards.parse("5H")))
    assert play.describe(played, human=0, num_players=4) == \
        "Bot2 plays 5H  (count 15), 2 for fifteen"
    mine = played._replace(seat=0)
    assert play.describe(mine, human=0, num_players=4) == "You play 5H  (count 15), 2 for fifteen"
    over = GameOver(winner=0, scores=(121, 85), game_points=2)
    assert play.describe(over, human=2, num_players=4) == \
        "Game over: Bot0 & You win, Bot0 & You 121 | Bot1 & Bot3 85, a skunk (2 game points)"
    assert play.describe(over._replace(winner=1), human=0, num_players=2) == \
        "Game over: Bot1 wins, You 121 | Bot1 85, a skunk (2 game points)"
    assert game.rules.num_players == 4
