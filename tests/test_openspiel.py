"""Cribbage inside OpenSpiel (``cribenv.integrations.openspiel``, ``agents.openspiel``): the
``python_cribenv`` game passes OpenSpiel's own conformance checks, plays exactly as
:class:`cribenv.game.Game` with the same draws and actions (a differential test), observes a
seat's view and nothing more, resamples what a seat has not seen consistently with its view;
OpenSpiel's ISMCTS and MCTS play as cribenv bots; a policy-gradient run trains on it.
"""

from __future__ import annotations

import pickle
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the 'openspiel' extra (open_spiel)")

from agents import make_agent  # noqa: E402
from agents.arena import play_game  # noqa: E402
from cribenv import cards as C  # noqa: E402
from cribenv.events import Cut, Dealt, StarterTurned  # noqa: E402
from cribenv.game import Game, IllegalActionError, Phase, Rules  # noqa: E402
from cribenv.integrations import openspiel as osp  # noqa: E402
from cribenv.observation import encode  # noqa: E402
from cribenv.rules import deal_order  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["python_cribenv", "python_cribenv(players=3,target=61)",
         "python_cribenv(players=4,target=121)", "python_cribenv(players=2,target=61)"]


def random_move(state, rng: random.Random) -> int:
    if state.is_chance_node():
        return rng.choice(state.chance_outcomes())[0]
    return rng.choice(state.legal_actions())


def play_to_decision(state, rng: random.Random, moves: int):
    """``state`` after ``moves`` random moves and on to the next decision with a choice."""
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(random_move(state, rng))
    while not state.is_terminal() and (state.is_chance_node() or len(state.legal_actions()) < 2):
        state.apply_action(random_move(state, rng))
    return state


# ---------------------------------------------------------------------- OpenSpiel's checks
@pytest.mark.parametrize("spec", [*SPECS, "python_cribenv(dealer=1,scores=100:90,hand_number=7)"])
def test_openspiels_random_simulation_checks_pass(spec):
    """pyspiel.random_sim_test: legal actions sorted and empty for the others, chance outcomes
    summing to 1, clones equal, serialisation round trips, returns within the utility range
    and equal to the summed rewards, game length within the bound."""
    game = pyspiel.load_game(spec)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_the_game_card_sizes_and_parameters():
    game = pyspiel.load_game("python_cribenv(players=3,target=61)")
    assert game.num_players() == 3 and game.num_distinct_actions() == 52
    assert game.max_chance_outcomes() == 52
    assert (game.min_utility(), game.max_utility()) == (-3.0, 3.0)
    assert game.information_state_tensor_shape() == game.observation_tensor_shape() \
        == [osp.OBS_SIZE]
    assert pyspiel.load_game("python_cribenv(skunks=False)").max_utility() == 1.0
    for bad, word in [("players=5", "players"), ("target=100", "target"), ("dealer=2", "dealer"),
                      ("scores=1:2:3", "scores"), ("scores=121:0", "scores")]:
        with pytest.raises(Exception, match=word):
            pyspiel.load_game(f"python_cribenv({bad})")


def test_serialisation_round_trips_mid_game():
    game = pyspiel.load_game("python_cribenv(players=4)")
    state = play_to_decision(game.new_initial_state(), random.Random(4), 120)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and str(state2) == str(state)
    assert state2.history() == state.history()
    assert state2.information_state_tensor(1) == state.information_state_tensor(1)
    state2.apply_action(state2.legal_actions()[0])          # and it plays on


