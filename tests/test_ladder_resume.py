"""A stopped ladder goes on: after ``kill -9`` (its last games still in the databases' ``-wal``
files) the same command resumes to the line an uninterrupted run makes, a second ladder on the
busy folder is refused, and Ctrl-C says that the same command goes on."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cribenv.cli import main
from tournament.ladder import MACHINE_FIELDS

DEALS = 3          # 6 games against each of the 5 anchors


def ladder(folder: Path, *more: str) -> list[str]:
    return ["ladder", "greedy", "--deals", str(DEALS), "--quality-deals", "2", "--workers", "1",
            "--folder", str(folder), "--leaderboard", str(folder / "board.jsonl"),
            "--no-progress", *more]


def start(folder: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cribenv.cli", *ladder(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def stored(folder: Path) -> int:
    """The games stored in the folder's databases, read through their ``-wal`` files."""
    total = 0
    for db in folder.glob("*.sqlite"):
        try:
            conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
            try:
                total += conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:      # being made: no table yet
            pass
    return total


def wait_for_games(proc: subprocess.Popen, folder: Path, games: int) -> None:
    """Until ``games`` are stored, the run still playing."""
    deadline = time.monotonic() + 120
    while stored(folder) < games and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the ladder finished before it could be stopped"
    assert stored(folder) >= games


def the_line(folder: Path) -> dict:
    """The one line of the folder's leaderboard, less what depends on the machine."""
    lines = (folder / "board.jsonl").read_text().splitlines()
    assert len(lines) == 1
    return {k: v for k, v in json.loads(lines[0]).items() if k not in MACHINE_FIELDS}


def games(folder: Path) -> dict[str, list]:
    from tournament.storage import connect, fetch_rows

    out = {}
    for db in sorted(folder.glob("*.sqlite")):
        conn = connect(db)
        out[db.name] = fetch_rows(conn)
        conn.close()
    return out


@pytest.mark.slow
def test_a_killed_ladder_resumes_to_the_line_of_an_uninterrupted_one(tmp_path, capsys):
    killed = tmp_path / "killed"
    proc = start(killed)
    try:
        wait_for_games(proc, killed, 3)   # in -wal only
        # a second ladder on the folder while the first plays: refused, named busy
        assert main(ladder(killed)) == 2
        err = capsys.readouterr().err
        assert f"the games folder '{killed}' is busy" in err and "Traceback" not in err
        assert proc.poll() is None, "the ladder finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not (killed / "board.jsonl").exists()

    assert main(ladder(killed)) == 0                       # the same command resumes
    out = capsys.readouterr()
    assert "leaderboard" in out.out and "Traceback" not in out.err

    clean = tmp_path / "clean"
    assert main(ladder(clean)) == 0
    assert the_line(killed) == the_line(clean)
    assert games(killed) == games(clean)                   # the very same games, none twice


@pytest.mark.slow
def test_ctrl_c_says_the_same_command_goes_on(tmp_path, capsys):
    folder = tmp_path / "games"
    proc = start(folder)
    try:
        wait_for_games(proc, folder, 3)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    assert f"interrupted: the games played are kept in {folder}; the same command goes on" \
        in err and "Traceback" not in err
    assert main(ladder(folder)) == 0
    assert the_line(folder)["anchors"][-1]["games"] == 2 * DEALS


def test_a_database_killed_before_its_tables_were_made_is_taken_as_empty(tmp_path, capsys):
    """kill -9 between creating a database and making its tables leaves a file with no table:
    the same command plays its games (it failed so once under load: 'no such table: meta')."""
    first = tmp_path / "first"
    assert main(ladder(first)) == 0
    dbs = sorted(first.glob("*.sqlite"))
    assert len(dbs) == 5
    folder = tmp_path / "killed"
    folder.mkdir()
    conn = sqlite3.connect(folder / dbs[1].name)       # as connect() leaves it: WAL, no table
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert main(ladder(folder)) == 0, capsys.readouterr().err
    assert the_line(folder) == the_line(first)
