"""OpenSpiel's own tools on ``python_cribenv``, as an OpenSpiel user first tries them:
``evaluate_bots`` with information-set MCTS, ``generate_playthrough`` and the observers it
asks for, chance nodes that always end the game, and serialisation that never unpickles.
"""

from __future__ import annotations

import base64
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the 'openspiel' extra (open_spiel)")

from open_spiel.python.algorithms import evaluate_bots, mcts  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

from cribenv.integrations import openspiel as osp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- evaluate_bots
@pytest.mark.parametrize("spec", ["python_cribenv(target=61)",
                                  "python_cribenv(players=3,target=61)"])
def test_evaluate_bots_plays_a_whole_game_with_the_shipped_ismcts_bot(spec):
    """OpenSpiel's ISMCTSBot has no restart_at, so evaluate_bots stopped at its first line;
    ours plays the game to the end from both of OpenSpiel's evaluate_bots, its search seeing
    only its seat's information state."""
    game = pyspiel.load_game(spec)
    n = game.num_players()
    rng = np.random.RandomState(0)
    bot = osp.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 3, random_state=rng)
    others = [UniformRandomBot(p, rng) for p in range(1, n)]
    state = game.new_initial_state()
    returns = evaluate_bots.evaluate_bots(state, [bot, *others], rng)
    assert state.is_terminal() and returns == state.returns()
    assert sum(returns) == pytest.approx(0) and any(returns)
    returns = pyspiel.evaluate_bots(game.new_initial_state(), [bot, *others], 1)
    assert sum(returns) == pytest.approx(0) and any(returns)
    bot.restart_at(state)                   # and it starts a new game afresh
    assert bot._nodes == {} and bot._root_samples == []


def test_the_docs_ismcts_game_is_ten_lines_and_runs(capsys):
    """docs/openspiel.md's first example: as many lines as its heading says, and it prints
    zero-sum returns."""
    text = (ROOT / "docs" / "openspiel.md").read_text()
    heading, rest = text.split("## An ISMCTS game in ", 1)[1].split("\n", 1)
    code = rest.split("```python\n", 1)[1].split("```", 1)[0]
    assert heading == "ten lines" and len(code.splitlines()) == 10
    exec(compile(code, "docs/openspiel.md", "exec"), {})
    returns = [float(x) for x in capsys.readouterr().out.strip().strip("[]").split(",")]
    assert len(returns) == 2 and sum(returns) == 0 and returns[0] != 0


# ---------------------------------------------------------------------- observers, playthrough
def kind(public: bool, private: str, recall: bool = False):
    return pyspiel.IIGObservationType(public_info=public, perfect_recall=recall,
                                      private_info=getattr(pyspiel.PrivateInfoType, private))


def test_generate_playthrough_runs_and_replays_the_same():
    """OpenSpiel's playthrough asks for the information state (perfect recall), the public
    information alone and each seat's private cards alone; it runs to the end of a game and
    replaying its file gives the same lines."""
    from open_spiel.python.algorithms import generate_playthrough

    lines = generate_playthrough.playthrough_lines("python_cribenv(target=61)", seed=3)
    assert any(line.startswith("PublicObservationString() = ") for line in lines)
    assert any(line.startswith("PrivateObservationString(1) = \"seat 1 | holds")
               for line in lines)
    assert "IsTerminal() = True" in lines and lines[-1].startswith("Returns() = ")
    actions = [int(line.split()[1]) for line in lines if line.startswith("action: ")]
    again = generate_playthrough.playthrough_lines("python_cribenv(target=61)",
                                                   action_sequence=actions, seed=4)
    assert again == lines                 # as OpenSpiel's replay of a playthrough file


