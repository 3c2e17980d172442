"""``cribenv tournament --ray``: the games spread over a local Ray cluster land in the same SQLite
results as a run in this process, when a worker node dies mid-run (its chunks are played again
elsewhere: none lost, none counted twice) and when a run is resumed."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the 'ray' extra is not installed")

from ray_cluster import MB, head_and_worker  # noqa: E402

from cribenv.cli import main  # noqa: E402
from tournament import run_tournament  # noqa: E402
from tournament.storage import connect, fetch_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ["greedy", "expert"]
GAMES = 40


def stored(db) -> list[tuple]:
    conn = connect(db)
    try:
        return fetch_rows(conn)
    finally:
        conn.close()


def count(db) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:   # not created yet
        return 0


@pytest.fixture(scope="module")
def clean_rows(tmp_path_factory):
    db = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    run_tournament(AGENTS, GAMES, workers=1, db_path=db, progress=False, bootstrap=20)
    return stored(db)


@pytest.fixture
def cluster():
    """A head node without CPUs (the games go to the worker nodes) and one worker, A."""
    # notice a dead node within about two seconds
    yield from head_and_worker(1, _system_config={"health_check_period_ms": 500,
                                                  "health_check_failure_threshold": 3})


@pytest.mark.slow
def test_a_worker_node_killed_mid_run_loses_and_repeats_no_game(cluster, clean_rows, tmp_path):
    c, a = cluster
    db = tmp_path / "ray.sqlite"
    command = [sys.executable, "-m", "cribenv.cli", "tournament", "--agents", *AGENTS,
               "--games", str(GAMES), "--db", str(db), "--ray", c.address, "--bootstrap", "20",
               "--no-progress"]
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while count(db) < 2 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        at_kill = count(db)
        c.remove_node(a, allow_graceful=False)     # its chunks in flight die with it
        b = c.add_node(num_cpus=1, object_store_memory=100 * MB)
        out, err = run.communicate(timeout=180)
    finally:
        run.kill()
    assert run.returncode == 0, err[-2000:]
    assert 2 <= at_kill < GAMES                     # A died mid-run
    per_node = dict(item.rsplit(" ", 1) for item in
                    out.split("games per Ray node: ")[1].splitlines()[0].split(", "))
    assert set(per_node) == {a.node_id, b.node_id}
    assert int(per_node[a.node_id]) >= 2 and int(per_node[b.node_id]) > 0  # A, then B
    assert sum(map(int, per_node.values())) == GAMES   # each game played (and stored) once
    assert stored(db) == clean_rows                    # the same games as in one process

    # resumed: the games deleted are played again (on B), the others are skipped
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM games WHERE deal % 3 = 1")
    missing = GAMES - count(db)
    report = run_tournament(AGENTS, GAMES, db_path=db, progress=False, bootstrap=20,
                            ray_address=c.address)
    assert report.games_this_run == missing and 0 < missing < GAMES
    assert report.games_per_node == {b.node_id: missing}
    assert stored(db) == clean_rows


def test_a_bad_address_is_a_clear_error(tmp_path, capsys):
    status = main(["tournament", "--agents", *AGENTS, "--games", "2", "--db",
                   str(tmp_path / "x.sqlite"), "--ray", "127.0.0.1:1", "--no-progress"])
    assert status == 2
    assert "cannot join the Ray cluster at '127.0.0.1:1'" in capsys.readouterr().err


def test_a_program_bot_plays_on_the_cluster_as_it_does_here(cluster, tmp_path):
    """``cmd:`` bots on Ray: each node runs the program (at the same path) and the games are
    those of a run in this process."""
    c, _ = cluster
    client = f"bot=cmd:{sys.executable} {ROOT / 'examples' / 'cbp_bot.py'}"
    here, there = tmp_path / "here.sqlite", tmp_path / "there.sqlite"
    run_tournament([client, "greedy"], 8, db_path=here, progress=False, bootstrap=0)
    report = run_tournament([client, "greedy"], 8, db_path=there, progress=False, bootstrap=0,
                            ray_address=c.address)
    assert report.games == 8 and not report.forfeits
    assert stored(there) == stored(here)
