"""The trainer's speed scripts: ``scripts/trainer_side_by_side.py`` and
``scripts/trainer_floor.py`` (their measurements are in ``results/trainer-speed``; here, that
they start and refuse bad input)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_side_by_side_script_says_what_it_runs_and_refuses_no_steps():
    shown = _run("trainer_side_by_side.py", "--help")
    assert shown.returncode == 0 and "--old" in shown.stdout and "6f034a7" in shown.stdout
    bad = _run("trainer_side_by_side.py", "--steps", "0")
    assert bad.returncode == 2 and "--steps" in bad.stderr and "Traceback" not in bad.stderr


def test_the_floor_script_times_one_round_of_the_recipe():
    out = _run("trainer_floor.py", "--repeats", "1")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.strip().startswith(
        ("PPO update", "throw values", "together"))]
    assert len(lines) == 3
    update, fit, together = (float(line.split(" s")[0].split()[-1]) for line in lines)
    assert update > 0 and fit > 0 and abs(together - update - fit) <= 0.002
