"""scripts/paired_tournaments.py: the paired difference of two agents over the same deals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "paired_tournaments.py"


def tournament(tmp_path, label, spec):
    db = tmp_path / f"{label}.sqlite"
    cli = str(Path(sys.executable).parent / "cribenv")
    subprocess.run([cli, "tournament", "--agents", f"{label}={spec}", "random", "--games", "6",
                    "--workers", "1", "--db", str(db), "--out", str(tmp_path / label),
                    "--no-progress", "--bootstrap", "0"], check=True, capture_output=True)
    return db


def test_an_agent_against_itself_differs_by_nothing_and_greedy_beats_random(tmp_path):
    a = tournament(tmp_path, "g1", "greedy")
    b = tournament(tmp_path, "g2", "greedy")
    r = tournament(tmp_path, "r1", "random")
    same = subprocess.run([sys.executable, str(SCRIPT), str(a), "g1", str(b), "g2"],
                          capture_output=True, text=True)
    assert same.returncode == 0 and "+0.0% +- 0.0% over 6 paired games" in same.stdout
    better = subprocess.run([sys.executable, str(SCRIPT), str(a), "g1", str(r), "r1"],
                            capture_output=True, text=True)
    assert better.returncode == 0 and '"games": 6' in better.stdout
    bad = subprocess.run([sys.executable, str(SCRIPT), str(a), "nobody", str(b), "g2"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no game of 'nobody'" in bad.stderr
    missing = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "x.sqlite"), "g1",
                              str(b), "g2"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no tournament database" in missing.stderr


def test_a_round_robin_needs_the_opponent_named(tmp_path):
    """In a round robin the same (deal, seating) is played once per pair: the games of a label
    against several agents are refused unless --opponent picks one."""
    db = tmp_path / "rr.sqlite"
    cli = str(Path(sys.executable).parent / "cribenv")
    subprocess.run([cli, "tournament", "--agents", "greedy", "random", "expert", "--games", "4",
                    "--workers", "1", "--db", str(db), "--out", str(tmp_path / "rr"),
                    "--no-progress", "--bootstrap", "0"], check=True, capture_output=True)
    r = tournament(tmp_path, "r1", "random")
    mixed = subprocess.run([sys.executable, str(SCRIPT), str(db), "greedy", str(r), "r1"],
                           capture_output=True, text=True)
    assert mixed.returncode == 2 and "name one with --opponent" in mixed.stderr
    named = subprocess.run([sys.executable, str(SCRIPT), str(db), "greedy", str(r), "r1",
                            "--opponent", "random"], capture_output=True, text=True)
    assert named.returncode == 0 and '"games": 4' in named.stdout