# ---------------------------------------------------------------------- the same games
def seeded_game_draws(game: Game, seed: int) -> tuple[list[int], list[list[int]], list[int],
                                                      list[int]]:
    """Play ``game`` (a seeded Game) to the end at random; return its cut cards (in the order
    the explicit game draws them), each hand's deal (in the order dealt), the starters and the
    actions."""
    rng = random.Random(seed)
    n = game.num_players
    deals, starters, actions = [], [], []

    def note(events):
        for e in events:
            if type(e) is Dealt:
                order = deal_order(game.dealer, n, game.rules.hand_size)
                got = [0] * n
                cards = []
                for seat in order:
                    cards.append(game.hands[seat][got[seat]])
                    got[seat] += 1
                deals.append(cards + list(game.crib[:1] if n == 3 else []))
            elif type(e) is StarterTurned:
                starters.append(e.card)

    note(game.events)
    while not game.is_over:
        card = rng.choice(game.legal_actions())
        actions.append(card)
        note(game.step(card))
    cut = next(e for e in game.events if type(e) is Cut)
    cuts = [c for rnd in cut.rounds for c in rnd if c is not None]
    return cuts, deals, starters, actions


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("target", [121, 61])
def test_the_openspiel_game_plays_exactly_as_game_with_the_same_draws_and_actions(players,
                                                                                  target):
    """Differential: seeded Games played at random, and the OpenSpiel game fed the same cuts,
    deals, starters and actions. At every decision the scores, the seat to act and the legal
    cards agree; at the end the event logs (every score, with its breakdown) are identical and
    the returns are the env's win reward. (Seeds whose cut has a rank twice are passed over:
    the OpenSpiel game cuts without ties, tests/test_openspiel_tools.py.)"""
    played = 0
    for seed in range(20):
        reference = Game(Rules(num_players=players, target=target), seed=seed)
        cuts, deals, starters, actions = seeded_game_draws(reference, seed)
        if len({C.rank(c) for c in cuts}) < len(cuts):
            continue
        played += 1
        replay = Game(Rules(num_players=players, target=target), seed=seed)
        game = pyspiel.load_game("python_cribenv", {"players": players, "target": target})
        state = game.new_initial_state()
        deal = []
        acted = 0
        while not state.is_terminal():
            due = state.game.chance_due
            if due == "cut":
                state.apply_action(cuts.pop(0))
            elif due == "deal":
                if not deal:
                    deal = deals.pop(0)
                state.apply_action(deal.pop(0))
            elif due == "starter":
                state.apply_action(starters.pop(0))
            else:
                card = actions[acted]
                assert state.game.scores == replay.scores      # at every decision
                assert state.legal_actions() == replay.legal_actions()
                assert state.current_player() == replay.current_player
                replay.step(card)
                state.apply_action(card)
                acted += 1
        assert acted == len(actions) and not cuts and not deals and not starters
        assert state.game.scores == replay.scores == reference.scores
        assert state.game.events == reference.events
        sides = reference.rules.num_sides
        points = reference.game_points
        expected = [points if reference.side_of(s) == reference.winner
                    else -points / (sides - 1) for s in range(players)]
        assert state.returns() == pytest.approx(expected) and sum(state.returns()) == \
            pytest.approx(0)
        if played == 4:
            break
    assert played == 4


def test_chance_nodes_are_uniform_over_the_cards_left():
    state = pyspiel.load_game("python_cribenv(players=3)").new_initial_state()
    rng = random.Random(0)
    seen = {"cut": 0, "deal": 0, "starter": 0}
    while not state.is_terminal() and seen["starter"] < 2:
        if state.is_chance_node():
            due = state.game.chance_due
            seen[due] += 1
            outcomes = state.chance_outcomes()
            cards = [c for c, _ in outcomes]
            assert cards == sorted(set(cards)) == state.legal_actions()
            assert sum(p for _, p in outcomes) == pytest.approx(1.0)
            assert len({p for _, p in outcomes}) == 1
            if due == "deal":       # the cards not yet dealt this hand
                dealt = sum(map(len, state.game.hands)) + len(state.game.crib)
                assert len(cards) == 52 - dealt
            if due == "starter":    # 52 less 3 x 5 dealt, less the crib's card
                assert len(cards) == 36
            text = state.action_to_string(pyspiel.PlayerId.CHANCE, cards[0])
            assert text.split()[0] == due.capitalize()
        state.apply_action(random_move(state, rng))
    assert seen["cut"] >= 3 and seen["deal"] == 32


