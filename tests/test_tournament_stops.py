"""A tournament that stops: Ctrl-C says how many games are stored and that the same command
resumes; a program that cannot say hello is refused before any game; a run that stored no game
blocks no corrected one; ``--out`` says where the database goes."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.base import ViewAgent, register_agent
from cribenv.cli import main
from tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]


def count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_ctrl_c_says_how_many_games_are_stored_and_the_same_command_resumes(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    argv = ["tournament", "--agents", "random", "r2=random", "--games", "2000", "--workers",
            "1", "--db", str(db), "--no-progress", "--bootstrap", "0"]
    proc = subprocess.Popen([sys.executable, "-m", "cribenv.cli", *argv], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while count(db) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the tournament finished before it could be stopped"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    stored = count(db)
    assert 40 <= stored < 2000
    assert f"interrupted: {stored} of 2000 games are stored in {db}; the same command " \
           "resumes" in err and "Traceback" not in err, err
    assert main(argv) == 0
    assert f"{2000 - stored} games in" in capsys.readouterr().out and count(db) == 2000


def test_a_program_that_cannot_say_hello_is_refused_before_any_game(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    nope = ROOT / "examples" / "nope_bot.py"
    assert not nope.exists()
    assert main(["tournament", "--agents", f"mine=cmd:{sys.executable} {nope}", "random",
                 "--games", "2", "--db", str(db), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "agent 'mine' cannot play, no game was played" in err and "nope_bot.py" in err
    assert "Traceback" not in err and not db.exists()


class Crashes(ViewAgent):
    """Fails at its first decision, as a spec that passed its check once could."""

    name = "test-crashes-at-once"

    def choose(self, view, legal):
        raise RuntimeError("crashed at the first decision")


register_agent(Crashes.name, lambda arg=None, seed=None: Crashes(seed))


def test_a_database_without_a_game_takes_a_corrected_spec(tmp_path):
    db = tmp_path / "t.sqlite"
    with pytest.raises(RuntimeError, match="first decision"):
        run_tournament([f"mine={Crashes.name}", "random"], 2, db_path=db, progress=False,
                       bootstrap=0)
    assert count(db) == 0
    report = run_tournament(["mine=greedy", "random"], 2, db_path=db, progress=False,
                            bootstrap=0)                 # corrected: its games, in that file
    assert report.games == 2 and count(db) == 2
    with pytest.raises(ValueError, match="different settings"):   # games now: kept
        run_tournament(["mine=expert", "random"], 2, db_path=db, progress=False)


def test_out_says_where_the_database_goes(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the results database stays where --db says (by default in tournaments/)" in text
    monkeypatch.chdir(tmp_path)
    assert main(["tournament", "--agents", "random", "greedy", "--games", "2", "--workers", "1",
                 "--out", "runs/mine", "--no-progress", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    [db] = (tmp_path / "tournaments").glob("*.sqlite")
    assert f"results in {db.relative_to(tmp_path)}" in out
    assert sorted(p.name for p in (tmp_path / "runs" / "mine").iterdir()) == [
        "tournament.csv", "tournament.json", "tournament.png"]
