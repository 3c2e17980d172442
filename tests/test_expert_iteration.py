"""Expert iteration (train.expert_iteration): the recorded targets are the search's values, the
fit moves the network toward the search's cards and keeps its throws, a round resumes to the
same file, and bad settings are refused."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

from agents.ppo import ExpertPriorActor, load_policy  # noqa: E402
from train import expert_iteration as ei  # noqa: E402
from train import iteration_games as games  # noqa: E402
from train.settings import described  # noqa: E402


@pytest.fixture(scope="module")
def chunk():
    return games.play_chunk("shipped", seed=7, games=2, playouts=40)


def test_a_chunk_holds_every_searched_play_and_discard(chunk):
    kinds = chunk["kind"]
    assert (kinds == games.PLAY).sum() > 10 and (kinds == games.DISCARD).sum() > 4
    legal = chunk["legal"] >= 0
    # a play row has a search value for each legal card and nothing in the padding
    play = kinds == games.PLAY
    assert np.isfinite(chunk["values"][play][legal[play]]).all()
    assert np.isnan(chunk["values"][~legal]).all()
    assert ((chunk["values"][play][legal[play]] >= 0)
            & (chunk["values"][play][legal[play]] <= 1)).all()
    # the card laid is one of the row's legal cards
    assert all(c in row[row >= 0] for c, row in zip(chunk["card"], chunk["legal"]))
    # a play row's card is the search's best card (margin 0), except where the base's card
    # ties it
    for i in np.flatnonzero(play):
        k = legal[i].sum()
        v = chunk["values"][i, :k]
        laid = list(chunk["legal"][i, :k]).index(chunk["card"][i])
        assert v[laid] == pytest.approx(v.max())


def test_a_chunk_is_the_same_under_its_seed(chunk):
    again = games.play_chunk("shipped", seed=7, games=2, playouts=40)
    for key in chunk:
        np.testing.assert_array_equal(chunk[key], again[key])


def test_targets_reweigh_the_base_by_the_search_on_plays_and_keep_it_on_discards():
    data = {"kind": np.array([1, 1, 0]),
            "legal": np.array([[3, 7, 9], [4, 5, -1], [1, 2, 5]]),
            "values": np.array([[0.4, 0.5, 0.5], [0.3, 0.3, np.nan], [np.nan] * 3])}
    base = np.log(np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 1e-30], [0.2, 0.3, 0.5]]))
    t = ei.targets(data, base, temperature=0.1)
    e = np.exp(-1.0)                 # 0.1 less at temperature 0.1: e times the base's weight
    z = 0.6 * e + 0.3 + 0.1
    np.testing.assert_allclose(t[0], [0.6 * e / z, 0.3 / z, 0.1 / z])
    np.testing.assert_allclose(t[1], [0.5, 0.5, 0.0])    # equal values: the base's own
    np.testing.assert_allclose(t[2], [0.2, 0.3, 0.5])


def test_the_fit_moves_toward_the_search_and_keeps_the_throws(chunk):
    settings = ei.IterationSettings(epochs=30, learning_rate=3e-3)
    data = {k: np.concatenate([v] * 4) for k, v in chunk.items()}   # enough rows to learn
    nets, stats = ei.fit(data, "shipped", settings, log=lambda *_: None)
    assert stats["held_out_loss"] < stats["held_out_loss_before"]
    assert stats["agreement"] >= stats["agreement_before"]


def test_a_round_resumes_to_the_same_policy(tmp_path):
    settings = ei.IterationSettings(rounds=1, games=2, playouts=30, epochs=2, eval_games=2)
    first = ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False,
                             log=lambda *_: None)
    policy_file = tmp_path / "a" / "round-1" / "policy.safetensors"
    made = policy_file.read_bytes()
    # a stop after the games, before the fit: the same games are read back, the same file made
    policy_file.unlink()
    (tmp_path / "a" / "round-1" / "fit.json").unlink()
    ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False, log=lambda *_: None)
    assert policy_file.read_bytes() == made
    # a stop between the fit's two files: the round is fitted again, to the same file
    (tmp_path / "a" / "round-1" / "fit.json").unlink()
    ei.run_iteration(tmp_path / "a", settings, workers=1, progress=False, log=lambda *_: None)
    assert policy_file.read_bytes() == made
    policy = load_policy(first[0]["policy"])
    assert isinstance(policy, ExpertPriorActor)
    assert policy.config["expert_iteration_round"] == 1
    evals = json.loads((tmp_path / "a" / "round-1" / "eval.json").read_text())
    assert set(evals) == {"expert", "base"} and evals["expert"]["games"] == 2


def test_a_resume_with_other_settings_is_refused(tmp_path):
    settings = ei.IterationSettings(rounds=1, games=2, playouts=30, epochs=1, eval_games=0)
    ei.run_iteration(tmp_path, settings, workers=1, progress=False, log=lambda *_: None)
    other = ei.IterationSettings(rounds=1, games=2, playouts=31, epochs=1, eval_games=0)
    with pytest.raises(ValueError, match="playouts=30"):
        ei.run_iteration(tmp_path, other, workers=1, progress=False, log=lambda *_: None)
    # its settings.json deleted, the rounds made at 30 playouts were once adopted at 31
    (tmp_path / "settings.json").unlink()
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match="holds round-1 but no settings.json"):
        ei.run_iteration(tmp_path, other, workers=1, progress=False, log=lambda *_: None)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("change, words", [
    ({"games": 0}, "games must be >= 1 and <= 10000000, got 0"),
    ({"games": 2.5}, r"games must be an integer, got 2.5 \(a float\)"),
    ({"playouts": 10**9}, "playouts must be <= 200,000 .one decision's memory., got"),
    ({"temperature": 0.0}, r"temperature must be in \[1e-06, 1\], got 0.0"),
    ({"temperature": 1e-320}, r"temperature must be in \[1e-06, 1\]"),
    ({"anchor": float("nan")}, "anchor must be a finite number, got nan"),
    ({"learning_rate": float("inf")}, "learning_rate must be a finite number, got inf"),
    ({"eval_games": 1}, "eval_games must be an even number >= 0, got 1"),
    ({"seed": -1}, "seed must be >= 0"),
    ({"models": "mine"}, "models must be 'heuristic' or 'own', got 'mine'"),
    ({"replay": "runs/a"}, "replay must be a list of strs"),
])
def test_bad_settings_are_refused_when_made(change, words):
    """One settings base (train.settings.Settings): the same checks and words as every
    trainer's, before any run begins."""
    with pytest.raises(ValueError, match=words):
        ei.IterationSettings(**change)


