"""``cribenv train`` under hostile use: bad settings files and run folders, damaged
checkpoints, and resume semantics (the run's own settings kept, changed ones refused, every log
row kept exactly once)."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest

from cribenv.cli import main
from train.config import TrainConfig
from train.selfplay_config import SelfPlayConfig

SB3 = ["--backend", "sb3", "--n-games", "2", "--n-steps", "64", "--minibatch-size", "64",
       "--n-epochs", "1", "--net-arch", "16", "--heuristics", "random", "--eval-games", "2",
       "--eval-every", "128", "--snapshot-every", "256", "--checkpoint-every", "256",
       "--pool-size", "3", "--no-progress"]
SELFPLAY = ["--n-games", "8", "--n-steps", "16", "--minibatch-size", "64", "--n-epochs", "1",
            "--net-arch", "16", "--card-dim", "4", "--heuristics", "random", "--eval-games", "2",
            "--snapshot-every", "128", "--checkpoint-every", "256", "--eval-every", "128",
            "--pool-size", "3", "--no-progress"]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out, out.err


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    """A 300-step self-play run with its checkpoints, trained once for the module's tests."""
    run = tmp_path_factory.mktemp("small") / "run"
    assert main(["train", "--run-dir", str(run), *SELFPLAY, "--total-steps", "300"]) == 0
    return run


def copy_of(run: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ``run`` to damage, and its latest checkpoint folder."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    return copy, copy / "checkpoints" / (copy / "checkpoints" / "LATEST").read_text().strip()


def test_default_threads_is_one():
    """One torch thread: on 2 cores more threads contend with the games (docs/cli.md numbers)."""
    assert TrainConfig().threads == 1 and SelfPlayConfig().threads == 1


# -------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("content,what", [(None, "does not exist"), ("[1, 2]", "JSON object"),
                                          ("{oops", "not a readable JSON"),
                                          ('{"gama": 0.5}', "gama")])
def test_bad_config_files(capsys, tmp_path, content, what):
    config = tmp_path / "c.json"
    if content is not None:
        config.write_text(content)
    status, _, err = cli(capsys, "train", "--run-dir", str(tmp_path / "run"), "--config",
                         str(config), "--no-progress")
    assert status == 2 and what in err
    if content is not None and "gama" not in content:
        assert str(config) in err
    assert not (tmp_path / "run").exists()


def test_run_dir_that_cannot_be_written(capsys, tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    for run_dir in (a_file, a_file / "run"):
        status, _, err = cli(capsys, "train", "--run-dir", str(run_dir), "--no-progress")
        assert status == 2 and str(a_file) in err


def test_a_setting_of_the_other_backend_is_exit_2(capsys, tmp_path):
    status, _, err = cli(capsys, "train", "--run-dir", str(tmp_path / "r"), "--n-envs", "4")
    assert status == 2 and "--n-envs" in err


@pytest.fixture(scope="module")
def sb3_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("sb3") / "run"
    assert main(["train", "--run-dir", str(run), *SB3, "--total-steps", "512"]) == 0
    return run


def _copy(run: Path, tmp_path: Path) -> Path:
    import shutil

    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    return dst


@pytest.mark.parametrize("latest,what", [(b"\x8f\x00\xffrandom", "LATEST is damaged"),
                                         (b"../../etc", "LATEST is damaged"),
                                         (b"step-000000999\n", "incomplete")])
def test_damaged_latest_names_the_file(capsys, tmp_path, sb3_run, latest, what):
    run = _copy(sb3_run, tmp_path)
    (run / "checkpoints" / "LATEST").write_bytes(latest)
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--backend", "sb3", "--resume",
                         "--total-steps", "1024", "--no-progress")
    assert status == 2 and what in err and str(run) in err


@pytest.mark.parametrize("state", ["[1]", "{}", "null", "\x00\x01"])
def test_damaged_state_json(capsys, tmp_path, sb3_run, state):
    run = _copy(sb3_run, tmp_path)
    name = (run / "checkpoints" / "LATEST").read_text().strip()
    (run / "checkpoints" / name / "state.json").write_text(state)
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--backend", "sb3", "--resume",
                         "--total-steps", "1024", "--no-progress")
    assert status == 2 and name in err