def test_public_and_private_observers_split_the_view():
    """Two states that differ only in the hidden cards: the public observation is the same
    for every seat; each seat's private observation is its own cards and nothing else; the
    two together are the view, as the default observer (and perfect recall) gives it."""
    game = pyspiel.load_game("python_cribenv(dealer=0)")
    a, b = game.new_initial_state(), game.new_initial_state()
    for k in range(12):            # seat 1 gets the even draws, seat 0 the odd ones
        a.apply_action(20 + k if k % 2 == 0 else k - 1)
        b.apply_action(40 + k if k % 2 == 0 else k - 1)
    for state in (a, b):
        state.apply_action(state.legal_actions()[0])      # seat 1 lays a card away
    public = game.make_py_observer(kind(True, "NONE"))
    private = game.make_py_observer(kind(False, "SINGLE_PLAYER"))
    full = game.make_py_observer(kind(True, "SINGLE_PLAYER", recall=True))
    assert set(private.dict) == set(osp.PRIVATE_BLOCKS)
    assert not set(public.dict) & set(private.dict)
    assert set(full.dict) == set(public.dict) | set(private.dict) | {"unseen_ranks"}
    for seat in (0, 1):
        public.set_from(a, seat)
        seen = public.tensor.copy()
        public.set_from(b, seat)
        assert np.array_equal(seen, public.tensor) and seen.any()
        assert public.string_from(a, seat) == public.string_from(b, seat)
        assert "holds" not in public.string_from(a, seat)
        full.set_from(a, seat)
        assert np.array_equal(full.tensor, a.information_state_tensor(seat))
        assert full.string_from(a, seat) == a.information_state_string(seat)
        private.set_from(a, seat)
        for name, block in private.dict.items():
            assert np.array_equal(block, full.dict[name])
            assert np.array_equal(public.dict.get(name, block), block)   # (no overlap)
    assert private.string_from(a, 0) == private.string_from(b, 0) \
        == "seat 0 | holds AC AH 2C 2H 3C 3H | laid away -"      # the same cards
    assert private.string_from(a, 1) != private.string_from(b, 1)
    assert "laid away" in private.string_from(a, 1) and "-" not in private.string_from(a, 1)


@pytest.mark.parametrize("public, private, words", [
    (True, "ALL_PLAYERS", "every seat's private cards, with public information"),
    (False, "ALL_PLAYERS", "every seat's private cards, without public information"),
    (False, "NONE", "no private cards, without public information"),
])
def test_an_observer_kind_refused_is_named_in_words(public, private, words):
    game = pyspiel.load_game("python_cribenv")
    with pytest.raises(ValueError, match=words) as err:
        game.make_py_observer(kind(public, private))
    assert "object at 0x" not in str(err.value)
    with pytest.raises(ValueError, match="take no parameters, got {'x': 1}"):
        game.make_py_observer(kind(True, "SINGLE_PLAYER"), {"x": 1})
    assert game.make_observer({}) is not None           # the default kind, params first


# ---------------------------------------------------------------------- chance and length
def test_chance_outcomes_off_a_chance_node_is_a_clear_error():
    state = pyspiel.load_game("python_cribenv(dealer=0)").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[-1][0])
    with pytest.raises(ValueError, match="for chance nodes; this state is seat 1's decision"):
        state.chance_outcomes()


@pytest.mark.parametrize("spec", ["python_cribenv", "python_cribenv(players=3,target=61)",
                                  "python_cribenv(players=4)",
                                  "python_cribenv(players=3,dealer=2,scores=100:0:119)"])