def test_the_command_line_flags_are_made_from_the_settings(tmp_path):
    """Each setting's flag, with the help it is declared with; a bad value is refused with its
    words and nothing written."""
    parser = argparse.ArgumentParser()
    ei.configure(parser)
    text = parser.format_help()
    for s in described(ei.IterationSettings):
        assert f"--{s.name.replace('_', '-')}" in text
    assert "Adam learning rate" in text   # declared once, for every trainer
    args = parser.parse_args(["--run-dir", str(tmp_path / "run"), "--replay", "a", "--replay",
                              "b", "--games", "8"])
    assert ei.settings_of(args) == ei.IterationSettings(replay=["a", "b"], games=8)
    with pytest.raises(ValueError, match="games must be >= 1"):
        ei.run(parser.parse_args(["--run-dir", str(tmp_path / "run"), "--games", "0"]))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kind", ["missing", "mlp"])
def test_a_base_that_is_not_an_expert_prior_policy_is_refused(tmp_path, kind):
    from agents.ppo import PolicyFileError, save_tensors

    base = tmp_path / "base.safetensors"
    if kind == "mlp":
        save_tensors(base, {"pi.0.weight": np.zeros((4, 300)), "pi.0.bias": np.zeros(4),
                            "action.weight": np.zeros((52, 4)), "action.bias": np.zeros(52)},
                     {"arch": "mlp", "activation": "tanh"})
    with pytest.raises((PolicyFileError, ValueError)):
        ei.run_iteration(tmp_path / "run", ei.IterationSettings(base=str(base)),
                         workers=1, progress=False)
    assert not (tmp_path / "run").exists()


def test_a_run_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "run").write_text("not a folder")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        ei.run_iteration(tmp_path / "run", ei.IterationSettings(), workers=1, progress=False)
    assert (tmp_path / "run").read_text() == "not a folder"