# -------------------------------------------------------------------------- resume semantics
def test_resume_keeps_the_runs_own_settings(capsys, tmp_path, sb3_run):
    run = _copy(sb3_run, tmp_path)
    before = (run / "config.json").read_text()
    progress = (run / "logs" / "progress.csv").read_text()
    status, out, _ = cli(capsys, "train", "--run-dir", str(run), "--backend", "sb3", "--resume",
                         "--no-progress")
    # the run's own total_steps (512) is reached: nothing trained, nothing rewritten, and no
    # "0 env steps/s"
    assert status == 0 and "nothing left to train" in out and "512" in out
    assert "steps/s" not in out
    assert (run / "config.json").read_text() == before
    assert (run / "logs" / "progress.csv").read_text() == progress


def test_resume_refuses_changed_settings_naming_them(capsys, tmp_path, sb3_run):
    run = _copy(sb3_run, tmp_path)
    before = (run / "config.json").read_text()
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--backend", "sb3", "--resume",
                         "--learning-rate", "0.01", "--net-arch", "32", "--gamma", "0.5")
    assert status == 2
    for text in ("learning_rate (the run has 0.0003, asked 0.01)", "net_arch", "gamma"):
        assert text in err
    assert (run / "config.json").read_text() == before


def test_sb3_resume_from_an_older_checkpoint_logs_each_row_once(capsys, tmp_path, sb3_run):
    """A kill after step 256's checkpoint: the rows logged up to 256 stay, the rest are logged
    again by the resumed run (once), and the explicit --total-steps applies."""
    run = _copy(sb3_run, tmp_path)
    uninterrupted = rows(run / "logs" / "progress.csv")
    evals = [r["step"] for r in rows(run / "eval.csv")]
    assert evals == ["0", "128", "256", "384", "512"]
    (run / "checkpoints" / "LATEST").write_text("step-000000256\n")
    status, out, _ = cli(capsys, "train", "--run-dir", str(run), "--backend", "sb3", "--resume",
                         "--total-steps", "768", "--no-progress")
    assert status == 0 and "changed total_steps 512 -> 768" in out
    assert "512 steps at" in out and " 0 env steps/s" not in out
    assert [r["step"] for r in rows(run / "eval.csv")] == \
        ["0", "128", "256", "384", "512", "640", "768"]
    progress = rows(run / "logs" / "progress.csv")
    steps = [r["time/total_timesteps"] for r in progress if r["time/total_timesteps"]]
    assert steps == [str(s) for s in range(128, 769, 128)]
    cut = next(i for i, r in enumerate(uninterrupted)
               if r["time/total_timesteps"] and int(r["time/total_timesteps"]) > 256)
    assert cut >= 4 and progress[:cut] == uninterrupted[:cut]   # the rows up to step 256
    assert json.loads((run / "config.json").read_text())["total_steps"] == 768


def test_selfplay_resume_keeps_rows_and_settings(capsys, tmp_path):
    run = tmp_path / "run"
    assert main(["train", "--run-dir", str(run), *SELFPLAY, "--total-steps", "600"]) == 0
    capsys.readouterr()
    first = rows(run / "logs" / "progress.csv")
    names = sorted(p.name for p in (run / "checkpoints").glob("step-*"))
    older = names[0]
    at = int(older.split("-")[1])
    (run / "checkpoints" / "LATEST").write_text(older + "\n")
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--no-progress")
    assert status == 0, err
    assert "kept the run's settings (total_steps 600" in out
    again = rows(run / "logs" / "progress.csv")
    assert [r for r in again if int(r["step"]) <= at] == [r for r in first
                                                          if int(r["step"]) <= at]
    steps = [int(r["step"]) for r in again]
    assert steps == sorted(set(steps)) and steps[-1] >= 600
    evals = [int(r["step"]) for r in rows(run / "eval.csv")]
    assert evals == sorted(set(evals))
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--gamma", "0.5")
    assert status == 2 and "gamma (the run has 0.99, asked 0.5)" in err


class _Planted:
    """Unpickling this object would write the file named in ``PLANTED_MARK``."""

    def __reduce__(self):
        return (Path.write_text, (Path(PLANTED_MARK[0]), "unpickled"))


