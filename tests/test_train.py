"""Self-play PPO training: a tiny run end to end, resume after a kill, bad checkpoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents import make_agent  # noqa: E402
from cribenv.game import Game, Rules  # noqa: E402
from cribenv.observation import OBS_SIZE, encode  # noqa: E402
from train.checkpoints import CheckpointError  # noqa: E402
from train.config import TrainConfig  # noqa: E402
from train.sb3_trainer import train  # noqa: E402

TINY = dict(n_games=2, n_steps=64, minibatch_size=64, n_epochs=1, net_arch=[16], threads=1,
            heuristics=["random"], eval_games=2, eval_every=256, snapshot_every=256,
            checkpoint_every=128, pool_size=3)


def tiny_config(**kw) -> TrainConfig:
    return TrainConfig(**{**TINY, "total_steps": 512, **kw})


def test_tiny_run_produces_a_playable_policy(tmp_path):
    run = tmp_path / "run"
    policy = train(tiny_config(), run, progress=False, log=lambda s: None)
    assert policy.is_file() and (run / "learning_curve.png").is_file()
    assert json.loads((run / "config.json").read_text())["net_arch"] == [16]
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("step,random_win_rate") and len(rows) >= 3
    assert len(list((run / "pool").glob("snap-*.safetensors"))) == 3   # steps 0, 256, 512
    agent = make_agent(f"ppo:{policy}")
    game = Game(Rules(target=61), seed=1)
    while not game.is_over:
        mask = np.zeros(52, np.int8)
        mask[game.legal_actions()] = 1
        card = agent.act({"observation": encode(game.view(game.current_player)),
                          "action_mask": mask})
        game.step(card)
    assert (run / "logs" / "progress.csv").is_file()
    with pytest.raises(CheckpointError, match="already holds a run"):
        train(tiny_config(), run, progress=False, log=lambda s: None)


def test_resume_after_kill_loses_nothing(tmp_path):
    run = tmp_path / "run"
    total = 4096
    cmd = [sys.executable, "-m", "cribenv.cli", "train", "--backend", "sb3", "--run-dir", str(run),
           "--total-steps", str(total), "--no-progress", "--eval-games", "0"]
    for key, value in TINY.items():
        if key == "eval_games":
            continue
        flag = "--" + key.replace("_", "-")
        cmd += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    latest = run / "checkpoints" / "LATEST"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if latest.exists() and latest.read_text().strip() >= "step-000000256":
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = int(latest.read_text().strip().split("-")[1])
    assert 0 < killed_at < total, "the run must be killed mid-way"
    state = json.loads((run / "checkpoints" / latest.read_text().strip() / "state.json")
                       .read_text())
    assert state["step"] == killed_at and state["pool"]

    logs: list[str] = []
    cfg = tiny_config(total_steps=total, eval_games=0)
    policy = train(cfg, run, resume=True, progress=False, log=logs.append)
    assert any(f"at step {killed_at:,}" in line for line in logs), logs
    final = json.loads((run / "checkpoints" / latest.read_text().strip() / "state.json")
                       .read_text())
    assert final["step"] == total
    # the pool kept its snapshots over the kill and went on adding one every 256 steps
    assert final["pool"] == [f"snap-{s:09d}.safetensors" for s in (total - 512, total - 256,
                                                                  total)]
    assert all((run / "pool" / name).is_file() for name in state["pool"])
    assert policy.is_file()


def test_bad_checkpoints_give_clear_errors(tmp_path):
    run = tmp_path / "run"
    with pytest.raises(CheckpointError, match="nothing to resume"):
        train(tiny_config(), run, resume=True, progress=False)
    train(tiny_config(total_steps=256, eval_games=0), run, progress=False, log=lambda s: None)
    # settings that define the run may not change on resume
    cfg = json.loads((run / "config.json").read_text())
    cfg["learning_rate"] = 1e-3
    (run / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="different settings"):
        train(tiny_config(total_steps=512), run, resume=True, progress=False)
    cfg["learning_rate"] = TINY.get("learning_rate", TrainConfig().learning_rate)
    (run / "config.json").write_text(json.dumps(cfg))
    name = (run / "checkpoints" / "LATEST").read_text().strip()
    (run / "checkpoints" / name / "model.zip").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot be loaded"):
        train(tiny_config(total_steps=512), run, resume=True, progress=False)
    (run / "checkpoints" / name / "state.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="corrupt"):
        train(tiny_config(total_steps=512), run, resume=True, progress=False)


def test_config_validation():
    with pytest.raises(ValueError, match="reward"):
        TrainConfig(reward="score")
    with pytest.raises(ValueError, match="eval_games"):
        TrainConfig(eval_games=3)
    with pytest.raises(ValueError, match="unknown training settings"):
        TrainConfig.from_dict({"learning_rte": 1})


def test_imitation_data_and_warm_start(tmp_path):
    from train.imitation import collect, pretrain
    from train.pool import sb3_pool
    from train.sb3_trainer import make_vec_env, new_model

    data = collect(6, teacher="greedy", seed=3, shaping=0.01, gamma=1.0)
    assert len(data) > 100 and data.obs.shape == (len(data), OBS_SIZE)
    assert data.masks[np.arange(len(data)), data.actions].all(), "the teacher's card is legal"
    assert (data.masks.sum(axis=1) > 1).all(), "forced moves carry no information"
    # with gamma 1 and no shaping, a return is +1 for the winner's decisions, -1 otherwise
    plain = collect(2, teacher="greedy", seed=3)
    assert set(np.unique(plain.returns)) <= {-1.0, 1.0}
    cfg = tiny_config(net_arch=[64])
    model = new_model(cfg, make_vec_env(cfg, sb3_pool(cfg, 0), seed=0))
    first = pretrain(model, data, epochs=1, lr=1e-3, log=lambda s: None)
    later = pretrain(model, data, epochs=15, lr=1e-3, log=lambda s: None)
    assert later["accuracy"] > first["accuracy"] + 0.1
    assert later["cross_entropy"] < first["cross_entropy"]


def test_run_with_warm_start(tmp_path):
    logs: list[str] = []
    train(tiny_config(bc_games=4, bc_epochs=2, heuristics=["greedy"], total_steps=256),
          tmp_path / "run", progress=False, log=logs.append)
    assert any("imitating expert: 4 games" in line for line in logs)
    assert any("imitation epoch 2/2" in line for line in logs)


def test_evaluation_is_a_tournament_pair():
    """The evaluation plays the tournament's duplicate deals: same games, same statistics."""
    from tournament import run_tournament
    from train.evaluation import evaluate

    res = evaluate(make_agent("greedy"), "random", games=6, seed=5, target=61)
    report = run_tournament(["learner=greedy", "random"], 6, db_path=":memory:", seed=5,
                            rules=Rules(target=61), progress=False, bootstrap=0)
    pair = report.pair("learner", "random")
    assert res["games"] == pair.games == 6
    assert (res["win_rate"], res["win_lo"], res["win_hi"]) == (
        pair.win_rate_a.value, pair.win_rate_a.low, pair.win_rate_a.high)
    assert res["net_points"] == pair.net_points_a.value