def test_explicit_chance_refuses_the_wrong_moves():
    game = Game(Rules(), first_dealer=0, explicit_chance=True)
    assert game.chance_due == "deal" and game.current_player is None
    with pytest.raises(IllegalActionError, match="waits for a chance draw"):
        game.step(0)
    game.draw("5H")
    with pytest.raises(IllegalActionError, match="5H cannot be drawn"):
        game.draw("5H")
    with pytest.raises(TypeError, match="explicit chance"):
        game.to_record()
    for card in range(11):                 # (5H is card 18)
        game.draw(card)
    assert game.chance_due is None and game.current_player == 1
    with pytest.raises(IllegalActionError, match="no chance draw is due"):
        game.draw(40)


# ---------------------------------------------------------------------- what a seat sees
def test_the_information_state_is_the_seats_view_and_nothing_more():
    for spec in SPECS[:3]:
        game = pyspiel.load_game(spec)
        observation = osp.CribbageObserver()
        assert set(observation.dict) == {name for name, _, _ in osp.LAYOUT}
        state = game.new_initial_state()
        rng = random.Random(1)
        steps = 0
        while not state.is_terminal() and steps < 150:
            for p in range(game.num_players()):
                view = state.game.view(p)
                tensor = np.asarray(state.information_state_tensor(p), np.float32)
                assert np.array_equal(tensor, encode(view))
                assert state.observation_tensor(p) == state.information_state_tensor(p)
                assert state.information_state_string(p) == osp.view_string(view) \
                    == state.observation_string(p)
            state.apply_action(random_move(state, rng))
            steps += 1


def test_the_information_state_hides_the_other_hands():
    """Two states that differ only in cards seat 0 has not seen give seat 0 the same
    information state (and seat 1 a different one)."""
    game = pyspiel.load_game("python_cribenv(dealer=0)")
    a, b = game.new_initial_state(), game.new_initial_state()
    for k in range(12):            # dealer 0: seat 1 gets the even draws, seat 0 the odd ones
        a.apply_action(20 + k if k % 2 == 0 else k - 1)
        b.apply_action(40 + k if k % 2 == 0 else k - 1)
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.information_state_tensor(0) == b.information_state_tensor(0)
    assert a.information_state_string(1) != b.information_state_string(1)


@pytest.mark.parametrize("spec", SPECS[:3])
def test_resampling_keeps_the_seats_information_state_and_deals_the_rest_anew(spec):
    game = pyspiel.load_game(spec)
    rng = random.Random(len(spec))
    phases = set()
    for case in range(40):           # at least 8 positions, until both phases are among them
        if case >= 8 and phases == {Phase.DISCARD, Phase.PLAY}:
            break
        state = play_to_decision(game.new_initial_state(), rng, rng.randrange(10, 160))
        if state.is_terminal():
            continue
        seat = (state.current_player() + case) % game.num_players()
        phases.add(state.game.phase)
        key = state.information_state_string(seat)
        others = set()
        for k in range(6):
            sample = state.resample_from_infostate(
                seat, np.random.default_rng(k) if k % 2 else pyspiel.UniformProbabilitySampler(
                    k, 0.0, 1.0))                     # seeded: the same samples every run
            assert sample.information_state_string(seat) == key
            assert sample.information_state_tensor(seat) == state.information_state_tensor(seat)
            assert sample.current_player() == state.current_player()
            assert sample.legal_actions(seat) == state.legal_actions(seat)
            start = state._engine.hand_start
            assert sample.history()[:start] == state.history()[:start]
            assert sample.game.scores == state.game.scores
            others.add(tuple(tuple(sorted(sample.game.hands[q] + sample.game.discards[q]))
                             for q in range(game.num_players()) if q != seat))
            play_to_decision(sample, random.Random(k), 30)   # the sample plays on
        assert len(others) > 1                            # the unseen cards are dealt anew
    assert phases == {Phase.DISCARD, Phase.PLAY}