PLANTED_MARK: list[str] = [""]


def test_selfplay_checkpoints_are_weights_and_json_only(small_run, capsys, tmp_path):
    """The fast trainer's resume loads model.zip with torch.load(weights_only=True) and the
    rest from JSON: a checkpoint holding a pickled object is refused, the object never built."""
    import torch

    run, latest = copy_of(small_run, tmp_path)
    honest = torch.load(latest / "model.zip", weights_only=True)   # tensors and numbers only
    assert set(honest) == {"net", "optimizer", "torch_gen"}
    json.loads((latest / "state.json").read_text())                 # the rest is JSON
    PLANTED_MARK[0] = str(tmp_path / "mark")
    torch.save({**honest, "net": _Planted()}, latest / "model.zip")
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                           "600")
    assert status == 2 and "model.zip cannot be loaded: it holds a Python object" in err
    assert "resuming" not in out          # said only once the checkpoint has loaded
    assert "never unpickled" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "mark").exists()


def test_train_help_says_which_resume_unpickles(capsys):
    status, out, _ = cli(capsys, "train", "--help")
    assert status == 0
    text = " ".join(out.split())
    assert "--backend sb3 --resume is the one path that unpickles" in text
    assert "checkpoints are weights and JSON only" in text


@pytest.mark.parametrize("settings, flags, words", [
    ({"total_steps": "100"}, [], "total_steps must be an integer, got '100'"),
    ({"total_steps": "lots"}, [], "total_steps must be an integer"),
    ({"total_steps": 1.5}, [], "total_steps must be an integer, got 1.5"),
    ({"total_steps": True}, [], "total_steps must be an integer, got True"),
    ({"seed": 1.5}, [], "seed must be an integer"),
    ({"skunks": "no"}, [], "skunks must be true or false, got 'no'"),
    ({"net_arch": []}, [], "net_arch must be a list of 1 to 16 layer widths"),
    ({"heuristics": "greedy"}, [], "heuristics must be a list"),
    ({"gamma": 5}, [], "gamma must be in [0, 1], got 5.0"),
    ({"gamma": -1}, [], "gamma must be in [0, 1], got -1.0"),
    ({"gae_lambda": float("nan")}, [], "gae_lambda must be a finite number"),
    ({"ent_coef": float("inf")}, [], "ent_coef must be a finite number"),
    ({"pool_priority": float("nan")}, [], "pool_priority must be a finite number"),
    ({"shaping": float("nan")}, [], "shaping must be a finite number"),
    ({"max_grad_norm": -1}, [], "max_grad_norm must be > 0"),
    ({"vf_coef": -1}, [], "vf_coef must be >= 0"),
    ({"target_kl": -1}, [], "target_kl must be >= 0"),
    ({}, ["--gamma", "nan"], "gamma must be a finite number"),
    ({}, ["--learning-rate", "inf"], "learning_rate must be a finite number"),
    ({}, ["--net-arch", "-3"],
     "net_arch must be a list of 1 to 16 layer widths, each from 1 to 8192"),
    ({}, ["--net-arch", "0"], "net_arch"),
    ({}, ["--clip-range", "-1"], "clip_range must be in (0, 10], got -1.0"),
    ({}, ["--time-limit", "-5"], "time_limit must be >= 0"),
    ({}, ["--seed", "-1"], "seed must be >= 0"),
    ({}, ["--device", "tpu"], "device must be 'cpu', 'cuda'"),
    # sizes that once went on to allocate 240 GB (a traceback) or ran out of memory slowly
    ({}, ["--net-arch", "100000000"], "each from 1 to 8192, got [100000000]"),
    ({"card_arch": [64] * 17}, [], "card_arch must be a list of 1 to 16 layer widths"),
    ({}, ["--card-dim", "100000000"], "card_dim must be <= 8192"),
    ({}, ["--n-games", "1000000000"], "n_games must be <= 65536"),
    ({}, ["--eval-games", "100000000000"], "eval_games must be <= 10000000"),
    ({}, ["--n-games", "65536", "--n-steps", "65536"], "n_games x n_steps must be <= 2,097,152"),
    ({}, ["--backend", "sb3", "--n-games", "4096", "--n-steps", "65536"], "n_games x n_steps"),
])
def test_bad_settings_are_refused_before_anything_is_written(capsys, tmp_path, settings, flags,
                                                            words):
    config = tmp_path / "c.json"
    config.write_text(json.dumps(settings))
    run = tmp_path / "run"
    status, _, err = cli(capsys, "train", "--config", str(config), "--run-dir", str(run),
                         *flags)
    assert status == 2 and words in err, err
    assert len(err.strip().splitlines()) == 1
    assert not run.exists() or not any(run.iterdir()), sorted(run.iterdir())


