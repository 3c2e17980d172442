"""``cribenv expert-iteration --ray``: a round played on a local Ray cluster (the games on a
worker node) writes the files of the same round played here, and a bad address is refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray", reason="the 'ray' extra is not installed")
pytest.importorskip("torch")
pytest.importorskip("numba")

from ray_cluster import head_and_worker  # noqa: E402

from cribenv.cli import main  # noqa: E402
from train import evaluation  # noqa: E402
from train import expert_iteration as ei  # noqa: E402
from train import iteration_games as games  # noqa: E402

#: from the rules alone, as the chain runs it; 3 games and 6 evaluation games an opponent, in
#: chunks of 1 and 2 games, so several chunks are in flight on the worker's 2 CPUs
ARGS = ["--models", "own", "--base", "scratch", "--rounds", "1", "--games", "3",
        "--playouts", "20", "--epochs", "2", "--eval-games", "6", "--seed", "3"]


def files(run: Path) -> dict[str, object]:
    """Every file of a run folder: a chunk's arrays (its zip holds the time it was written),
    any other file's bytes."""
    out: dict[str, object] = {}
    for path in sorted(p for p in run.rglob("*") if p.is_file()):
        if path.suffix == ".npz":
            with np.load(path) as z:
                out[str(path.relative_to(run))] = {k: z[k].tobytes() for k in z.files}
        else:
            out[str(path.relative_to(run))] = path.read_bytes()
    return out


@pytest.mark.slow
def test_a_round_on_a_cluster_writes_the_files_of_a_round_here(tmp_path, monkeypatch):
    monkeypatch.setattr(games, "CHUNK_GAMES", 1)
    monkeypatch.setattr(ei, "CHUNK_GAMES", 2)
    monkeypatch.setenv("RAY_worker_niceness", "0")   # beside other jobs on a shared machine
    assert main(["expert-iteration", "--run-dir", str(tmp_path / "here"), *ARGS,
                 "--workers", "1"]) == 0
    def here_only(*_args, **_kwargs):
        raise AssertionError("a game of the Ray run was played in this process")

    # the Ray workers import these afresh: only a game played here would fail
    monkeypatch.setattr(games, "play_chunk", here_only)
    monkeypatch.setattr(evaluation, "evaluate", here_only)
    cluster = head_and_worker(2)
    c, worker = next(cluster)
    try:
        assert main(["expert-iteration", "--run-dir", str(tmp_path / "ray"), *ARGS,
                     "--ray", c.address]) == 0
    finally:
        next(cluster, None)
    here, there = files(tmp_path / "here"), files(tmp_path / "ray")
    assert {f"round-1/games/chunk-000{c}.npz" for c in range(3)} | {
        "round-1/policy.safetensors", "round-1/fit.json", "round-1/eval.json",
        "settings.json"} <= set(here)
    assert json.loads(here["round-1/eval.json"])["base"]["games"] == 6
    assert there == here


def test_a_bad_address_is_refused_and_nothing_is_written(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["expert-iteration", "--run-dir", str(run), *ARGS, "--ray", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot join the Ray cluster at '127.0.0.1:1'" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err and not run.exists()
