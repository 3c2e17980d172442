"""A training command killed mid-run (SIGKILL, no chance to clean up) once it has written a
checkpoint: what the resume tests of the trainers start from."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def train_command(run: Path, total: int, settings: dict) -> list[str]:
    """``cribenv train`` of ``settings`` (flags) into ``run`` for ``total`` steps."""
    cmd = [sys.executable, "-m", "cribenv.cli", "train", "--run-dir", str(run),
           "--total-steps", str(total), "--no-progress"]
    for key, value in settings.items():
        flag = "--" + key.replace("_", "-")
        cmd += ([flag, *map(str, value)] if isinstance(value, list)
                else [flag, str(value).lower() if isinstance(value, bool) else str(value)])
    return cmd


def kill_after_checkpoint(cmd: list[str], run: Path, output: Path, step: int) -> int:
    """Run ``cmd``, SIGKILL it once ``run`` holds a checkpoint at ``step`` or later; returns
    the step of the checkpoint it left."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    latest = run / "checkpoints" / "LATEST"
    with output.open("w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + 600   # a busy machine: starting torch and numba is slow
        while time.time() < deadline and proc.poll() is None:
            if latest.exists() and latest.read_text().strip() >= f"step-{step:09d}":
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert latest.exists(), output.read_text()
    return int(latest.read_text().strip().split("-")[1])