@pytest.mark.parametrize("backend", ["sb3", "rllib"])
def test_every_backend_checks_its_settings_by_the_same_table(capsys, tmp_path, backend):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"gamma": 5}))
    status, _, err = cli(capsys, "train", "--backend", backend, "--config", str(config),
                         "--run-dir", str(tmp_path / "run"))
    assert status == 2 and "gamma must be in [0, 1]" in err, err


@pytest.mark.parametrize("change", [{"step": -50}, {"step": "abc"}, {"step": None},
                                    {"step": 10**9}])
def test_a_damaged_step_is_refused_and_loses_no_log_row(small_run, capsys, tmp_path, change):
    """``"step": -50`` once resumed with exit 0 and deleted all of eval.csv."""
    run, latest = copy_of(small_run, tmp_path)
    state = json.loads((latest / "state.json").read_text())
    state.update(change)
    if change["step"] is None:
        del state["step"]
    (latest / "state.json").write_text(json.dumps(state))
    logs = {name: (run / name).read_bytes() for name in ("eval.csv", "logs/progress.csv")}
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                         "600")
    assert status == 2 and "is damaged" in err and latest.name in err, err
    assert {name: (run / name).read_bytes() for name in logs} == logs


def _without_net(a):
    return {k: v for k, v in a.items() if k != "net"}


def _wrong_shape(a):
    name = next(iter(a["net"]))
    return {**a, "net": {**a["net"], name: a["net"][name][..., :1]}}


def _nan_weights(a):
    name = next(n for n, w in a["net"].items() if w.is_floating_point())
    return {**a, "net": {**a["net"], name: a["net"][name] * float("nan")}}


class _Reduces:
    """Pickled as a call of os.getcwd: torch words its refusal unlike a class's."""

    def __reduce__(self):
        import os
        return (os.getcwd, ())


@pytest.mark.parametrize("damage, words", [
    (_without_net, "should hold net, optimizer, torch_gen, but holds ['optimizer', 'torch_gen']"),
    (lambda a: list(a.values()), "should hold net, optimizer, torch_gen, but holds list"),
    (_wrong_shape, "does not fit this run's network (config.json): Error(s) in loading"),
    (_nan_weights, "holds NaN or infinite weights"),
    (lambda a: {**a, "net": {"w": [1.0, 2.0]}}, "its 'net' is not a set of named tensors"),
    (lambda a: {**a, "optimizer": _Reduces()}, "it holds a Python object (posix.getcwd), not"),
])
def test_a_damaged_model_zip_is_named_and_refused(small_run, capsys, tmp_path, damage, words):
    """Each once ended a resume in a traceback (KeyError 'net', a size mismatch), or in
    torch's own advice to unpickle; now: exit 2, one line naming model.zip, nothing changed."""
    import torch

    run, latest = copy_of(small_run, tmp_path)
    torch.save(damage(torch.load(latest / "model.zip", weights_only=True)), latest / "model.zip")
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                           "600")
    assert status == 2 and words in err and "model.zip" in err, err
    assert len(err.strip().splitlines()) == 1 and "weights_only" not in err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("change, words", [
    ({"pool": None}, "lacks the snapshot pool ('pool')"),
    ({"pool": [{"name": "../../config.json", "wins": 0, "games": 0}]}, "pool has a bad entry"),
    ({"games_started": None}, "games_started is None, not an integer"),
    ({"wall_s": "soon"}, "wall_s is 'soon', not a number"),
    ({"numpy_rng": {"bit_generator": "PCG64", "state": "x"}}, "numpy_rng is not a generator"),
])
def test_a_damaged_state_json_is_named_and_refused(small_run, capsys, tmp_path, change, words):
    run, latest = copy_of(small_run, tmp_path)
    state = json.loads((latest / "state.json").read_text())
    state.update(change)
    state = {k: v for k, v in state.items() if v is not None}
    (latest / "state.json").write_text(json.dumps(state))
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                         "600", "--eval-games", "4")
    assert status == 2 and words in err and "state.json" in err, err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_a_garbage_log_line_and_a_deleted_policy_do_not_fail_a_resume(small_run, capsys,
                                                                       tmp_path):
    """A damaged line in progress.csv or eval.csv once ended a finished run in a traceback
    (the plots); policy.safetensors deleted after the last checkpoint was 'nothing left to
    train' with no policy written."""
    run, _ = copy_of(small_run, tmp_path)
    for name in ("logs/progress.csv", "eval.csv"):
        with (run / name).open("a") as f:
            f.write("garbage,\x00,not a number\n")
    (run / "policy.safetensors").unlink()
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume")
    assert status == 0, err
    assert (run / "policy.safetensors").is_file() and (run / "training.png").is_file()
    from agents import make_agent
    assert make_agent(f"ppo:{run / 'policy.safetensors'}").name.endswith("policy.safetensors")