def test_a_resume_from_another_base_file_is_refused(tmp_path):
    from agents.ppo import SHIPPED_POLICY

    base = tmp_path / "base.safetensors"
    base.write_bytes(SHIPPED_POLICY.read_bytes())
    settings = ei.IterationSettings(base=str(base), rounds=1, games=2, playouts=30, epochs=1,
                                    eval_games=0)
    ei.run_iteration(tmp_path / "run", settings, workers=1, progress=False, log=lambda *_: None)
    (tmp_path / "run" / "round-1" / "policy.safetensors").rename(base)   # the file changed
    with pytest.raises(ValueError, match="base_sha256"):
        ei.run_iteration(tmp_path / "run", settings, workers=1, progress=False)


# ---------------------------------------------------------------------------- under damage

RUN_ARGS = ["--rounds", "2", "--games", "2", "--playouts", "20", "--epochs", "1",
            "--eval-games", "2", "--workers", "1"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished two-round run, made by the command line."""
    from cribenv.cli import main

    run = tmp_path_factory.mktemp("finished") / "run"
    assert main(["expert-iteration", "--run-dir", str(run), *RUN_ARGS]) == 0
    return run


def _snapshot(folder):
    return {str(p.relative_to(folder)): "folder" if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


def _refit(run):
    """Round 1 to be fitted again: its chunk is read back."""
    (run / "round-1" / "fit.json").unlink()
    (run / "round-1" / "policy.safetensors").unlink()


def _rewrite_chunk(path, **change):
    data = {**dict(np.load(path)), **change}
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **data)


def _as_folder(path):
    path.unlink()
    path.mkdir()


def _settings_with(run, **change):
    path = run / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))


CHUNK = "round-1/games/chunk-0000.npz"
DAMAGE = {   # name: (damage, the file the error names)
    "settings [1,2]": (lambda r: (r / "settings.json").write_text("[1, 2]"), "settings.json"),
    "settings empty": (lambda r: (r / "settings.json").write_text(""), "settings.json"),
    "settings not UTF-8": (lambda r: (r / "settings.json").write_bytes(b"\xff{}"),
                           "settings.json"),
    "settings {}": (lambda r: (r / "settings.json").write_text("{}"), "settings.json"),
    "settings a folder": (lambda r: _as_folder(r / "settings.json"), "settings.json"),
    "settings of another base": (lambda r: _settings_with(r, base_sha256="0" * 64),
                                 "settings.json"),
    "chunk truncated": (lambda r: (_refit(r), (r / CHUNK).write_bytes(
        (r / CHUNK).read_bytes()[:300])), CHUNK),
    "chunk empty": (lambda r: (_refit(r), (r / CHUNK).write_bytes(b"")), CHUNK),
    "chunk of text": (lambda r: (_refit(r), (r / CHUNK).write_text("hello")), CHUNK),
    "chunk foreign": (lambda r: (_refit(r), np.savez(r / CHUNK, x=np.arange(3))), CHUNK),
    "chunk of the wrong shape": (lambda r: (_refit(r), _rewrite_chunk(
        r / CHUNK, legal=np.load(r / CHUNK)["legal"][:, :5])), CHUNK),
    "chunk of another round": (lambda r: (_refit(r), _rewrite_chunk(
        r / CHUNK, seed=np.int64(12345))), CHUNK),
    "chunk a folder": (lambda r: (_refit(r), _as_folder(r / CHUNK)), CHUNK),
    "games a file": (lambda r: (_refit(r), (r / CHUNK).unlink(), (r / CHUNK).parent.rmdir(),
                                (r / CHUNK).parent.write_text("x")), "round-1/games"),
    "fit [1]": (lambda r: (r / "round-1/fit.json").write_text("[1]"), "round-1/fit.json"),
    "fit empty": (lambda r: (r / "round-1/fit.json").write_text(""), "round-1/fit.json"),
    "fit of words": (lambda r: (r / "round-1/fit.json").write_text('{"decisions": "x"}'),
                     "round-1/fit.json"),
    "eval [1]": (lambda r: (r / "round-1/eval.json").write_text("[1]"), "round-1/eval.json"),
    "eval {'expert': 1}": (lambda r: (r / "round-1/eval.json").write_text('{"expert": 1}'),
                           "round-1/eval.json"),
    "eval without rates": (lambda r: (r / "round-1/eval.json").write_text(
        '{"expert": {"games": 2}, "base": {"games": 2}}'), "round-1/eval.json"),
    "policy truncated": (lambda r: (r / "round-1/policy.safetensors").write_bytes(
        (r / "round-1/policy.safetensors").read_bytes()[:500]), "round-1/policy.safetensors"),
    "policy of another round": (lambda r: (r / "round-2/policy.safetensors").write_bytes(
        (r / "round-1/policy.safetensors").read_bytes()), "round-2/policy.safetensors"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_is_named_and_nothing_is_changed(finished_run, tmp_path, capsys, case):
    import shutil

    from cribenv.cli import main

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    damage, named = DAMAGE[case]
    damage(run)
    before = _snapshot(run)
    assert main(["expert-iteration", "--run-dir", str(run), *RUN_ARGS]) == 2
    err = capsys.readouterr().err
    assert f"{run / named} " in err and "Traceback" not in err, err
    assert _snapshot(run) == before


ONE_ROUND = ["--rounds", "1", "--games", "2", "--playouts", "20", "--epochs", "1",
             "--eval-games", "0", "--workers", "1"]


def test_the_replays_games_are_fitted_with_the_rounds_own(finished_run, tmp_path):
    from cribenv.cli import main

    replay = finished_run / "round-1" / "games"
    assert main(["expert-iteration", "--run-dir", str(tmp_path / "alone"), *ONE_ROUND]) == 0
    assert main(["expert-iteration", "--run-dir", str(tmp_path / "with"), *ONE_ROUND,
                 "--replay", str(replay), "--replay", str(finished_run / "round-2" / "games")
                 ]) == 0
    alone, pooled = (json.loads((tmp_path / run / "round-1" / "fit.json").read_text())
                     for run in ("alone", "with"))
    replayed = sum(len(np.load(p)["kind"]) for p in finished_run.glob("round-*/games/*.npz"))
    assert pooled["decisions"] == alone["decisions"] + replayed
    # the round's own games are the same: the same seed, base and settings
    for chunk in (tmp_path / "alone" / "round-1" / "games").iterdir():
        assert (tmp_path / "with" / "round-1" / "games" / chunk.name).read_bytes() \
            == chunk.read_bytes()
    # a resume must replay the same games
    with pytest.raises(ValueError, match=r"other --replay games \(\[.*round-2"):
        ei.run_iteration(tmp_path / "with", ei.IterationSettings(
            rounds=1, games=2, playouts=20, epochs=1, eval_games=0, replay=(str(replay),)),
            workers=1, progress=False, log=lambda *_: None)


@pytest.mark.parametrize("case", ["missing", "empty", "a file", "damaged chunk", "twice",
                                  "blank"])
def test_a_bad_replay_folder_is_named_before_any_work(finished_run, tmp_path, capsys, case):
    import shutil

    from cribenv.cli import main

    folder = tmp_path / "games"
    given = [str(folder)]
    if case == "empty":
        folder.mkdir()
    elif case == "a file":
        folder.write_text("x")
    elif case == "damaged chunk":
        shutil.copytree(finished_run / "round-1" / "games", folder)
        (folder / "chunk-0000.npz").write_bytes(b"not a chunk")
    elif case == "twice":       # its games would count twice in the fit
        shutil.copytree(finished_run / "round-1" / "games", folder)
        given = [str(folder), f"{tmp_path}/./games"]     # the same folder, resolved
    elif case == "blank":
        given = [""]
    replays = [a for g in given for a in ("--replay", g)]
    assert main(["expert-iteration", "--run-dir", str(tmp_path / "run"), *ONE_ROUND,
                 *replays]) == 2
    err = capsys.readouterr().err
    assert (given[-1] or "''") in err and "Traceback" not in err, err
    assert "delete" not in err          # another run's games: never advised away
    assert not (tmp_path / "run").exists()


def test_a_finished_replay_run_resumes_with_its_replay_gone(finished_run, tmp_path):
    """Once every round is fitted the replay is never read: the run resumes (for an
    evaluation, say) after the replayed games were deleted, and keeps its record of them."""
    import shutil

    from cribenv.cli import main

    games = tmp_path / "games"
    shutil.copytree(finished_run / "round-1" / "games", games)
    run = tmp_path / "run"
    assert main(["expert-iteration", "--run-dir", str(run), *ONE_ROUND,
                 "--replay", str(games)]) == 0
    recorded = json.loads((run / "settings.json").read_text())
    policy = (run / "round-1" / "policy.safetensors").read_bytes()
    shutil.rmtree(games)
    assert main(["expert-iteration", "--run-dir", str(run), *ONE_ROUND,
                 "--replay", str(games)]) == 0
    assert json.loads((run / "settings.json").read_text()) == recorded
    assert (run / "round-1" / "policy.safetensors").read_bytes() == policy
    # with its games gone, the replay must still be the one it was made with
    assert main(["expert-iteration", "--run-dir", str(run), *ONE_ROUND,
                 "--replay", str(tmp_path / "other")]) == 2
    # a round still to fit needs its replay: refused, naming it
    (run / "round-1" / "fit.json").unlink()
    assert main(["expert-iteration", "--run-dir", str(run), *ONE_ROUND,
                 "--replay", str(games)]) == 2


def test_replay_games_changed_since_the_run_began_are_refused(finished_run, tmp_path):
    """The fit reads the replay's files checked at the run's start; if they changed since
    (their source run still writing, say) the round stops, naming the folder."""
    import shutil

    folder = tmp_path / "games"
    shutil.copytree(finished_run / "round-1" / "games", folder)
    chunks = sorted(folder.glob("chunk-*.npz"))
    sha = ei._replay_hash(chunks)
    assert len(ei._read_replay(chunks, sha, "heuristic")) == len(chunks)
    chunks[0].write_bytes((finished_run / "round-2" / "games" / chunks[0].name).read_bytes())
    with pytest.raises(ValueError, match=f"{folder}.*changed since the run began"):
        ei._read_replay(chunks, sha, "heuristic")
    chunks[0].unlink()                       # deleted: the same error, not a traceback
    with pytest.raises(ValueError, match=f"{folder}.*changed since the run began"):
        ei._read_replay(chunks, sha, "heuristic")


def test_a_half_written_chunk_of_a_killed_worker_is_cleared(finished_run, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    _refit(run)
    (run / "round-1" / "games" / ".chunk-0000.tmp999.npz").write_bytes(b"half")
    settings = ei.IterationSettings(rounds=2, games=2, playouts=20, epochs=1, eval_games=2)
    ei.run_iteration(run, settings, workers=1, progress=False, log=lambda *_: None)
    assert sorted(p.name for p in (run / "round-1" / "games").iterdir()) == ["chunk-0000.npz"]
    assert _snapshot(run) == _snapshot(finished_run)    # the same round, fitted again


def test_a_second_run_on_the_same_folder_is_refused(tmp_path, capsys):
    fcntl = pytest.importorskip("fcntl")
    from cribenv.cli import main

    run = tmp_path / "run"
    run.mkdir()
    fd = os.open(run, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)       # as a run on the folder holds it
        assert main(["expert-iteration", "--run-dir", str(run), *RUN_ARGS]) == 2
    finally:
        os.close(fd)
    assert "is in use by another expert-iteration run" in capsys.readouterr().err
    assert list(run.iterdir()) == []


def test_a_run_resumes_from_another_checkout_of_the_same_base(tmp_path):
    from agents.ppo import SHIPPED_POLICY

    settings = {}
    for checkout in ("a", "b"):
        base = tmp_path / checkout / "base.safetensors"
        base.parent.mkdir()
        base.write_bytes(SHIPPED_POLICY.read_bytes())
        settings[checkout] = ei.IterationSettings(base=str(base), rounds=1, games=2,
                                                  playouts=20, epochs=1, eval_games=0)
    ei.run_iteration(tmp_path / "run", settings["a"], workers=1, progress=False,
                     log=lambda *_: None)
    made = _snapshot(tmp_path / "run" / "round-1")
    ei.run_iteration(tmp_path / "run", settings["b"], workers=1, progress=False,
                     log=lambda *_: None)
    assert _snapshot(tmp_path / "run" / "round-1") == made       # resumed, nothing redone
    saved = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert saved["base_file"] == str((tmp_path / "b" / "base.safetensors").resolve())


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


SLOW_ROUND = """
import signal, sys, time
from pathlib import Path
from train import expert_iteration as ei
from train import iteration_games as games

def _play_job(job):          # a chunk that takes long: the workers are busy when killed
    time.sleep(120)

signal.signal(signal.SIGINT, signal.default_int_handler)    # Ctrl-C, even if started without
games._play_job = _play_job
try:
    games.play_round(Path(sys.argv[1]), "shipped", ei.IterationSettings(games=60, playouts=1), 1,
                  workers=2, progress=False)
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("stop", ["SIGKILL", "SIGINT"])
def test_the_workers_exit_when_the_run_is_killed_or_interrupted(tmp_path, stop):
    """kill -9 of the run: its workers exit (not idle forever); Ctrl-C: the run ends its
    workers at once (not after their chunks)."""
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    run = subprocess.Popen([sys.executable, "-c", SLOW_ROUND, str(tmp_path / "round")],
                           cwd=root)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.2)
            workers = _children(run.pid)
        assert len(workers) == 2, "the pool did not start"
        run.send_signal(getattr(signal, stop))
        run.wait(10)
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_alive, workers)), "a worker outlived the run"
    finally:
        run.kill()
        for pid in filter(_alive, workers):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------- from the rules alone (models="own")

