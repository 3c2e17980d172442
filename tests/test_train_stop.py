"""``cribenv train`` stopped by a signal during a long evaluation (a search bot's games): it
stops at once, keeps its checkpoint and resumes; a second trainer on its folder meanwhile is
refused. A real process, killed: slow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cribenv.cli import main

pytest.importorskip("torch")

TINY = ["--n-games", "8", "--n-steps", "16", "--minibatch-size", "64", "--n-epochs", "1",
        "--net-arch", "16", "--card-dim", "4", "--snapshot-every", "128",
        "--checkpoint-every", "256", "--eval-every", "128", "--pool-size", "3", "--no-progress"]
#: an evaluation of many minutes: 200 games against a search of 5,000 playouts a decision
LONG_EVALUATION = ["--heuristics", "search:expert?playouts=5000", "--eval-games", "200"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_stop_signal_ends_a_long_evaluation_and_keeps_the_checkpoint(tmp_path, capsys, sig):
    """With heuristics ["search:expert?playouts=5000"], SIGTERM and SIGINT were ignored until
    the evaluation ended (127 s later, still running; with a million playouts 16 minutes).
    The evaluation is now given up at the signal: the run checkpoints, says how to resume and
    exits 130 within seconds (60 s allowed: a busy machine); the resume plays it."""
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "cribenv.cli", "train", "--run-dir", str(run), *TINY,
           *LONG_EVALUATION, "--total-steps", "300"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    output = tmp_path / "output.txt"
    evaluating = run / "pool" / "learner-eval.safetensors"   # written as an evaluation starts
    with output.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 600       # starting torch and numba on a busy machine
            while not evaluating.exists() and proc.poll() is None:
                assert time.monotonic() < deadline, output.read_text()
                time.sleep(0.05)
            assert proc.poll() is None, output.read_text()
            # meanwhile a second trainer on the folder is refused (one run a folder)
            assert main(["train", "--run-dir", str(run), "--resume", "--no-progress"]) == 2
            assert "is in use by another training run" in capsys.readouterr().err
            proc.send_signal(sig)
            status = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    said = output.read_text()
    assert status == 130, said
    assert "Traceback" not in said and f"--run-dir {run} --resume" in said
    assert (run / "checkpoints" / "LATEST").read_text().strip() == "step-000000000"
    assert not (run / "eval.csv").exists()           # the evaluation given up left no row
    assert "stopped at step 0" in said and "nothing left to train" not in said
    if sig != signal.SIGTERM:
        return
    # the resume plays the evaluation it left (here of 2 games, and the final one: quick)
    assert main(["train", "--run-dir", str(run), "--resume", "--eval-games", "2",
                 "--eval-every", "100000", "--total-steps", "300"]) == 0
    with (run / "eval.csv").open() as f:
        steps = [line.split(",")[0] for line in f][1:]
    assert steps[0] == "0" and len(steps) == len(set(steps))