def test_every_backends_defaults_and_shipped_configs_pass_the_table():
    from train.rllib_config import RLlibConfig

    for kind in (TrainConfig, SelfPlayConfig, RLlibConfig):
        kind.from_dict(kind().to_dict())   # a saved run's settings load back unchanged


def test_a_full_disk_mid_run_is_exit_2_and_the_resume_finishes(small_run, capsys, tmp_path,
                                                               monkeypatch):
    """torch words a full disk "unexpected pos" (a RuntimeError) and safetensors "os error 28":
    either, with the device full, is "no space left" and exit 2; the checkpoint in progress
    leaves no folder behind, LATEST still names the last complete one, and once there is room
    again the resume finishes. (On a real 1.8 MB tmpfs the same happens; CI cannot mount one.)"""
    import os
    from types import SimpleNamespace

    import torch

    import cribenv.files

    run, _ = copy_of(small_run, tmp_path)
    latest = (run / "checkpoints" / "LATEST").read_text()
    real_save, real_statvfs = torch.save, os.statvfs

    def full_save(obj, path, *args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 5")

    monkeypatch.setattr(torch, "save", full_save)
    monkeypatch.setattr(cribenv.files.os, "statvfs",
                        lambda p: SimpleNamespace(f_bavail=0, f_frsize=4096))
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                         "900", "--no-progress")
    assert status == 2 and "no space left on the device holding" in err, err
    assert "checkpoints/step-" in err and len(err.strip().splitlines()) == 1
    assert (run / "checkpoints" / "LATEST").read_text() == latest
    assert not list((run / "checkpoints").glob("*.tmp"))
    monkeypatch.setattr(torch, "save", real_save)
    monkeypatch.setattr(cribenv.files.os, "statvfs", real_statvfs)
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                           "900")
    assert status == 0, err
    assert int(rows(run / "logs" / "progress.csv")[-1]["step"]) >= 900


def test_a_library_error_with_room_left_is_not_called_a_full_disk(tmp_path):
    from cribenv.files import as_disk_error

    exc = RuntimeError("something else")
    assert as_disk_error(exc, tmp_path / "x.zip") is exc   # tmp_path has room


