"""Hostile inputs at the engine's boundaries: Rules, the envs' constructors, reset options,
step and observe. Each bad value is refused with an error naming it, and leaves nothing
changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cribenv
from cribenv.game import Deal, Game, IllegalActionError, Rules
from cribenv.wrappers import SingleAgentCribbageEnv

BAD_ACTIONS = [5.7, 5.0, np.float32(5), "5", None, True, np.True_, [5], "5H"]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_raw_env_refuses_non_integer_actions(action):
    env = cribenv.raw_env()
    env.reset(seed=1)
    before = env.game.to_record()
    with pytest.raises(TypeError, match="card id") as info:
        env.step(action)
    assert repr(action) in str(info.value)
    assert env.game.to_record() == before     # nothing was played


def test_raw_env_takes_numpy_integers():
    env = cribenv.raw_env()
    env.reset(seed=1)
    card = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    env.step(np.uint64(card))
    assert env.game.actions == [card]


@pytest.mark.parametrize("action", [True, 5.7, None, 52, -1], ids=repr)
def test_wrapped_env_names_the_refused_action(action):
    env = cribenv.env()
    env.reset(seed=1)
    with pytest.raises(AssertionError, match=f"action {action!r} is not in the action space"):
        env.step(action)
    assert env.unwrapped.game.actions == []


def test_single_agent_env_refuses_bools():
    env = SingleAgentCribbageEnv(opponent="random", seed=0)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action True"):
        env.step(True)


def test_step_before_reset_and_after_the_end():
    env = cribenv.raw_env()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(3)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe("player_0")
    env.reset(seed=2)
    while env.agents:
        agent = env.agent_selection
        done = env.terminations[agent]
        env.step(None if done else int(env.observe(agent)["action_mask"].argmax()))
    with pytest.raises(RuntimeError, match="every agent"):
        env.step(None)


def test_observe_returns_arrays_the_caller_owns():
    env = cribenv.raw_env()
    env.reset(seed=3)
    agent = env.agent_selection
    for _ in range(2):                # the first (computed) and a repeated (cached) observe
        first = env.observe(agent)
        legal, seen = first["action_mask"].copy(), first["observation"].copy()
        first["action_mask"][:] = 1
        first["observation"][:] = 2.0
        again = env.observe(agent)
        assert (again["action_mask"] == legal).all() and legal.sum() == 6   # the dealt hand
        assert (again["observation"] == seen).all()


BAD_RULES = [
    ({"must_peg_out_exactly": "no"}, "must_peg_out_exactly"),
    ({"must_peg_out_exactly": 1}, "must_peg_out_exactly"),
    ({"num_players": 2.0}, "num_players"),
    ({"num_players": True}, "num_players"),
    ({"target": 121.0}, "target"),
    ({"target": "121"}, "target"),
    ({"skunk_line": 90.5}, "skunk_line"),
    ({"double_skunk_line": "61"}, "double_skunk_line"),
]


@pytest.mark.parametrize("kwargs,name", BAD_RULES, ids=str)
def test_rules_refuse_wrong_types(kwargs, name):
    with pytest.raises((TypeError, ValueError), match=name):
        Rules(**kwargs)


@pytest.mark.parametrize("kwargs,name", BAD_RULES + [
    ({"skunks": "yes"}, "skunks"), ({"shaping": "0.1"}, "shaping"),
    ({"shaping": float("nan")}, "shaping"), ({"must_peg_out": True}, "must_peg_out"),
], ids=str)
def test_env_constructors_refuse_wrong_types(kwargs, name):
    with pytest.raises((TypeError, ValueError), match=name):
        cribenv.env(**kwargs)


def test_rules_keep_good_values():
    rules = Rules(num_players=np.int64(4), target=61, must_peg_out_exactly=np.bool_(True))
    assert (rules.num_players, type(rules.num_players)) == (4, int)
    assert rules.must_peg_out_exactly is True
    assert rules.skunk_line == 31


DEAL = Deal(None, [["AH", "2H", "3H", "4H", "5H", "6H"], ["AS", "2S", "3S", "4S", "5S", "6S"]],
            "KD")

BAD_OPTIONS = [
    ({"first_dealer": True}, "first_dealer"),
    ({"first_dealer": 2}, "first_dealer"),
    ({"game_seed": "x"}, "game_seed"),
    ({"game_seed": 1.5}, "game_seed"),
    ({"deal": [DEAL]}, "'deal'.*did you mean 'deals'"),
    ({"deals": DEAL}, "list of Deal"),
    ({"deals": "AH 2H"}, "list of Deal"),
    ({"deals": [None]}, "None"),
    ({"deals": [{"hands": DEAL.hands}]}, "missing starter"),
    ({"deals": [{"hands": DEAL.hands, "starter": "KD", "dealr": 0}]}, "dealr"),
    ({"deals": [{"hands": "AH", "starter": "KD"}]}, "hands"),
    ({"deals": [{"hands": [[None] * 6, DEAL.hands[1]], "starter": "KD"}]}, "None"),
]


@pytest.mark.parametrize("options,message", BAD_OPTIONS, ids=str)
def test_reset_refuses_bad_options_and_changes_nothing(options, message):
    env = cribenv.raw_env()
    env.reset(seed=7)
    env.step(int(env.observe(env.agent_selection)["action_mask"].argmax()))
    before = env.game.to_record()
    with pytest.raises((TypeError, ValueError), match=message):
        env.reset(options=options)
    assert env.game.to_record() == before
    env.reset()                       # the seeded sequence went on as if nothing was asked
    twin = cribenv.raw_env()
    twin.reset(seed=7)
    twin.reset()
    assert env.game.to_record() == twin.game.to_record()


def test_reset_takes_deal_dicts_and_ignores_foreign_options():
    env = cribenv.raw_env()
    env.reset(seed=1, options={"deals": [DEAL.to_dict()], "first_dealer": 1, "options": 1})
    assert env.game.dealer == 1
    assert sorted(env.game.hands[0]) == sorted(Deal.normalised(DEAL, env.rules).hands[0])


def test_game_refuses_seeds_it_cannot_record():
    with pytest.raises(TypeError, match="seed must be an int, got 'x'"):
        Game(seed="x")
    assert Game(seed=np.int64(5)).to_json() == Game(seed=5).to_json()


def test_single_agent_info_mask_is_the_callers():
    env = SingleAgentCribbageEnv(opponent="random", seed=0)
    _, info = env.reset(seed=0)
    legal = env.action_masks().copy()
    info["action_mask"][:] = 1                   # the caller's copy
    assert (env.action_masks() == legal).all()
    card = int(np.flatnonzero(~legal)[0])
    with pytest.raises(IllegalActionError):
        env.step(card)


def test_action_mask_needs_no_observation_and_matches_it():
    env = cribenv.raw_env()
    env.reset(seed=4)
    agent = env.agent_selection
    assert (env.action_mask() == env.observe(agent)["action_mask"]).all()
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        env.observe("player_9")


def test_the_fuzzer_runs_clean_and_catches_a_planted_bug(monkeypatch, capsys):
    from cribenv import fuzz

    assert fuzz.main(["--seconds", "2", "--seed", "1"]) == 0
    assert " games, " in capsys.readouterr().out
    monkeypatch.setattr(cribenv.aec.CribbageEnv, "_mask",
                        staticmethod(lambda game, seat: np.zeros(52, np.int8)))
    assert fuzz.main(["--seconds", "2"]) == 1
    assert "--repro" in capsys.readouterr().err


def test_a_crash_is_a_violation_too_and_repro_replays_it(monkeypatch, capsys):
    from cribenv import fuzz

    def planted(self):
        raise KeyError("planted")

    monkeypatch.setattr(cribenv.game.Game, "to_json", planted)   # at every game's end
    assert fuzz.main(["--seconds", "2", "--seed", "3"]) == 1
    err = capsys.readouterr().err
    assert "KeyError('planted')" in err and "after 0 clean games" in err
    seed = int(err.rsplit("--repro ", 1)[1].split()[0])
    assert fuzz.main(["--repro", str(seed)]) == 1
    assert f"violation in game seed {seed}: KeyError('planted')" in capsys.readouterr().err


def test_python_m_cribenv_fuzz_exits_nonzero_on_a_violation():
    """What CI runs (``python -m cribenv.fuzz``): status 0 when clean, 1 with a planted bug."""
    root = Path(__file__).resolve().parents[1]
    clean = subprocess.run([sys.executable, "-m", "cribenv.fuzz", "--seconds", "1"], cwd=root,
                           capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0 and "0 violations" in clean.stdout, clean.stderr
    planted = ("import runpy, numpy as np, cribenv.aec as aec\n"
               "aec.CribbageEnv._mask = staticmethod(lambda game, seat: np.zeros(52, np.int8))\n"
               "runpy.run_module('cribenv.fuzz', run_name='__main__')\n")
    bad = subprocess.run([sys.executable, "-c", planted, "--seconds", "5"], cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "violation in game seed" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr
