"""The training step of ``cribenv demo``: self-play PPO from scratch on the batched engine
(:mod:`train.selfplay`), evaluated against greedy as it learns, and a learning curve drawn
so that the rise shows.

The sizes are the demo's (``train/demo_command.py``); everything else is the trainer's
defaults. The trainer evaluates every ``steps // evals`` learner steps; the demo adds one
evaluation of the final policy when the last one is older, so the curve ends where the
training did.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agents.ppo import PPOAgent
from cribenv.files import save_figure
from train.checkpoints import has_checkpoint, read_checkpoint
from train.evaluation import append_csv, evaluation_row
from train.learning_curve import plot_learning_curve, plot_win_rates
from train.selfplay import SelfPlayConfig, train

OPPONENT = "greedy"
RECIPE = "rollout-ppo.json"   # the shipped agent's recipe, in train/configs/ (package data)


def shipped_recipe() -> dict:
    """The settings of the shipped agent's recipe (``train/configs/rollout-ppo.json``), read as
    package data so that an installed (not editable) cribenv finds it too.

    >>> shipped_recipe()["policy"]
    'expert-prior'
    """
    import importlib.resources
    import json

    return json.loads(importlib.resources.files("train").joinpath("configs", RECIPE)
                      .read_text(encoding="utf-8"))


def warm_up_engine(seed: int = 0) -> float:
    """Play a few random games on the batched engine so that its compiled kernels are built
    (or loaded from numba's cache) before a progress bar starts; returns the seconds taken.

    >>> warm_up_engine() >= 0
    True
    """
    from cribenv.game import Rules
    from cribenv.vector import VectorGame

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    vg = VectorGame(Rules(), np.arange(4) + seed, reward="points", skunks=True)
    finished = 0
    while finished < 4:   # every path: deal, discard, play, show, game over, restart
        vg.observe()
        vg.legal_mask()
        vg.step(vg.random_actions(rng))
        done = np.flatnonzero(vg.done)
        if done.size:
            finished += done.size
            vg.reset_games(done, done + 100 + finished)
    return time.perf_counter() - started


def selfplay_config(steps: int, evals: int, eval_games: int, seed: int) -> SelfPlayConfig:
    """The trainer's default settings at the demo's size: ``evals`` evaluations of
    ``eval_games`` duplicate games against greedy; a checkpoint halfway (so a killed demo
    resumes from there) and at the end; four pool snapshots.

    >>> c = selfplay_config(300_000, 6, 100, 0)
    >>> c.eval_every, c.checkpoint_every, c.snapshot_every, c.heuristics
    (50000, 150000, 75000, ['greedy'])
    """
    return SelfPlayConfig(total_steps=steps, seed=seed, threads=1,
                          eval_every=max(steps // evals, 1), eval_games=eval_games,
                          heuristics=[OPPONENT], snapshot_every=max(steps // 4, 1),
                          checkpoint_every=max(steps // 2, 1))


def trained_steps(run_dir: Path) -> int:
    """Learner steps of the run's last checkpoint (0 when it has none)."""
    return int(read_checkpoint(run_dir)[1]["step"]) if has_checkpoint(run_dir) else 0


def train_from_scratch(run_dir: Path, config: SelfPlayConfig, resume: bool,
                       log: Callable[[str], None] = print) -> Path:
    """Train (or, with ``resume``, continue) the run in ``run_dir``; make sure ``eval.csv``
    ends with an evaluation of the final policy; return the policy file."""
    policy = train(config, run_dir, resume=resume, progress=True, log=log)
    state = read_checkpoint(run_dir)[1]
    steps, rows = int(state["step"]), eval_rows(run_dir)
    if config.eval_games and (not rows or int(rows[-1]["step"]) < steps):
        log(f"evaluating the final policy against {OPPONENT} ({config.eval_games} games)")
        append_csv(run_dir / "eval.csv", {**evaluation_row(PPOAgent(policy), config, steps),
                                          "wall_s": round(state["wall_s"], 1)})
        plot_learning_curve(run_dir)
    return policy


def eval_rows(run_dir: Path) -> list[dict[str, str]]:
    """The rows of the run's ``eval.csv`` (none before the first evaluation)."""
    path = Path(run_dir) / "eval.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def plot_demo_curve(rows: list[dict[str, str]], out: Path) -> Path:
    """Two panels over learner steps: the win rate against greedy with its 95% interval (the
    axis fitted to the data, so a rise from 5% to 15% is visible), and the net match points
    per game against greedy (+1 a win, +2 a skunk, negative for losses)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [int(r["step"]) for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    plot_win_rates(left, steps, rows)
    top = max(float(r[f"{OPPONENT}_win_hi"]) for r in rows) * 100
    left.set_ylim(0, min(100.0, max(55.0, top + 5)))   # fitted, and the 50% line in view
    left.set_xlabel("learner steps")
    left.set_ylabel(f"win rate against {OPPONENT} (95% CI)")
    left.set_title(f"wins against {OPPONENT} (50%: as strong as {OPPONENT})")
    right.plot(steps, [float(r[f"{OPPONENT}_net_points"]) for r in rows], marker="o")
    right.set_xlabel("learner steps")
    right.set_ylabel("net match points per game")
    right.set_title(f"net points against {OPPONENT} (0: as strong)")
    fig.suptitle("Self-play PPO from scratch (cribenv demo)")
    fig.tight_layout()
    save_figure(fig, out, dpi=110)
    plt.close(fig)
    return out