# -------------------------------------------------------- each backend's own flags
def train_help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["train", *argv])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("backend,has,lacks", [
    ("selfplay", ["--reward {win,points,mix}", "--engine-threads", "--policy {mlp,cards,keeps,"],
     ["--bc-games", "--num-env-runners", "--address ADDRESS", "--activation"]),
    ("sb3", ["--reward {win,points}", "--num-players {2}", "--bc-games", "--n-games",
             "--minibatch-size", "--activation {relu,tanh}"],
     ["mix", "--engine-threads", "--n-envs", "--batch-size", "--num-env-runners",
      "--address ADDRESS"]),
    ("rllib", ["--reward {win,points}", "--num-env-runners", "--train-batch-size",
               "--address ADDRESS"],
     ["mix", "--threads", "--policy", "--n-games", "--bc-games", "--eval-every"]),
])
def test_train_help_lists_the_backends_settings_with_its_defaults(capsys, backend, has, lacks):
    """``cribenv train --backend X --help``: X's settings, defaults and choices only (the
    settings of every backend first), whichever side of --help --backend is given."""
    out = train_help(capsys, "--backend", backend, "--help")
    assert out == train_help(capsys, "--help", f"--backend={backend}")
    text = " ".join(out.split())
    for words in has:
        assert words in text, words
    for words in lacks:
        assert words not in text, words
    assert f"settings of every backend ({backend} defaults)" in text
    assert f"settings of the {backend} backend" in text
    reward = text.split("--reward ")[1].split("--shaping")[0]
    assert reward.endswith(f"(default {'points' if backend == 'selfplay' else 'win'}) ")


def test_train_help_without_a_backend_is_the_selfplay_one(capsys):
    assert train_help(capsys, "--help") == train_help(capsys, "--backend", "selfplay", "--help")


def test_a_choice_the_backend_refuses_is_an_argument_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--backend", "sb3", "--reward", "mix", "--run-dir", str(tmp_path / "r")])
    assert exc.value.code == 2
    assert "invalid choice: 'mix'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_the_old_names_of_renamed_flags_still_work_with_a_warning(tmp_path):
    from train.command import build_config, configure

    parser = argparse.ArgumentParser(prog="cribenv train")
    configure(parser)
    with pytest.warns(FutureWarning, match="--n-envs is now called --n-games"):
        args = parser.parse_args(["--backend", "sb3", "--run-dir", str(tmp_path), "--n-envs",
                                  "4", "--batch-size", "32"])
    config = build_config(args)
    assert (config.n_games, config.minibatch_size) == (4, 32)


# -------------------------------------------------------------------------- one run a folder
def files_of(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_second_trainer_on_a_held_run_dir_is_refused(small_run, capsys, tmp_path):
    """Two trainers on one folder once both ran: checkpoints side by side, progress.csv with
    each step twice, config.json of the second. The folder is held (an flock, as expert
    iteration's), so the second is refused, naming it, and changes nothing."""
    import os

    fcntl = pytest.importorskip("fcntl")
    run, _ = copy_of(small_run, tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    before = files_of(run)
    for folder, extra in ((run, ["--resume", "--total-steps", "600"]), (empty, [])):
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)       # as a trainer on the folder holds it
            status, _, err = cli(capsys, "train", "--run-dir", str(folder), *SELFPLAY, *extra)
        finally:
            os.close(fd)
        assert status == 2 and f"--run-dir '{folder}' is in use by another training run" in err
    assert files_of(run) == before and list(empty.iterdir()) == []


# -------------------------------------------------------------------------- device and bots
def test_a_device_torch_cannot_use_is_refused_before_anything_is_written(small_run, capsys,
                                                                          tmp_path):
    """--device cuda with a CPU-only torch was an AssertionError traceback after config.json
    and pool/ were written."""
    import torch

    devices = ["cuda:99"] + ([] if torch.cuda.is_available() else ["cuda"])
    for device in devices:
        status, _, err = cli(capsys, "train", "--run-dir", str(tmp_path / "new" / "run"),
                             *SELFPLAY, "--device", device)
        assert status == 2 and f"--device {device}: " in err, err
        assert not (tmp_path / "new").exists()
    run, _ = copy_of(small_run, tmp_path)
    before = files_of(run)
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                         "600", "--device", "cuda:99")
    assert status == 2 and "--device cuda:99: " in err and files_of(run) == before


@pytest.mark.parametrize("bot,words", [
    ("cmd:false", "cannot play: bot 'cmd:false' ended (exit status 1)"),
    ("cmd:/no/such/program", "cannot play: bot 'cmd:/no/such/program' could not be started"),
    ("nosuchbot", "cannot be made: unknown agent 'nosuchbot'"),
])
def test_an_evaluation_bot_that_cannot_play_is_refused_before_training(capsys, tmp_path, bot,
                                                                       words):
    """heuristics ["cmd:false"] once trained to the end and reported "cmd:false 100.0%": every
    game the bot forfeited counted as the learner's win."""
    status, _, err = cli(capsys, "train", "--run-dir", str(tmp_path / "run"), *SELFPLAY,
                         "--heuristics", "random", bot)
    assert status == 2 and f"the evaluation bot {bot!r} {words}" in err, err
    assert not (tmp_path / "run").exists()