@pytest.fixture(scope="module")
def own_chunk():
    return games.play_chunk("scratch", seed=5, games=2, playouts=30, models="own")


def test_an_own_models_chunk_holds_observations_and_no_bot_feature(own_chunk, monkeypatch):
    """With the network's own models the rows hold the seat's observation (what the network
    reads) and no card features: nothing the expert computes is recorded."""
    from cribenv.observation import OBS_SIZE

    assert set(own_chunk) == {"kind", "legal", "values", "card", "obs"}
    assert own_chunk["obs"].shape == (len(own_chunk["kind"]), OBS_SIZE)
    play = own_chunk["kind"] == games.PLAY
    assert play.sum() > 10 and (~play).sum() > 4
    legal = own_chunk["legal"] >= 0
    assert np.isfinite(own_chunk["values"][play][legal[play]]).all()
    # the observation of a row is that of a seat holding the row's legal cards
    for obs, row in zip(own_chunk["obs"], own_chunk["legal"]):
        assert (obs[:52][row[row >= 0]] > 0).all()
    # the expert's card features are never computed for such a chunk
    import agents.features

    def refuse(*_a, **_k):
        raise AssertionError("a bot's feature was computed")
    monkeypatch.setattr(agents.features, "card_features", refuse)
    again = games.play_chunk("scratch", seed=5, games=2, playouts=30, models="own")
    for key in own_chunk:
        np.testing.assert_array_equal(own_chunk[key], again[key])


