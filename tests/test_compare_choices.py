"""``scripts/compare_choices.py``: the share of decisions where two agents choose differently."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "scripts" / "compare_choices.py"
spec = importlib.util.spec_from_file_location("compare_choices", PATH)
compare_choices = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_choices)


def test_doctests():
    assert doctest.testmod(compare_choices).failed == 0


def test_different_agents_differ_and_the_counts_add_up():
    from agents import make_agent

    r = compare_choices.compare(make_agent("expert"), make_agent("greedy"), games=2)
    assert r["throws"] >= 8 and r["plays"] >= 8       # about 9 hands a game, both seats
    assert 0 < r["throws_differ"] <= r["throws"] and 0 < r["plays_differ"] <= r["plays"]


def test_bad_input_is_exit_2_naming_it(capsys):
    with pytest.raises(SystemExit) as exc:
        compare_choices.main(["--a", "expert", "--b", "ppo:missing.safetensors"])
    assert exc.value.code == 2 and "missing.safetensors" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        compare_choices.main(["--a", "expert", "--b", "greedy", "--games", "0"])
    assert exc.value.code == 2 and "--games must be at least 1, got 0" in capsys.readouterr().err


def test_prints_the_shares(capsys):
    assert compare_choices.main(["--a", "expert", "--b", "expert", "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("throws differ at 0 of ") and "(0.0%)" in out