def test_an_evaluation_bots_forfeits_are_said_not_taken_for_wins(capsys):
    """A bot that starts, then fails during an evaluation (after the check at the start), has
    its forfeits said beside the win rate they make."""
    from agents import make_agent
    from train.evaluation import evaluation_row

    config = SelfPlayConfig(heuristics=["random", "cmd:false"], eval_games=2)
    row = evaluation_row(make_agent("greedy"), config, step=1024)
    assert row["cmd:false_win_rate"] == 1.0
    err = capsys.readouterr().err
    assert ("the evaluation bot 'cmd:false' forfeited 2 of 2 games, each counted as its loss "
            "(bot 'cmd:false' ended (exit status 1)") in err and "step 1,024" in err
    assert "'random'" not in err


# -------------------------------------------------------------------------- damaged logs
@pytest.mark.parametrize("log,damage,words", [
    ("logs/progress.csv", b"\x8f\xff\x00 not text", "cannot be read as a CSV log"),
    ("logs/progress.csv", "header lost", "is not a header with a 'step' column"),
    ("eval.csv", "header lost", "is not a header with a 'step' column"),
    ("logs/progress.csv", b"", None),
    ("eval.csv", b"", None),
])
def test_a_damaged_log_is_refused_at_the_start_of_a_resume(small_run, capsys, tmp_path, log,
                                                           damage, words):
    """A resume whose logs/progress.csv was damaged once trained to the end, then failed in the
    plot (TypeError, exit 1). A log that cannot be read is refused before anything changes; an
    empty one is a log to start again."""
    run, _ = copy_of(small_run, tmp_path)
    path = run / log
    if damage == "header lost":
        path.write_text("".join(path.read_text().splitlines(True)[1:]))
    else:
        path.write_bytes(damage)
    before = files_of(run)
    status, _, err = cli(capsys, "train", "--run-dir", str(run), "--resume", "--total-steps",
                         "600")
    if words is None:
        assert status == 0, err
        assert rows(path) and "step" in rows(path)[0] and (run / "training.png").is_file()
    else:
        assert status == 2 and f"{path} is damaged: " in err and words in err, err
        assert "move it aside" in err and files_of(run) == before


def test_a_stop_during_the_final_evaluation_is_obeyed_and_the_resume_plays_it(capsys, tmp_path,
                                                                             monkeypatch):
    """A stop signal in the middle of an evaluation (here the final one, a call that would
    last ten minutes) stops the run at once with its checkpoint; the resume, which would once
    have said "nothing left to train", plays the evaluation."""
    import os
    import signal
    import threading
    import time

    import train.selfplay

    real = train.selfplay.evaluation_row
    stuck = threading.Event()

    def evaluation_row(agent, config, step, record=None):
        if step == 0:
            return real(agent, config, step, record)
        stuck.set()
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(600)                  # as a search's long decision: never returns in time
        raise AssertionError("the stop was not obeyed")

    run = tmp_path / "run"
    monkeypatch.setattr(train.selfplay, "evaluation_row", evaluation_row)
    started = time.monotonic()
    status, out, _ = cli(capsys, "train", "--run-dir", str(run), *SELFPLAY, "--eval-every",
                         "100000", "--total-steps", "300")
    assert status == 130 and stuck.is_set() and time.monotonic() - started < 300
    assert f"--run-dir {run} --resume" in out and "stopped at step 368" in out
    assert (run / "checkpoints" / "LATEST").read_text().strip() == "step-000000368"
    assert [r["step"] for r in rows(run / "eval.csv")] == ["0"]
    monkeypatch.setattr(train.selfplay, "evaluation_row", real)
    status, out, err = cli(capsys, "train", "--run-dir", str(run), "--resume")
    assert status == 0, err
    assert [r["step"] for r in rows(run / "eval.csv")] == ["0", "368"]
