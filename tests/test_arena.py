"""The one game loop (:func:`agents.arena.run_game`): bots get views, policies observation dicts,
and the choices are exactly those made through the environment's observations."""

from __future__ import annotations

import base64
import json
import random

import numpy as np
import pytest
from choices_fixture import FIXTURE

from agents import make_agent
from agents.arena import IllegalAgentActionError, run_game
from agents.base import ask
from cribenv.game import Game, Phase, Rules
from cribenv.observation import decode, encode, encode_game

RECORD = json.loads(FIXTURE.read_text())["matches"]


@pytest.mark.parametrize("num_players,target", [(2, 121), (2, 61), (3, 121), (4, 61)])
def test_a_decoded_observation_is_the_view(num_players, target):
    """What the loop hands a bot (``game.view``) is what its ``act`` decodes, seat for seat."""
    rules = Rules(num_players=num_players, target=target)
    for seed in range(6):
        game = Game(rules, seed=seed)
        rng = random.Random(seed)
        while game.current_player is not None:
            for seat in range(num_players):
                vec = encode_game(game, seat)
                np.testing.assert_array_equal(vec, encode(game.view(seat)))
                assert decode(vec, seat=seat) == game.view(seat)
            game.step(rng.choice(game.legal_actions()))


@pytest.mark.parametrize("match", RECORD, ids=lambda m: "-".join(m["agents"]))
def test_the_loop_makes_the_recorded_choices(match):
    """Bots choosing from views (and ``ppo:shipped`` from observation dicts) in the loop make
    every choice recorded through ``act`` on encoded observations (tests/choices_fixture.py)."""
    games = match["games"][:50] if "ppo:shipped" in match["agents"] else match["games"]
    for g, expected in enumerate(games):
        seed = match["first_seed"] + g
        agents = [make_agent(spec, seed=seed * 10 + i) for i, spec in enumerate(match["agents"])]
        game = Game(Rules(**match["rules"]), seed=seed)
        run_game(game, agents)
        assert bytes(game.actions) == base64.b64decode(expected), (match["agents"], seed)


class Scripted:
    """A bot laying its lowest legal card, logging what it is asked."""

    name = "scripted"

    def __init__(self, asks_forced: bool = False) -> None:
        self.asks_forced = asks_forced
        self.asked: list[tuple[int, int]] = []   # (seat, number of legal cards)

    def choose(self, view, legal):
        assert view.legal == legal and view.current_player == view.seat
        self.asked.append((view.seat, len(legal)))
        return legal[0]


class Policy:
    """A policy (``act`` only): the lowest legal card of the mask."""

    name = "policy"

    def __init__(self) -> None:
        self.seen: list[np.ndarray] = []

    def act(self, observation):
        self.seen.append(observation["observation"])
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_bots_are_asked_only_with_a_choice_unless_they_ask_for_forced_moves():
    quiet, eager = Scripted(), Scripted(asks_forced=True)
    game = Game(Rules(), seed=1, first_dealer=0)
    decisions = []
    made = run_game(game, [quiet, eager], on_decision=lambda s, legal, c: decisions.append(
        (s, len(legal))))
    assert made == len(decisions) == len(game.actions)
    assert eager.asked == [d for d in decisions if d[0] == 1]
    assert quiet.asked == [d for d in decisions if d[0] == 0 and d[1] > 1]
    assert any(d == (0, 1) for d in decisions), "seat 0 had forced moves"
    assert ask(quiet, [7], lambda: pytest.fail("no view is built for a forced move")) == 7


def test_policies_get_the_environment_observation_and_bots_agree():
    policy = Policy()
    game = Game(Rules(), seed=2, first_dealer=1)
    shadow = Game(Rules(), seed=2, first_dealer=1)
    obs = []
    run_game(game, [policy, Scripted()],
             on_decision=lambda s, legal, c: obs.append(encode(game.view(s))) if s == 0
             else None)
    assert len(policy.seen) == len(obs) > 20
    for got, want in zip(policy.seen, obs):
        np.testing.assert_array_equal(got, want)
    run_game(shadow, [Scripted(), Scripted()])
    assert shadow.actions == game.actions     # lowest legal card either way


def test_on_decision_sees_the_position_before_the_card_and_until_stops():
    game = Game(Rules(), seed=3, first_dealer=0)
    seen = []

    def look(seat, legal, card):
        assert card in game.hands[seat] and game.current_player == seat
        seen.append(len(game.actions))

    made = run_game(game, [Scripted(), Scripted()], on_decision=look,
                    until=lambda g: g.phase is Phase.PLAY)
    assert made == 4 and seen == [0, 1, 2, 3] and game.phase is Phase.PLAY
    assert run_game(game, [Scripted(), Scripted()],
                    until=lambda g: g.hand_number == 1) > 0
    assert game.hand_number == 1 and game.phase is Phase.DISCARD


def test_an_illegal_choice_names_the_bot_and_leaves_the_game():
    class Cheat(Scripted):
        name = "cheat"

        def choose(self, view, legal):
            return next(c for c in range(52) if c not in legal)

    game = Game(Rules(), seed=0, first_dealer=0)
    with pytest.raises(IllegalAgentActionError, match="'cheat' \\(seat 1\\)") as info:
        run_game(game, [Scripted(), Cheat()])
    assert info.value.seat == 1 and game.actions == [] and game.current_player == 1


def test_the_peg_out_rule_is_the_engines():
    exact = Rules(must_peg_out_exactly=True)
    assert exact.unit_scores(119, 2) and not exact.unit_scores(119, 3)
    assert Rules().unit_scores(119, 30)           # normally a unit always counts
    assert exact.unit_scores(0, 121) and not exact.unit_scores(1, 121)