@pytest.mark.parametrize("players", [3, 4])
def test_table_evaluation_rotates_one_side_over_every_seat(players):
    """Greedy against greedy at a table: the deal decides the game whoever sits where, so with
    the agent's side rotated over every side of each deal it wins exactly once a deal: the
    fair share, 1/3 in 3 players and 1/2 in 4 (partners), and nets 0 match points."""
    from train.evaluation import evaluate_table

    res = evaluate_table(make_agent("greedy"), "greedy", players, deals=3, seed=4, target=61)
    sides = 3 if players == 3 else 2
    assert res["games"] == 3 * sides
    assert res["win_rate"] == pytest.approx(1 / sides) == pytest.approx(res["fair_share"])
    assert res["net_points"] == pytest.approx(0.0)
    assert res["win_lo"] < res["win_rate"] < res["win_hi"]
    weaker = evaluate_table(make_agent("random", seed=1), "greedy", players, deals=3, seed=4,
                            target=61)
    assert weaker["win_rate"] < res["win_rate"] and weaker["net_points"] < 0


def test_opponent_pool_sampling_rule(tmp_path):
    """Heuristics only until a snapshot exists; then the heuristic share decides; the pool keeps
    the ``pool_size`` newest snapshots."""
    import random

    from agents.ppo import save_policy
    from train.pool import sb3_pool

    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        path = tmp_path / f"snap-{k}.safetensors"
        save_policy(path, [(rng.normal(size=(8, OBS_SIZE)), np.zeros(8))],
                    (rng.normal(size=(52, 8)), np.zeros(52)), {"activation": "tanh"})
        paths.append(path)
    pool = sb3_pool(tiny_config(heuristic_share=0.0, pool_size=2), seed=0)
    draw = random.Random(1)
    assert pool.rule == "uniform" and pool.sample(draw, 20) == ["random"] * 20
    assert pool.player("random") is pool.heuristics[0]
    for path in paths:
        pool.add(path)
    assert pool.names == [p.name for p in paths[1:]]
    assert set(pool.sample(draw, 50)) == set(pool.names)
    assert pool.probabilities().tolist() == [0.5, 0.5]
    only_bots = sb3_pool(tiny_config(heuristic_share=1.0), seed=0)
    only_bots.add(paths[0])
    assert only_bots.sample(draw, 20) == ["random"] * 20


def test_checkpoint_round_trip_and_latest(tmp_path):
    """save_checkpoint writes complete folders, LATEST names the newest, old ones are pruned."""
    from train.checkpoints import (
        RunState,
        has_checkpoint,
        load_checkpoint,
        save_checkpoint,
    )

    class Model:   # anything with save(path)
        def save(self, path):
            Path(path).write_bytes(b"weights")

    cfg = tiny_config()
    assert not has_checkpoint(tmp_path)
    for step in (128, 256, 384):
        state = RunState(step=step, pool=["snap-0.safetensors"], evals=[{"step": 0}],
                         next_snapshot=512, next_eval=256, next_checkpoint=step + 128,
                         rng={"x": 1}, fingerprint=cfg.fingerprint())
        save_checkpoint(tmp_path, Model(), state, keep=2)
    assert has_checkpoint(tmp_path)
    ckpt, loaded = load_checkpoint(tmp_path, cfg)
    assert ckpt.name == "step-000000384" and loaded == state
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "LATEST", "step-000000256", "step-000000384"]
    with pytest.raises(CheckpointError, match="different settings"):
        load_checkpoint(tmp_path, tiny_config(learning_rate=1e-2))


def test_every_run_evaluates_its_final_policy(tmp_path):
    """A run whose end falls between evaluations still evaluates the policy it ends with (the
    README's first run used to end with none), and says where its files are."""
    run, said = tmp_path / "run", []
    train(tiny_config(total_steps=384, eval_every=100_000), run, progress=False, log=said.append)
    steps = [int(line.split(",")[0]) for line in (run / "eval.csv").read_text().splitlines()[1:]]
    assert steps[0] == 0 and steps[-1] >= 384 and len(steps) == 2
    assert any(line.startswith("evaluation at step") for line in said)
    assert any(line.startswith(f"files in {run}") for line in said)
