"""``cribenv demo``: a fresh folder every run, resume only when asked, and a closing list of
exactly the files it wrote (small sizes; the full tour is ``tests/test_cli.py``'s smoke test
and the measured run on docs/install.md)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from cribenv.cli import main

pytest.importorskip("scipy")   # the tournament extra
QUICK = ["--games", "2", "--workers", "1"]


def listed_files(out: str) -> list[Path]:
    """The paths of the closing list ('files written (N, under DIR):' then one a line)."""
    lines = out.split("\nfiles written (", 1)[1].splitlines()[1:]
    return [Path(line.split()[0]) for line in lines if line.startswith("  ")]


def test_every_run_writes_a_fresh_folder_and_lists_exactly_its_files(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--scratch-steps", "0", *QUICK]) == 0
    first = capsys.readouterr().out
    assert main(["demo", "--scratch-steps", "0", *QUICK]) == 0
    second = capsys.readouterr().out
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("demo-") for f in folders)
    for out in (first, second):
        assert "resuming" not in out and "total 29" in out
        files = listed_files(out)
        folder = files[0].parent
        assert folder in {f.relative_to(tmp_path) for f in folders}
        assert f"writing to {folder}" in out
        # every listed file exists, and every file in the folder is listed
        assert all(p.is_file() for p in files)
        assert sorted(files) == sorted(p.relative_to(tmp_path)
                                       for p in (tmp_path / folder).rglob("*") if p.is_file())
        assert {p.name for p in files} >= {"demo.json", "tournament.sqlite", "tournament.png",
                                           "tournament.json", "tournament.csv"}
    assert listed_files(first)[0].parent != listed_files(second)[0].parent


def test_a_folder_with_files_is_refused_without_resume(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["demo", "--run-dir", str(tmp_path), *QUICK]) == 2
    err = capsys.readouterr().err
    assert "already holds files" in err and "--resume" in err and "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]   # nothing written


def test_resume_only_when_asked_and_only_a_demo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--resume", *QUICK]) == 2
    assert "no demo to resume" in capsys.readouterr().err
    (tmp_path / "other").mkdir()
    assert main(["demo", "--resume", "--run-dir", "other", *QUICK]) == 2
    assert "not a demo folder" in capsys.readouterr().err
    assert main(["demo", "--games", "3"]) == 2           # odd: refused before anything runs
    assert "--games" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_demo_resumes_only_with_its_sizes_and_redoes_nothing_done(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("numba")
    run_dir = tmp_path / "demo"
    sizes = ["--scratch-steps", "2048", "--evals", "1", "--eval-games", "2", *QUICK]
    assert main(["demo", "--run-dir", str(run_dir), *sizes]) == 0
    out = capsys.readouterr().out
    assert "Self-play PPO from scratch: 2,048 learner steps" in out
    assert "resumed" not in out and "already trained" not in out
    assert (run_dir / "learning_curve.png").is_file()
    with (run_dir / "selfplay" / "eval.csv").open() as f:
        rows = list(csv.DictReader(f))
    from train.demo import trained_steps

    steps = trained_steps(run_dir / "selfplay")
    # evaluated at the start and once more at the final step (the demo adds it)
    assert [int(r["step"]) for r in rows] == [0, steps]
    # a resume with other sizes is refused, naming them; the run is untouched
    assert main(["demo", "--run-dir", str(run_dir), "--resume", "--games", "4"]) == 2
    assert "--games 4 (the demo has 2)" in capsys.readouterr().err
    # the resume redoes nothing: the heading says so, and no evaluation is added
    assert main(["demo", "--run-dir", str(run_dir), "--resume", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert f"resuming the demo in {run_dir}" in out
    assert f"already trained: {steps:,} steps" in out
    with (run_dir / "selfplay" / "eval.csv").open() as f:
        assert list(csv.DictReader(f)) == rows
    files = listed_files(out)
    assert sorted(files) == sorted(p for p in run_dir.rglob("*") if p.is_file())