def test_always_the_first_outcome_and_the_first_card_ends_within_the_bounds(spec):
    """The cut used to tie for ever when chance always gave its first card (every seat cut an
    ace); now the game ends, and max_move_number (decisions plus draws) bounds it."""
    game = pyspiel.load_game(spec)
    state = game.new_initial_state()
    draws = decisions = 0
    while not state.is_terminal() and state.move_number() <= game.max_move_number():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
            draws += 1
        else:
            state.apply_action(state.legal_actions()[0])
            decisions += 1
    assert state.is_terminal() and state.move_number() == draws + decisions
    assert decisions <= game.max_game_length() and draws <= game.max_chance_nodes_in_history()
    assert game.max_move_number() == game.max_game_length() + game.max_chance_nodes_in_history()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_cut_never_ties_and_the_first_dealer_is_uniform(players):
    """Exactly, over the whole cut: the outcomes of each cut node grouped by rank (the cards of
    a rank are alike here), each seat deals with probability 1 / players, as the engine's cut
    with ties cut again gives by symmetry; the cut is one card a seat and never a rank twice."""
    game = pyspiel.load_game("python_cribenv", {"players": players})
    dealer = [0.0] * players

    def walk(state, p: float) -> None:
        if state.game.chance_due != "cut":
            assert state.move_number() == players
            dealer[state.game.dealer] += p
            return
        by_rank: dict[int, list[tuple[int, float]]] = {}
        for card, q in state.chance_outcomes():
            by_rank.setdefault(card // 4, []).append((card, q))
        cut = {a // 4 for a in state.history()}
        assert not cut & set(by_rank) and len(by_rank) == 13 - len(cut)
        for outcomes in by_rank.values():
            walk(state.child(outcomes[0][0]), p * sum(q for _, q in outcomes))

    walk(game.new_initial_state(), 1.0)
    assert dealer == pytest.approx([1 / players] * players, abs=1e-12)
    state = game.new_initial_state().child(0)                 # AC cut: no other ace now
    with pytest.raises(ValueError, match="AD cannot be cut: a card of its rank is cut"):
        state.apply_action(1)
    assert state.history() == [0]


# ---------------------------------------------------------------------- serialisation
def crafted(path: Path, game: str = "python_cribenv()") -> str:
    """OpenSpiel's serialized form for a Python game, its pickled __dict__ replaced by one that
    would create ``path`` when unpickled."""
    class Payload:
        def __reduce__(self):
            return (Path.touch, (path,))
    pickled = base64.b64encode(pickle.dumps({"x": Payload()})).decode()
    return ("# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\n"
            f"Version: 1\n\n[Game]\n{game}\n[State]\nhistory=-1:0\nmove_number=1\n"
            f"__dict__={pickled}\n")


@pytest.mark.parametrize("game", ["python_cribenv()", "python_cribenv(players=3,target=61)",
                                  "misere(game=python_cribenv())"])
def test_a_crafted_serialized_state_runs_nothing(tmp_path, game):
    """OpenSpiel unpickles a Python game's serialized state: a crafted one ran os.system. The
    game's state is read only as its action history; the pickled form is refused, by name,
    and the payload never runs (here it would create a file), also through a game transform
    holding python_cribenv, or handed to the game's deserialize_state."""
    marker = tmp_path / "ran"
    text = crafted(marker, game)
    with pytest.raises(ValueError, match="python_cribenv") as err:
        pyspiel.deserialize_game_and_state(text)
    assert not marker.exists()
    if game.startswith("python_cribenv"):
        assert "pickled form" in str(err.value) and "line 1 is 'history=-1:0'" in str(err.value)
        with pytest.raises(ValueError, match="pickled form"):
            pyspiel.load_game(game).deserialize_state(text.split("[State]\n", 1)[1])
        assert not marker.exists()


@pytest.mark.parametrize("spec", ["python_cribenv", "python_cribenv(players=3,target=61)",
                                  "python_cribenv(players=4,dealer=1,scores=60:50)"])
def test_serialisation_is_the_action_history_and_round_trips(spec):
    """pyspiel.serialize_game_and_state, state.serialize() and pickle all write the action
    history (digits, one action a line) and read back the same state: at the start, in the
    cut or the deal, mid-hand and at the end."""
    game = pyspiel.load_game(spec)
    state = game.new_initial_state()
    rng = np.random.default_rng(len(spec))
    checked = 0
    while True:
        if state.move_number() in (0, 1, 9, 40, 41, 97) or state.is_terminal():
            text = pyspiel.serialize_game_and_state(game, state)
            section = text.split("[State]\n", 1)[1]
            assert set(section) <= set("0123456789\n") and section.endswith("\n")
            assert section.count("\n") == max(1, len(state.history()))
            copies = [pyspiel.deserialize_game_and_state(text)[1],
                      game.deserialize_state(state.serialize()),
                      pickle.loads(pickle.dumps(state))]
            for copy in copies:
                assert str(copy) == str(state) and copy.history() == state.history()
                assert copy.is_terminal() == state.is_terminal()
                assert copy.returns() == state.returns()
                for seat in range(game.num_players()):
                    assert copy.information_state_string(seat) == \
                        state.information_state_string(seat)
            checked += 1
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    assert checked == 7


def test_a_bad_history_is_refused_by_its_line():
    game = pyspiel.load_game("python_cribenv(dealer=0)")
    for text, words in [("0\n0", "line 2, action 0, is not legal there"),
                        ("0\nAC", "line 2 is 'AC'"), ("0\n\n1", "line 2 is ''"),
                        ("52", "line 1, action 52, is not legal"), ("-1", "line 1 is '-1'"),
                        ("\n".join(["0"] * 10**5), "longer than any game")]:
        with pytest.raises(ValueError, match=re.escape(words)):
            game.deserialize_state(text)
    with pytest.raises(ValueError, match="sections in that order"):
        pyspiel.deserialize_game_and_state("[State]\n0\n[Game]\npython_cribenv()\n")
    with pytest.raises(ValueError, match="cannot load the game 'python_cribenv\\(players=9\\)'"):
        pyspiel.deserialize_game_and_state("[Meta]\n[Game]\npython_cribenv(players=9)\n"
                                           "[State]\n")
    kuhn = pyspiel.load_game("kuhn_poker")                    # other games: OpenSpiel's own
    text = pyspiel.serialize_game_and_state(kuhn, kuhn.new_initial_state().child(1))
    assert pyspiel.deserialize_game_and_state(text)[1].history() == [1]


def test_openspiels_own_python_game_checks_pass():
    """open_spiel.python.tests.games_sim_test's sim_game, as OpenSpiel runs it on its Python
    games: clones, pyspiel and pickle serialisation every power of two moves, the game and
    its type pickled."""
    from open_spiel.python.tests.games_sim_test import GamesSimTest

    for spec in ["python_cribenv(target=61)", "python_cribenv(players=4,target=61)"]:
        GamesSimTest().sim_game(pyspiel.load_game(spec))
