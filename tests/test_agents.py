"""Heuristic bots (greedy, expert): hand-made positions, legality over random games and
determinism. (Their fast paths are core functions, tested in ``test_scoring.py``.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents import make_agent
from agents.base import available_agents
from agents.expert import ExpertAgent
from agents.greedy import GreedyAgent
from cribenv import cards as C
from cribenv.aec import CribbageEnv
from cribenv.discard import analyse_discards, discard_evs
from cribenv.game import Deal, Game, Phase, PlayerView, Rules
from cribenv.observation import encode, legal_mask
from cribenv.scoring import score4

BOTS = ["random", "greedy", "expert"]


def obs_of(view: PlayerView) -> dict[str, np.ndarray]:
    """The environment observation dict of a view (the view must be the seat to act)."""
    return {"observation": encode(view), "action_mask": legal_mask(view)}


def obs_at(game: Game, seat: int | None = None) -> dict[str, np.ndarray]:
    return obs_of(game.view(game.current_player if seat is None else seat))


def two_player_game(hands: list, starter: str | int, dealer: int) -> Game:
    return Game(Rules(), seed=0, deals=[Deal(dealer=dealer, hands=hands, starter=starter)])


def discard_with(game: Game, bot, seat: int) -> list[int]:
    """Let ``bot`` make every discard of ``seat`` (it must be that seat's turn)."""
    thrown = []
    while game.phase is Phase.DISCARD and game.current_player == seat:
        card = bot.act(obs_at(game))
        thrown.append(card)
        game.step(card)
    return sorted(thrown)


def step_cards(game: Game, text: str) -> None:
    for card in C.parse_many(text):
        game.step(card)


# ----------------------------------------------------------------------------- registry


def test_registry_and_unknown_names():
    assert {"random", "greedy", "expert"} <= set(available_agents())
    assert isinstance(make_agent("greedy", seed=0), GreedyAgent)
    assert isinstance(make_agent("expert", seed=0), ExpertAgent)
    with pytest.raises(ValueError, match="unknown agent 'grredy'"):
        make_agent("grredy")
    with pytest.raises(ValueError):
        make_agent("")


# ----------------------------------------------------------------------------- greedy


def test_greedy_keeps_best_four_without_starter():
    # Pone (seat 0): 5-5-5-J is 14 points alone; the 2 and 9 thrown score nothing.
    game = two_player_game(["5C 5D 5H JS 2C 9D", "AS 3S 6S 7S 8D TD"], "KH", dealer=1)
    assert discard_with(game, make_agent("greedy"), 0) == C.parse_many("2C 9D")


def test_greedy_counts_thrown_points_for_or_against():
    six = "7C 8D 9H 2S 2D KC"  # keep 7-8-9-K (5) or 7-8-9-2 (5); the 2-2 throw scores 2
    other = "AS 3S 4S 5S 6S TD"
    # As pone the pair in the opponent's crib counts against: throw a 2 and the K; the tie
    # between 2D and 2S goes to the lower card id (2D).
    game = two_player_game([six, other], "QH", dealer=1)
    assert discard_with(game, make_agent("greedy"), 0) == C.parse_many("2D KC")
    # As dealer it counts for: throw the pair.
    game = two_player_game([other, six], "QH", dealer=1)
    step_cards(game, "AS 3S")
    assert discard_with(game, make_agent("greedy"), 1) == C.parse_many("2D 2S")


def test_greedy_pegs_most_points_now():
    game = two_player_game(["5C 9D 7H 2C 3C 4C", "5D TS 8S 7S KD QD"], "AH", dealer=1)
    step_cards(game, "3C 4C KD QD 5C")   # discards; pone leads 5C (count 5)
    bot = make_agent("greedy")
    # A pair (5D) and a fifteen (TS) both make 2: the tie goes to the higher rank.
    assert bot.act(obs_at(game)) == C.parse("TS")
    step_cards(game, "TS 7H")            # count 22: the 7S pairs the 7H
    assert bot.act(obs_at(game)) == C.parse("7S")


def test_greedy_three_and_four_players_throw_one():
    # One card thrown scores nothing alone: keep the best 4 without a starter.
    bot = make_agent("greedy")
    for n in (3, 4):
        for seed in range(20):
            game = Game(Rules(num_players=n), seed=seed)
            view = game.view(game.current_player)
            card = bot.act(obs_of(view))
            best = max(score4(*[c for c in view.hand if c != t]) for t in view.hand)
            assert score4(*[c for c in view.hand if c != card]) == best


# ----------------------------------------------------------------------------- expert


def test_expert_discard_is_the_exact_best_two_player():
    for six, dealer in [("5H 5D JC 7S 8C 9D", False), ("5H 5D JC 7S 8C 9D", True),
                        ("5S 5C JH 3D 4H 6C", True), ("AC 2C 3C 4C 9C KH", False),
                        ("JS JH 4S 8S 2S TD", True), ("6H 7H 8D 9S QC KS", False)]:
        cards = C.parse_many(six)
        starter = next(c for c in range(52) if c not in cards)
        other = [c for c in range(52) if c not in cards and c != starter][-6:]
        hands = [cards, other] if not dealer else [other, cards]
        game = two_player_game(hands, starter, dealer=1)
        seat = 1 if dealer else 0
        if dealer:
            game.step(other[0])
            game.step(other[1])
        thrown = discard_with(game, make_agent("expert"), seat)
        best = analyse_discards(six, dealer)[0]
        assert thrown == sorted(best.throw), (six, dealer, str(best))


def test_expert_keeps_five_five_jack_over_the_run():
    # Pone with 5-5-J and 7-8-9: the exact numbers keep 5-5-J-8 (throwing 7-9), not the
    # flashier run J-7-8-9, and not 5-5-J-7 (the better hand, but 8-9 feed the crib).
    game = two_player_game(["5H 5D JC 7S 8C 9D", "AS 2S 3S 4S 6S TC"], "KD", dealer=1)
    assert discard_with(game, make_agent("expert"), 0) == C.parse_many("7S 9D")
    # Greedy keeps 5-5-J-7 (6 points alone; ties throw the higher ranks).
    game = two_player_game(["5H 5D JC 7S 8C 9D", "AS 2S 3S 4S 6S TC"], "KD", dealer=1)
    assert discard_with(game, make_agent("greedy"), 0) == C.parse_many("8C 9D")


def test_expert_never_leaves_five_for_a_fifteen():
    # Dealer (seat 1) answers a 2 lead holding 3-9-K-Q: the 3 would leave the count at 5 with
    # 15 ten-cards unseen (and invite a 4 for a run).
    game = two_player_game(["2C 7H 8H AS 4D 6S", "3D 9C KS QH TD JD"], "8C", dealer=1)
    step_cards(game, "7H 8H TD JD 2C")
    assert game.current_player == 1 and game.count == 2
    card = make_agent("expert").act(obs_at(game))
    assert card != C.parse("3D")


def test_expert_never_leaves_twenty_one_for_a_thirty_one():
    # Pone (seat 0) at count 14 (9 then 5) holds 7, 6, K: the 7 makes 21 (a ten-card makes 31).
    game = two_player_game(["9H 7C 6D KD 2H 3H", "5S TS JS QS AC AD"], "8C", dealer=1)
    step_cards(game, "2H 3H AC AD 9H 5S")
    assert game.current_player == 0 and game.count == 14
    card = make_agent("expert").act(obs_at(game))
    assert card != C.parse("7C")


def test_expert_leads_safely():
    # Leading: never a 5 (a ten-card makes 15) when low cards are available.
    game = two_player_game(["5C 3D KH QS 9H 9D", "AS 2S 4S 6S 7S 8D"], "JC", dealer=1)
    step_cards(game, "9H 9D AS 2S")
    assert game.phase is Phase.PLAY and game.current_player == 0
    card = make_agent("expert").act(obs_at(game))
    assert card != C.parse("5C")


def _pair_the_seven_position() -> PlayerView:
    """Dealer (seat 1) answers a 7 lead holding 7-2-3-K: pairing scores 2 but leaves a pair
    royal (the two unseen 7s) and a fifteen (any Ace) to the pone."""
    game = two_player_game(["7H 9S TC 4D AH AD", "7C 2S 3D KC QD QC"], "8C", dealer=1)
    step_cards(game, "AH AD QD QC 7H")
    assert game.current_player == 1 and game.count == 7
    return game.view(1)


def test_expert_defends_when_the_opponent_is_about_to_win():
    view = _pair_the_seven_position()
    bot = make_agent("expert")
    assert bot.act(obs_of(view)) == C.parse("7C")  # early in the game: take the 2
    # The pone needs 2 (scores per side: [seat 0, seat 1]). The K (count 17) leaves only a pair
    # of Ks (three unseen) to win with; the pair of 7s leaves the two 7s and two Aces, the 2
    # leaves a 6 for fifteen, the 3 a 5.
    assert bot.act(obs_of(dataclasses.replace(view, scores=[119, 100]))) == C.parse("KC")


def test_expert_pegs_out_when_it_can():
    view = _pair_the_seven_position()
    bot = make_agent("expert")
    # both sides need 2: defending is moot, the pair wins now
    assert bot.act(obs_of(dataclasses.replace(view, scores=[119, 119]))) == C.parse("7C")


def test_expert_three_and_four_players():
    for n in (3, 4):
        bot = make_agent("expert")
        for seed in range(10):
            game = Game(Rules(num_players=n), seed=seed)
            seat = game.current_player
            view = game.view(seat)
            card = bot.act(obs_of(view))
            unseen = [c for c in range(52) if c not in view.hand]
            keeps, throws, hand_ev, crib_ev = discard_evs(view.hand, unseen, 1)
            own = view.side_of(view.dealer) == view.side_of(seat)
            sign = 1.0 if own else (-0.5 if n == 3 else -1.0)
            values = [h + sign * c for h, c in zip(hand_ev, crib_ev)]
            assert values[view.hand.index(card)] == pytest.approx(max(values))


# ----------------------------------------------------------------------------- all bots


def play_env(num_players: int, bots, seed: int, target: int = 61) -> tuple:
    env = CribbageEnv(num_players=num_players, target=target)
    env.reset(seed=seed)
    actions = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        card = bots[env.agent_name_mapping[agent]].act(obs)
        assert obs["action_mask"][card] == 1, (agent, card)
        actions.append(card)
        env.step(card)
    return tuple(actions)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_bots_play_only_legal_cards(num_players):
    names = BOTS * 2
    for seed in range(3):
        bots = [make_agent(names[(seed + i) % len(names)], seed=i) for i in range(num_players)]
        play_env(num_players, bots, seed)


@pytest.mark.parametrize("name", BOTS)
def test_bots_are_deterministic_under_a_seed(name):
    first = play_env(2, [make_agent(name, seed=3), make_agent(name, seed=4)], seed=5)
    again = play_env(2, [make_agent(name, seed=3), make_agent(name, seed=4)], seed=5)
    assert first == again


def test_bots_refuse_observations_without_a_legal_card():
    game = Game(Rules(), seed=0)
    idle = 1 - game.current_player
    for name in ("greedy", "expert"):
        with pytest.raises(ValueError, match="no legal action"):
            make_agent(name).act(obs_at(game, idle))


def test_features_build_no_bot_at_import():
    """Importing the prior's features is cheap: the expert they ask is built on first use."""
    import subprocess
    import sys

    code = "import agents.features as f; assert f._expert.cache_info().currsize == 0"
    subprocess.run([sys.executable, "-c", code], check=True)
