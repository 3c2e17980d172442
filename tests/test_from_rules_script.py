"""``train/from_rules.sh``, the one command behind the network that beats expert from the rules
alone: every command it runs parses, each round's base is the round before it, and each round's
settings are those of the network committed in ``results/from-rules``."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "train" / "from_rules.sh"
#: the committed settings of each round the script runs, in order
ROUNDS = ["exit-own", "exit-own-2", "exit-own-3", "exit-own-4-replay", "exit-own-5-replay"]
SAME = ("games", "playouts", "seed", "temperature", "anchor", "epochs", "learning_rate",
        "models")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _commands(tmp_path: Path, run: Path) -> list[list[str]]:
    """The commands the script runs, recorded by a stand-in for ``cribenv``."""
    log = tmp_path / "calls.jsonl"
    fake = tmp_path / "fake-cribenv"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n")
    fake.chmod(0o755)
    subprocess.run(["bash", str(SCRIPT), str(run)], cwd=ROOT, check=True,
                   env={**os.environ, "CRIBENV": str(fake)})
    return [json.loads(line) for line in log.read_text().splitlines()]


def _parse(argv: list[str]) -> argparse.Namespace:
    from train import command, expert_iteration

    parser = argparse.ArgumentParser(prog=f"cribenv {argv[0]}", exit_on_error=False)
    {"train": command, "expert-iteration": expert_iteration}[argv[0]].configure(parser)
    return parser.parse_args(argv[1:])


def test_the_script_runs_the_committed_rounds_in_order(tmp_path):
    from train import expert_iteration
    from train.expert_iteration import IterationSettings

    run = tmp_path / "run"
    calls = _commands(tmp_path, run)
    assert [c[0] for c in calls] == ["train"] + ["expert-iteration"] * len(ROUNDS)
    ppo = _parse(calls[0])
    assert Path(ppo.config) == ROOT / "train/configs/selfplay-from-rules.json"
    assert not ppo.resume
    base = run / "ppo" / "policy.safetensors"
    for k, (argv, name) in enumerate(zip(calls[1:], ROUNDS), start=1):
        args = _parse(argv)
        settings = expert_iteration.settings_of(args)
        saved = json.loads((ROOT / "results" / "from-rules" / name / "settings.json").read_text())
        assert {s: getattr(settings, s) for s in SAME} == {s: saved[s] for s in SAME}, name
        assert saved["batch_size"] == IterationSettings.batch_size     # no flag: the default
        assert Path(settings.base) == base, name
        # the committed run replayed runs/exit-own-N/round-1/games: here exit-N's games
        assert [Path(f) for f in settings.replay] == [
            run / Path(f).parts[1].replace("exit-own-", "exit-") / "round-1" / "games"
            for f in saved.get("replay", ())], name
        assert Path(args.run_dir) == run / f"exit-{k}"
        base = run / f"exit-{k}" / "round-1" / "policy.safetensors"


def test_a_stopped_ppo_stage_resumes_and_a_finished_one_is_skipped(tmp_path):
    """The PPO stage resumes whenever it has a checkpoint (a policy file written as a Ctrl-C
    stopped it does not count as done), starts afresh without one (killed before its first),
    and is skipped once the trainer has finished (its ``.done``)."""
    run = tmp_path / "run"
    (run / "ppo").mkdir(parents=True)                  # killed before its first checkpoint
    assert not _parse(_commands(tmp_path, run)[0]).resume
    (run / "ppo" / ".done").unlink()
    (run / "ppo" / "checkpoints").mkdir()
    (run / "ppo" / "checkpoints" / "LATEST").write_text("step-1\n")
    (run / "ppo" / "policy.safetensors").write_bytes(b"")   # a stop exports the policy
    (tmp_path / "calls.jsonl").unlink()
    assert _parse(_commands(tmp_path, run)[0]).resume
    (tmp_path / "calls.jsonl").unlink()
    assert [c[0] for c in _commands(tmp_path, run)] == ["expert-iteration"] * len(ROUNDS)


def test_a_stopped_ppo_stage_stops_the_script(tmp_path):
    """A trainer that fails or is stopped (exit status not 0) ends the script there: no round
    runs on its network and the stage is not marked done."""
    log = tmp_path / "calls.jsonl"
    fake = tmp_path / "fake-cribenv"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\n"
                    f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                    "sys.exit(130)\n")
    fake.chmod(0o755)
    run = tmp_path / "run"
    done = subprocess.run(["bash", str(SCRIPT), str(run)], cwd=tmp_path,
                          env={**os.environ, "CRIBENV": str(fake)})
    assert done.returncode == 130
    assert [json.loads(line)[0] for line in log.read_text().splitlines()] == ["train"]
    assert not (run / "ppo" / ".done").exists()


def test_the_network_it_made_ships_as_ppo_scratch_exit():
    """``ppo:scratch-exit`` is the last round's committed network: a keeps network that reads
    the observation alone, played with numpy."""
    from agents import make_agent
    from agents.ppo import SCRATCH_EXIT_POLICY

    last = ROOT / "results" / "from-rules" / ROUNDS[-1] / "policy.safetensors"
    assert SCRATCH_EXIT_POLICY.read_bytes() == last.read_bytes()
    agent = make_agent("ppo:scratch-exit")
    assert agent.name == "ppo:scratch-exit" and agent.policy.arch == "keeps"
    assert agent.policy.config["expert_iteration_round"] == 1


def _lookup(tmp_path: Path, venv: bool, on_path: bool) -> tuple[subprocess.CompletedProcess,
                                                                 Path]:
    """The script run from a copy of the tree in ``tmp_path`` with no ``CRIBENV``: a
    ``.venv/bin/cribenv`` beside its ``train/`` folder (as the README's set-up makes it) and
    one on ``PATH`` (an activated environment), each there or not; each stand-in writes its
    name to ``who`` and succeeds."""
    repo = tmp_path / "repo"
    (repo / "train").mkdir(parents=True)
    shutil.copy(SCRIPT, repo / "train" / "from_rules.sh")
    who = tmp_path / "who"
    path = ["/usr/bin", "/bin"]
    for where, wanted in ((repo / ".venv" / "bin", venv), (tmp_path / "bin", on_path)):
        if wanted:
            where.mkdir(parents=True)
            record = f"open({str(who)!r}, 'a').write({str(where)!r} + '\\n')"
            (where / "cribenv").write_text(f"#!{sys.executable}\n{record}\n")
            (where / "cribenv").chmod(0o755)
    if on_path:
        path.insert(0, str(tmp_path / "bin"))
    env = {k: v for k, v in os.environ.items() if k not in ("CRIBENV", "VIRTUAL_ENV")}
    done = subprocess.run(["bash", "train/from_rules.sh", str(tmp_path / "run")], cwd=repo,
                          env={**env, "PATH": os.pathsep.join(path)},
                          capture_output=True, text=True)
    return done, who


@pytest.mark.parametrize("venv,on_path", [(True, False), (True, True), (False, True)])
def test_the_script_finds_the_projects_cribenv(tmp_path, venv, on_path):
    """Set up but not activated (bare ``cribenv`` is not on ``PATH``), the script runs the
    project's ``.venv/bin/cribenv`` (before any other on ``PATH``); without one, the one on
    ``PATH``: every stage, each by the same command."""
    done, who = _lookup(tmp_path, venv, on_path)
    assert done.returncode == 0, done.stderr
    expected = tmp_path / "repo" / ".venv" / "bin" if venv else tmp_path / "bin"
    assert who.read_text().splitlines() == [str(expected)] * (1 + len(ROUNDS))


def test_without_cribenv_the_script_says_so_and_writes_nothing(tmp_path):
    """No ``.venv`` and nothing on ``PATH`` (a checkout not set up): exit status 2 before any
    stage, one message naming where it looked and what to do, no run folder."""
    done, who = _lookup(tmp_path, venv=False, on_path=False)
    assert done.returncode == 2
    assert done.stderr.startswith("from_rules.sh: cannot find cribenv: ")
    assert str(tmp_path / "repo" / ".venv" / "bin" / "cribenv") in done.stderr
    assert "set-up" in done.stderr and "CRIBENV" in done.stderr
    assert "command not found" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert not who.exists() and not (tmp_path / "run").exists()
