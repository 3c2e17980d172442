"""Hostile inputs at the command line and in files: every refusal is exit status 2, a message
naming the bad value, no traceback, and nothing written (or half-written)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.ppo import PolicyFileError, load_policy, save_policy, save_tensors
from cribenv.cli import main

ROOT = Path(__file__).resolve().parents[1]
needs_non_root = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                                    reason="root writes into read-only folders")


def refused(capsys, argv: list[str], *names: str) -> str:
    """Run the CLI; check exit status 2, no traceback, every name in the message."""
    try:
        status = main(argv)
    except SystemExit as exc:   # argparse's usage errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    for name in names:
        assert name in err, (name, err)
    return err


# -------------------------------------------------------------------------- small commands
@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_serve_port_must_be_a_port(capsys, port):
    refused(capsys, ["serve", "--port", port], "--port", repr(port), "0 to 65535")


def test_train_without_run_dir_says_so_in_one_line(capsys):
    err = refused(capsys, ["train", "--config", "train/configs/rollout-ppo.json"], "--run-dir")
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("spec, near", [("gredy", "greedy"), ("exprt", "expert"),
                                        ("ppo:shiped", None)])
def test_a_misspelt_agent_lists_every_spelling_and_the_nearest(capsys, tmp_path, spec, near):
    err = refused(capsys, ["tournament", "--agents", "random", spec, "--games", "2", "--db",
                           str(tmp_path / "t.sqlite")], spec)
    if near:
        assert f"did you mean {near!r}" in err
        for spelling in ("ppo:shipped", "ppo:PATH", "search:BASE", "greedy", "expert"):
            assert spelling in err
    assert not (tmp_path / "t.sqlite").exists()


def test_agent_names_accept_any_case():
    assert make_agent("Greedy").name == "greedy" and make_agent("EXPERT").name == "expert"



@pytest.mark.parametrize("top", ["0", "-3", "x"])
def test_discard_top_must_be_positive(capsys, top):
    refused(capsys, ["discard", "5H", "5S", "JD", "6C", "4H", "KD", "--dealer", "--top", top],
            "--top", repr(top))


def test_discard_top_shows_that_many(capsys):
    assert main(["discard", "5H", "5S", "JD", "6C", "4H", "KD", "--dealer", "--top", "2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3            # the header and two options


@pytest.mark.parametrize("spec", ["expert:foo", "random:1", "greedy:"])
def test_agent_specs_take_no_argument_but_ppo(spec):
    with pytest.raises(ValueError, match=f"agent '{spec}'"):
        make_agent(spec)


# -------------------------------------------------------------------------- tournament
TOURNAMENT = ["tournament", "--agents", "random", "greedy", "--games", "2", "--workers", "1",
              "--bootstrap", "0", "--no-progress"]


@pytest.mark.parametrize("flag,value", [("--workers", "0"), ("--workers", "-2"),
                                        ("--bootstrap", "-5"), ("--games", "0")])
def test_tournament_numbers_are_checked(capsys, tmp_path, flag, value):
    argv = TOURNAMENT + ["--db", str(tmp_path / "r.sqlite"), flag, value]
    refused(capsys, argv, flag, repr(value))
    assert not (tmp_path / "r.sqlite").exists()


def test_tournament_games_are_bounded(capsys, tmp_path):
    """10**14 games per pair once built its schedule in memory until the machine ran out."""
    argv = TOURNAMENT + ["--db", str(tmp_path / "r.sqlite"), "--games", str(10**14)]
    refused(capsys, argv, "from 2 to 10,000,000", str(10**14))
    assert not (tmp_path / "r.sqlite").exists()


def test_tournament_refuses_a_bad_spec_before_playing(capsys, tmp_path):
    argv = ["tournament", "--agents", "random", "expert:foo", "--db", str(tmp_path / "r.sqlite")]
    refused(capsys, argv, "expert:foo")
    assert not (tmp_path / "r.sqlite").exists()


def test_tournament_checks_db_and_out_before_playing(capsys, tmp_path):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for extra, name in [(["--db", str(tmp_path)], str(tmp_path)),
                        (["--db", str(a_file / "r.sqlite")], str(a_file)),
                        (["--db", str(tmp_path / "r.sqlite"), "--out", str(a_file)], str(a_file)),
                        (["--db", str(tmp_path / "r.sqlite"), "--out", str(a_file / "o")],
                         str(a_file))]:
        refused(capsys, TOURNAMENT + extra, name)
        assert not (tmp_path / "r.sqlite").exists()   # refused before any game was stored


@needs_non_root
def test_tournament_read_only_folders(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    refused(capsys, TOURNAMENT + ["--db", str(ro / "r.sqlite")], str(ro))
    refused(capsys, TOURNAMENT + ["--db", str(tmp_path / "r.sqlite"), "--out", str(ro / "o")],
            str(ro))
    assert not (tmp_path / "r.sqlite").exists()


@pytest.fixture(scope="module")
def results_db(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("db") / "base.sqlite"
    assert main(TOURNAMENT + ["--db", str(path)]) == 0
    con = sqlite3.connect(path)    # fold the WAL into the file, so its bytes are the database
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return path.read_bytes()


def _damaged_versions(data: bytes) -> list[tuple[str, bytes]]:
    rng = np.random.default_rng(0)
    out = [(f"cut at {n}", data[:n]) for n in (1, 50, 100, 1000, 4096 + 17, len(data) // 2,
                                               len(data) - 1)]
    page = 4096
    out.append(("random after page 2", data[:2 * page] + rng.bytes(len(data) - 2 * page)))
    out.append(("random bytes", rng.bytes(len(data))))
    return out


def test_damaged_tournament_databases_are_refused_clearly(capsys, tmp_path, results_db):
    assert len(results_db) > 3 * 4096
    for what, data in _damaged_versions(results_db):
        db = tmp_path / "damaged.sqlite"
        for p in tmp_path.glob("damaged.sqlite*"):
            p.unlink()
        db.write_bytes(data)
        try:
            status = main(TOURNAMENT + ["--db", str(db)])
        except Exception as exc:  # pragma: no cover - the failure this test is about
            pytest.fail(f"{what}: {type(exc).__name__}: {exc}")
        err = capsys.readouterr().err
        # a cut that keeps the games whole may still be readable (sqlite is forgiving at
        # the end of the file); anything else is a clear refusal
        assert status in (0, 2), what
        if status == 2:
            assert str(db) in err and "Traceback" not in err, (what, err)


@pytest.mark.parametrize("stored", ["[1]", "not json", "{}", '"text"'])
def test_a_damaged_stored_config_is_refused(capsys, tmp_path, results_db, stored):
    db = tmp_path / "r.sqlite"
    db.write_bytes(results_db)
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = ? WHERE key = 'config'", (stored,))
    con.commit()
    con.close()
    refused(capsys, TOURNAMENT + ["--db", str(db)], f"stored in {db} is damaged")


# -------------------------------------------------------------------------- policy files
def _policy(tmp_path: Path, name: str = "p.safetensors", **tensors) -> Path:
    rng = np.random.default_rng(0)
    base = {"pi.0.weight": rng.normal(size=(8, 601)), "pi.0.bias": np.zeros(8),
            "action.weight": rng.normal(size=(52, 8)), "action.bias": np.zeros(52)}
    base.update(tensors)
    return save_tensors(tmp_path / name, base, {"activation": "tanh"})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_policy_files_with_non_finite_weights_are_refused(tmp_path, bad):
    w = np.random.default_rng(1).normal(size=(52, 8))
    w[3, 4] = bad
    path = _policy(tmp_path, **{"action.weight": w})
    with pytest.raises(PolicyFileError, match="action.weight.*non-finite"):
        load_policy(path)


def test_policy_file_errors_name_the_file(tmp_path):
    path = _policy(tmp_path, **{"pi.0.weight": np.zeros((8, 600))})
    with pytest.raises(PolicyFileError, match=f"^{path}: layer 0 has weight"):
        load_policy(path)


@pytest.mark.parametrize("config", [[1, 2], "mlp", 3, None])
def test_policy_config_must_be_an_object(tmp_path, config):
    from safetensors.numpy import save_file

    path = tmp_path / "p.safetensors"
    save_file({"action.weight": np.zeros((52, 601), np.float32),
               "action.bias": np.zeros(52, np.float32)}, str(path),
              metadata={"format": "cribenv-policy/1", "config": json.dumps(config)})
    with pytest.raises(PolicyFileError, match=f"{path}.*JSON object"):
        load_policy(path)


@pytest.mark.parametrize("beta", [np.zeros(0), np.zeros((2,))])
def test_expert_prior_policy_needs_one_beta(tmp_path, beta):
    from agents.features import NUM_FEATURES

    path = save_tensors(tmp_path / "p.safetensors",
                        {"card.0.weight": np.zeros((1, NUM_FEATURES)), "card.0.bias": np.zeros(1),
                         "beta": beta}, {"arch": "expert-prior"})
    with pytest.raises(PolicyFileError, match=f"{path}.*beta"):
        load_policy(path)


def test_truncated_and_random_policy_files_are_refused(tmp_path):
    good = save_policy(tmp_path / "good.safetensors",
                       [(np.ones((4, 601), np.float32), np.zeros(4, np.float32))],
                       (np.ones((52, 4), np.float32), np.zeros(52, np.float32)), {})
    data = good.read_bytes()
    rng = np.random.default_rng(2)
    versions = [data[:n] for n in sorted(set(rng.integers(0, len(data), 40).tolist()))]
    versions += [rng.bytes(len(data)), b"", b"\x00" * 64]
    for i, blob in enumerate(versions):
        path = tmp_path / f"bad{i}.safetensors"
        path.write_bytes(blob)
        with pytest.raises(PolicyFileError, match=str(path)):
            load_policy(path)


def test_a_cli_refusal_prints_no_traceback_in_a_real_process(tmp_path):
    """The same as above through the installed entry point's code path, in a subprocess."""
    out = subprocess.run([sys.executable, "-c", "import sys; from cribenv.cli import main; "
                          "sys.exit(main())", "tournament", "--agents", "random", "expert:foo",
                          "--db", str(tmp_path / "r.sqlite")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2 and "expert:foo" in out.stderr
    assert "Traceback" not in out.stderr


# -------------------------------------------------------------------------- peg-values, rollouts
def test_peg_values_needs_out_and_never_touches_the_shipped_table(capsys):
    shipped = ROOT / "agents" / "trained" / "peg_values.json"
    before = shipped.read_bytes()
    refused(capsys, ["peg-values", "--hands", "200"], "--out")
    assert shipped.read_bytes() == before


@pytest.mark.parametrize("command", [["peg-values", "--hands", "400000"],
                                     ["rollouts", "--games", "6000"]])
def test_outputs_are_checked_before_the_computation(capsys, tmp_path, command):
    """Refused at once (these would take minutes), naming the path; nothing is written."""
    import time

    a_file = tmp_path / "f"
    a_file.write_text("x")
    for out in (tmp_path, a_file / "x.out"):
        started = time.perf_counter()
        refused(capsys, command + ["--out", str(out)], str(out if out == tmp_path else a_file))
        assert time.perf_counter() - started < 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


@pytest.mark.parametrize("argv,name", [
    (["rollouts", "--games", "0"], "games must be >= 1"),   # named as every setting is
    (["rollouts", "--workers", "0"], "--workers"),
    (["rollouts", "--opponent-games", "10"], "--opponent"),
    (["rollouts", "--opponent", "expert:foo", "--opponent-games", "10"], "expert:foo"),
    (["rollouts", "--beta", "-1"], "beta"),
    (["peg-values", "--hands", "-5"], "hands must be >= 100"),
    (["peg-values", "--workers", "0"], "--workers"),
])
def test_rollouts_and_peg_values_arguments(capsys, tmp_path, argv, name):
    refused(capsys, argv + ["--out", str(tmp_path / "p.out")], name)
    assert not (tmp_path / "p.out").exists()


def test_another_tournament_in_the_same_db_is_refused_without_saying_resuming(capsys, tmp_path):
    db = str(tmp_path / "r.sqlite")
    assert main(TOURNAMENT + ["--db", db]) == 0
    capsys.readouterr()
    argv = ["tournament", "--agents", "random", "expert", "--games", "2", "--workers", "1",
            "--bootstrap", "0", "--db", db]
    err = refused(capsys, argv, db, "different settings", "another --db")
    assert "resuming" not in err
    assert main(TOURNAMENT[:-1] + ["--db", db]) == 0          # the same one: resumed
    assert "resuming from" in capsys.readouterr().err


def test_a_full_disk_leaves_the_old_report_whole_and_says_so(capsys, tmp_path, monkeypatch):
    """The report once overwrote tournament.png in place with a truncated file and ended in a
    traceback; now every output is written under a temporary name and renamed."""
    import errno

    import matplotlib.figure

    args = ["tournament", "--agents", "random", "greedy", "--games", "4", "--workers", "1",
            "--db", str(tmp_path / "t.sqlite"), "--out", str(tmp_path / "out"),
            "--no-progress", "--bootstrap", "0"]
    assert main(args) == 0
    png = tmp_path / "out" / "tournament.png"
    before = png.read_bytes()

    def full(self, fname, **kwargs):
        Path(fname).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device", str(fname))

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    capsys.readouterr()
    refused(capsys, args, "no space left on the device")
    assert png.read_bytes() == before
    assert sorted(p.name for p in png.parent.iterdir()) == ["tournament.csv",
                                                            "tournament.json", "tournament.png"]


@pytest.mark.parametrize("change, words", [
    ("INSERT INTO games SELECT agent_a, agent_b, 99999, seating, game_seed, first_dealer, "
     "seat0, seat1, winner_seat, winner, score0, score1, game_points, hands, peg0, peg1, "
     "hand0, hand1, crib0, crib1, dealer0, dealer1, decisions, result FROM games LIMIT 1",
     "not a game of this tournament"),
    ("UPDATE games SET score0 = -50 WHERE deal = 0 AND seating = 0", "scores -50"),
    ("UPDATE games SET score1 = 'abc' WHERE deal = 0 AND seating = 0", "'abc'"),
    ("UPDATE games SET game_points = 7 WHERE deal = 0 AND seating = 0", "game points 7"),
    ("UPDATE games SET winner = 'nobody' WHERE deal = 0 AND seating = 0", "'nobody'"),
])
def test_a_tampered_database_is_refused_on_resume(capsys, tmp_path, change, words):
    db = tmp_path / "t.sqlite"
    args = ["tournament", "--agents", "random", "greedy", "--games", "4", "--workers", "1",
            "--db", str(db), "--out", str(tmp_path / "out"), "--no-progress", "--bootstrap",
            "0"]
    assert main(args) == 0
    with sqlite3.connect(db) as conn:
        conn.execute(change)
    capsys.readouterr()
    refused(capsys, args, str(db), words, "move it aside")