def test_the_own_fit_moves_the_networks_play_toward_the_search(own_chunk):
    settings = ei.IterationSettings(base="scratch", models="own", epochs=20,
                                    learning_rate=1e-3)
    data = {k: np.concatenate([v] * 4) for k, v in own_chunk.items()}
    nets, stats = ei.fit(data, "scratch", settings, log=lambda *_: None)
    assert stats["held_out_loss"] < stats["held_out_loss_before"]
    assert stats["agreement"] >= stats["agreement_before"]


def test_an_own_models_round_writes_a_network_of_the_bases_kind(tmp_path):
    from agents.ppo import KeepsActor, policy_path

    settings = ei.IterationSettings(base="scratch", models="own", rounds=1, games=2,
                                    playouts=20, epochs=1, eval_games=2)
    first = ei.run_iteration(tmp_path / "own", settings, workers=1, progress=False,
                             log=lambda *_: None)
    policy = load_policy(first[0]["policy"])
    assert isinstance(policy, KeepsActor) and policy.value_layers
    assert policy.config["expert_iteration_round"] == 1
    # the self-play decisions behind the network are still counted
    assert policy.config["steps"] == load_policy(policy_path("scratch")).config["steps"] > 0
    # an expert-prior base is refused with models=own, a keeps one without
    with pytest.raises((ValueError, Exception), match="not an 'mlp' or 'keeps'"):
        ei.run_iteration(tmp_path / "x", ei.IterationSettings(base="shipped", models="own"),
                         workers=1, progress=False)
    with pytest.raises(Exception, match="expert-prior"):
        ei.run_iteration(tmp_path / "y", ei.IterationSettings(base="scratch"), workers=1,
                         progress=False)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