def test_resampling_at_chance_nodes_and_after_serialisation():
    """Mid-deal and before the starter, for every seat; and a deserialised state (which drops
    the cached start of the hand) resamples the same way."""
    game = pyspiel.load_game("python_cribenv(players=3)")
    state = game.new_initial_state()
    rng = random.Random(2)
    checked = set()
    for move in range(150):
        if state.is_chance_node() and state._engine.hand_start is not None:
            checked.add(state.game.chance_due)
            for p in range(3):
                sample = state.resample_from_infostate(p, np.random.default_rng(move))
                assert sample.information_state_string(p) == state.information_state_string(p)
                assert sample.game.chance_due == state.game.chance_due
        state.apply_action(random_move(state, rng))
    assert checked == {"deal", "starter"}
    play_to_decision(state, rng, 0)
    _, copy = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    seat = state.current_player()
    assert copy.resample_from_infostate(seat, np.random.default_rng(0)).information_state_string(
        seat) == state.information_state_string(seat)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_state_built_from_a_view_has_that_view(players):
    rng = np.random.default_rng(players)
    for seed in range(10):
        game = Game(Rules(num_players=players, target=61 if seed % 2 else 121), seed=seed)
        moves = random.Random(seed)
        for _ in range(moves.randrange(40 * players)):
            if game.current_player is None:
                break
            game.step(moves.choice(game.legal_actions()))
        if game.current_player is None:
            continue
        seat = game.current_player
        view = game.view(seat)
        state = osp.position_state(view, rng)
        assert state.game.view(seat) == view
        assert state.current_player() == seat and state.legal_actions() == view.legal
        assert state.resample_from_infostate(seat, rng).game.view(seat) == view


# ---------------------------------------------------------------------- OpenSpiel's search
def test_openspiels_ismcts_plays_the_game_from_its_information_states():
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("python_cribenv(target=61)")
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 10, random_state=rs)
    state = play_to_decision(game.new_initial_state(), random.Random(0), 0)
    action = bot.step(state)
    assert action in state.legal_actions()


def at_the_starter(state, rng: random.Random):
    """``state`` after random moves up to the cut of the starter (the last throw made)."""
    while state.game.chance_due != "starter":
        state.apply_action(random_move(state, rng))
    return state


@pytest.mark.parametrize("spec,moves", [("python_cribenv(target=61,scores=48:20)", 3),
                                         ("python_cribenv(target=61,scores=20:45,dealer=0)", 20),
                                         ("python_cribenv(target=61,scores=50:40,skunks=False)",
                                          6),
                                         ("python_cribenv(players=3,target=61,scores=40:50:30)",
                                          9),
                                         ("python_cribenv(players=4,target=61,scores=52:30)", 12)])
def test_the_compiled_rollouts_return_what_openspiels_random_rollouts_return(spec, moves):
    """The agents' rollout evaluator against OpenSpiel's own, from the same leaves (a deal to
    make, the starter to cut, a seat to act): the same mean returns within four standard
    errors, at 2, 3 and 4 players, with and without skunks."""
    from open_spiel.python.algorithms import mcts

    from agents.openspiel import rollout_evaluator

    game = pyspiel.load_game(spec)
    leaves = [game.new_initial_state(),
              at_the_starter(game.new_initial_state(), random.Random(moves)),
              play_to_decision(game.new_initial_state(), random.Random(1), moves)]
    for k, leaf in enumerate(leaves):
        assert not leaf.is_terminal()
        ours = rollout_evaluator(600, np.random.RandomState(k)).evaluate(leaf)
        py = mcts.RandomRolloutEvaluator(1, np.random.RandomState(k))
        theirs = np.array([py.evaluate(leaf) for _ in range(300)])
        se = theirs.std(0) / np.sqrt(len(theirs)) * np.sqrt(1 + len(theirs) / 600)
        # (a seat that lost all 300 of theirs has no spread: a floor of 0.01 a standard error)
        assert (np.abs(ours - theirs.mean(0)) < 4 * np.maximum(se, 0.01)).all()
        assert np.abs(ours).max() > 0.2        # lopsided scores: a clear favourite


@pytest.mark.parametrize("spec", ["openspiel:ismcts?simulations=6&seed=3",
                                  "openspiel:mcts?simulations=6&worlds=2&seed=3"])
