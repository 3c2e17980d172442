"""train/compare_runs.py: several runs' learning curves in one figure, from their eval.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from train import compare_runs  # noqa: E402


def write_eval(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    with (folder / "eval.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return folder


def row(step, wall=None, regret=None, p=0.4):
    r = {"step": step, "greedy_win_rate": p, "greedy_win_lo": p - 0.05,
         "greedy_win_hi": p + 0.05, "expert_win_rate": p - 0.1,
         "expert_win_lo": p - 0.15, "expert_win_hi": p - 0.05}
    if regret is not None:
        r["throw_regret"] = regret
    if wall is not None:
        r["wall_s"] = wall
    return r


def test_two_runs_one_figure(tmp_path, capsys):
    new = write_eval(tmp_path / "new", [row(0, 0.0, 1.2), row(2_000_000, 600.0, 0.3, 0.55)])
    old = write_eval(tmp_path / "old", [row(0), row(3_000_000, p=0.45)])  # no wall_s, no regret
    out = tmp_path / "curves.png"
    assert compare_runs.main([f"recipe={new}", str(old), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and str(out) in capsys.readouterr().out
    runs = compare_runs.read_runs([f"recipe={new}", str(old)])
    assert list(runs) == ["recipe", "old"] and compare_runs.bots(runs) == ["greedy", "expert"]


def test_panels_hold_what_each_run_has(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    new = write_eval(tmp_path / "new", [row(0, 0.0, 1.2), row(2_000_000, 600.0, 0.3, 0.55)])
    old = write_eval(tmp_path / "old", [row(0), row(3_000_000, p=0.45)])
    closed = []
    monkeypatch.setattr(plt, "close", lambda fig=None: closed.append(fig))
    compare_runs.plot_runs(compare_runs.read_runs([f"a={new}", f"b={old}"]), tmp_path / "f.png")
    fig = closed[0]
    axes = fig.axes
    assert len(axes) == 6          # greedy, expert, regret x (decisions, minutes)
    labels = [[line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
              for ax in axes]
    # top row, against decisions: both runs' win rates, the regret of the new run only
    assert labels[0] == ["a", "b"] and labels[1] == ["a", "b"] and labels[2] == ["a"]
    # bottom row, against minutes: the old run has no wall_s
    assert labels[3] == ["a"] and labels[5] == ["a"]
    assert axes[2].get_title().startswith("throw regret")


def test_bad_runs_are_clear_errors(tmp_path, capsys):
    out = tmp_path / "f.png"
    assert compare_runs.main([str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "nowhere" in capsys.readouterr().err and not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "eval.csv").write_text("step,greedy_win_rate\n")
    assert compare_runs.main([str(empty), "--out", str(out)]) == 2
    assert "no readable evaluation row" in capsys.readouterr().err
    a = write_eval(tmp_path / "a", [row(0)])
    assert compare_runs.main([f"x={a}", f"x={a}", "--out", str(out)]) == 2
    assert "twice" in capsys.readouterr().err
