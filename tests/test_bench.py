"""Smoke runs of ``cribenv bench`` with a tiny time budget (no timing assertions)."""

from __future__ import annotations

import json
import re

import pytest

from cribenv.cli import main
from cribenv.commands import bench

NUMBER = r"\d[\d,]*(\.\d+)?"
RATIO = NUMBER + "x"


def test_bench_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--seconds" in out and "--only" in out and "--json" in out


def test_bench_engine_and_env_print_rates_and_ratios(tmp_path, capsys):
    path = tmp_path / "bench.json"
    rc = main(["bench", "--seconds", "0.05", "--only", "engine", "--only", "env", "-q",
               "--json", str(path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "(b) engine" in out and "(c) environments" in out and "(a) scoring" not in out
    assert re.search(rf"2 players\s+{NUMBER}\s+{NUMBER}", out)
    raw = re.search(rf"cribenv raw AEC \(CribbageEnv\)\s+{NUMBER}\s+{NUMBER}", out)
    wrapped = re.search(
        rf"cribenv wrapped AEC \(cribenv.env\(\)\)\s+{NUMBER}\s+{NUMBER}(?P<rest>.*)", out)
    assert raw and wrapped
    assert re.search(r"single-agent Gymnasium \(learner steps\)\s+" + NUMBER, out)
    data = json.loads(path.read_text())
    envs = data["env"]["envs"]
    assert envs["cribenv_raw"]["steps_per_s"] > 0 and envs["cribenv_wrapped"]["steps_per_s"] > 0
    assert data["engine"]["2p"]["decisions_per_s"] > 0
    for peer in bench.PEERS:
        ratio = data["env"]["ratios"]["cribenv_wrapped"][peer]
        if envs[peer] is None:        # not installed here: a note, and n/a in the table
            assert any(peer_label in note for note in data["env"]["notes"]
                       for peer_label in ("leduc", "OpenSpiel"))
            assert ratio is None
        else:
            assert ratio == pytest.approx(envs["cribenv_wrapped"]["steps_per_s"]
                                          / envs[peer]["steps_per_s"])
            assert re.search(RATIO, wrapped.group("rest"))


def test_bench_scoring_prints_ratios_and_the_full_enumeration(capsys):
    assert main(["bench", "--seconds", "0.02", "--only", "scoring", "-q"]) == 0
    out = capsys.readouterr().out
    for label in ("reference scorer", "score_hand_ids", "score_hands (numpy"):
        assert re.search(rf"{re.escape(label)}.*?\s{NUMBER}\s+{RATIO}", out), label
    assert "12,994,800" in out and "check ok" in out
    assert re.search(r"estimated", out)


def test_missing_peers_are_a_note_not_a_crash(monkeypatch, capsys):
    def missing():
        raise ImportError("No module named 'rlcard'")

    envs = [(key, label, missing if key in bench.PEERS else factory, kind)
            for key, label, factory, kind in bench.ENVS]
    monkeypatch.setattr(bench, "ENVS", envs)
    assert main(["bench", "--seconds", "0.02", "--only", "env", "-q"]) == 0
    out = capsys.readouterr().out
    assert "note: skipped PettingZoo leduc_holdem_v4: ImportError" in out
    assert "note: skipped OpenSpiel cribbage" in out
    assert re.search(r"cribenv wrapped AEC.*n/a\s+n/a", out)


def test_bad_seconds_is_an_error(capsys):
    assert main(["bench", "--seconds", "0", "--only", "engine"]) == 2
    assert "--seconds" in capsys.readouterr().err