def test_the_openspiel_agents_play_whole_games_as_bots(spec):
    bot = make_agent(spec)
    result = play_game([bot, make_agent("random", seed=1)], Rules(target=61), seed=5)
    assert result.winner in (0, 1)
    again = play_game([make_agent(spec), make_agent("random", seed=1)], Rules(target=61), seed=5)
    assert again.scores == result.scores                     # the seed fixes every choice


def test_the_ismcts_agent_plays_three_and_four_players_and_pickles():
    game = Game(Rules(num_players=4), seed=2)
    bot = make_agent("openspiel:ismcts?simulations=4", seed=0)
    for _ in range(12):
        legal = game.legal_actions()
        card = bot.choose(game.view(game.current_player), legal) if len(legal) > 1 else legal[0]
        game.step(card)
    game = Game(Rules(num_players=3), seed=2)
    copy = pickle.loads(pickle.dumps(bot))          # worker processes get it whole
    assert copy.choose(game.view(game.current_player), game.legal_actions()) in \
        game.legal_actions()


@pytest.mark.parametrize("spec, word", [
    ("openspiel:ismcts?simulations=0", "simulations"),
    ("openspiel:ismcts?simulations=1000000", "simulations"),
    ("openspiel:ismcts?uct_c=-1", "uct_c"),
    ("openspiel:ismcts?uct_c=nan", "uct_c"),
    ("openspiel:mcts?rollouts=1000", "rollouts"),
    ("openspiel:mcts?simulations=10&worlds=11", "worlds"),
    ("openspiel:ismcts?world_samples=0", "world_samples"),
    ("openspiel:ismcts?final_policy=best", "final_policy"),
    ("openspiel:mcts?solve=maybe", "solve"),
    ("openspiel:ismcts?worlds=2", "worlds"),
    ("openspiel:ismcts?simulations=ten", "simulations"),
    ("openspiel:alphazero", "algorithm"),
    ("openspiel:", "algorithm"),
])
def test_budgets_and_settings_are_checked_when_the_spec_is_read(spec, word):
    with pytest.raises(ValueError, match=word):
        make_agent(spec)


def test_without_openspiel_the_core_imports_and_the_error_names_the_extra():
    code = """
import sys
sys.modules['pyspiel'] = None                  # as if open_spiel were not installed
import cribenv
cribenv.env().reset(seed=0)
from agents import make_agent
from agents.base import available_agents
assert 'openspiel' in available_agents()
try:
    make_agent('openspiel:ismcts')
except ImportError as exc:
    assert "cribenv[openspiel]" in str(exc), exc
else:
    raise AssertionError('no ImportError')
try:
    import cribenv.integrations.openspiel
except ImportError as exc:
    assert "cribenv[openspiel]" in str(exc), exc
else:
    raise AssertionError('no ImportError')
assert not any(m.startswith('open_spiel') for m in sys.modules)
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


# ---------------------------------------------------------------------- training on it
def test_the_policy_gradient_example_trains_a_little():
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import openspiel_policy_gradient as example
    finally:
        sys.path.pop(0)
    result = example.main(["--episodes", "2", "--eval-games", "1", "--critic-steps", "1",
                           "--seed", "0"])
    assert result["episodes"] == 2 and len(result["losses"]) == 2
    assert all(np.isfinite(loss).all() for loss in result["losses"])   # it learned each game
    assert -3 <= result["mean_return"] <= 3


# ---------------------------------------------------------------------- speed
def test_the_bench_measures_our_game_beside_openspiels_cpp_cribbage(capsys):
    from cribenv.cli import main

    assert main(["bench", "--only", "openspiel", "--seconds", "0.1", "-q"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"python_cribenv \(cribenv engine, Python\)\s+([\d,]+)\s+\S+\s+\S+"
                      r"\s+([\d.]+)x", out)
    cpp = re.search(r"OpenSpiel cribbage \(C\+\+\)\s+([\d,]+)", out)
    assert found and cpp, out
    ours, theirs = (int(m.group(1).replace(",", "")) for m in (found, cpp))
    assert float(found.group(2)) == pytest.approx(ours / theirs, rel=0.05, abs=0.01)
