"""Self-play masked PPO on the batched engine, CleanRL style: the loop (:func:`train`).

The run's pieces live one per module, read in this order:

1. **Settings**: :class:`train.selfplay_config.SelfPlayConfig` (saved as ``config.json`` in the
   run folder), torch-free.
2. **The networks**: :mod:`train.networks`, an actor on the 601-entry observation
   giving 52 logits (a linear head ``mlp``, a per-card head ``cards``, a throw head for the
   discard ``keeps``, or ``expert-prior``) and a separate critic MLP; each exports as a
   ``ppo:PATH`` policy file that :mod:`agents.ppo` plays with numpy.
3. **Seats as rows**: :class:`train.selfplay_rollout.SeatRollout`: every seat of every game is
   a row; each row's trajectory is its own decisions. The points (and the final result) earned
   between two decisions of a seat, on anyone's turn, are credited to its earlier decision; the
   game's end closes every seat's last decision. GAE runs along each row's own chain.
4. **Opponents**: :class:`train.pool.OpponentPool` (the ``priority`` rule): in a share
   ``self_play_share`` of the games the learner plays every seat; in the others it plays one
   side and a frozen snapshot of itself plays the rest. With the ``expert-prior`` network a share
   ``expert_share`` of those games is played against the expert bot instead.
5. **The collection**: :func:`train.selfplay_rollout.collect` plays ``n_steps`` steps of
   ``n_games`` games (the learner's seats sampled from its network, the others played by
   their opponents) into the :class:`~train.selfplay_rollout.SeatRollout`.
6. **The loop** (here, :func:`_rounds`, each step a call): snapshot, evaluate, checkpoint,
   collect, the advantages (``SeatRollout.take``), the clipped PPO update (:func:`_learn`,
   :func:`_update`), log (:func:`_log_update`); then :func:`_finish`.
7. **More processes** (``workers``, :mod:`train.selfplay_team`): :func:`train` leads, each
   follower (:func:`follow`) plays its share of the games; every minibatch is the union of their
   parts, its gradient summed over them, so all take the same step.

A rollout ends mid-game; a seat's last decision of the rollout does not know its reward yet.
It is carried into the next rollout and trained there, with the probability it was sampled
with (so its importance ratio is exact; it was drawn by the policy of one update earlier). The
advantage of the decision before it bootstraps from the value computed at it.

Counting: ``total_steps`` and the steps/s count learner decisions (the samples PPO trains on);
the engine also plays the snapshots' decisions, reported as ``engine_steps``.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import math
import pickle
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numba
import numpy as np
import torch
from tqdm import tqdm

from agents.ppo import PPOAgent
from agents.winprob import solve_for_policy
from train.checkpoints import (
    CheckpointError,
    describe_resume,
    read_checkpoint,
    run_settings,
    save_checkpoint,
    truncate_log,
)
from train.evaluation import Stopped, append_csv, evaluation_row, run_stoppable
from train.export import export_policy
from train.learning_curve import plot_learning_curve, plot_training
from train.networks import (
    CardRows,
    ThrowInputs,
    entropy,
    export_arrays,
    make_network,
    masked_log_probs,
    sparse_rows,
)
from train.pool import OpponentPool
from train.selfplay_config import EXPERT, TRAINER, SelfPlayConfig, check_device
from train.selfplay_rollout import Games, SeatRollout, collect, selfplay_pool
from train.selfplay_team import SOLO, Solo, Team, check_same_weights, team, weights_digest
from train.throw_values import fit_throw_values

__all__ = ["SelfPlayConfig", "train", "plot_training"]


def train(config: SelfPlayConfig, run_dir: str | Path, resume: bool = False,
          progress: bool = True, log: Callable[[str], None] = print) -> Path:
    """Train (or resume) a self-play run in ``run_dir``; returns the final policy file. With
    ``config.workers`` > 1 this process leads that many (:mod:`train.selfplay_team`)."""
    run_dir = Path(run_dir)
    check_device(config.device)   # before anything is written
    _use_threads(config)
    config, state, ckpt = _open_run(config, run_dir, resume)
    with team(config.workers, follow) as crew:
        device = torch.device(config.device)
        learner = _make_learner(config, device, fresh=ckpt is None)
        rng = np.random.default_rng(config.seed)
        pool = selfplay_pool(config)
        if ckpt is not None:
            _resume(ckpt, state, config, run_dir, learner, rng, pool, log)
        followers = state.pop("followers", [])   # their random streams, from a checkpoint
        if crew.size > 1:
            crew.share({"config": config, "run_dir": run_dir, "learner": learner.state(),
                        "pool": pool.state(), "state": state, "followers": followers})
        return _rounds(crew, config, run_dir, learner, rng, pool, state, progress, log)


def follow(crew: Team) -> None:
    """A follower's share of the run its leader (:func:`train`) shares with it: the same
    network and optimisers, its own games and random streams."""
    start = crew.share(None)
    config, run_dir, state = start["config"], start["run_dir"], start["state"]
    _use_threads(config)
    learner = _make_learner(config, torch.device(config.device), fresh=False)
    learner.load(start["learner"])
    rng = np.random.default_rng(stream_seed(config.seed, crew.rank))
    learner.gen.manual_seed(stream_seed(config.seed, crew.rank))
    state["games_started"] = 0
    if start["followers"]:   # resumed: where its streams stood at the checkpoint
        mine = start["followers"][crew.rank - 1]
        rng.bit_generator.state = mine["numpy_rng"]
        learner.gen.set_state(mine["torch_gen"])
        state["games_started"] = mine["games_started"]
    pool = selfplay_pool(config)
    for entry in start["pool"]:
        pool.add(run_dir / "pool" / entry["name"], entry["wins"], entry["games"])
    _rounds(crew, config, run_dir, learner, rng, pool, state, False, lambda _: None)


def stream_seed(seed: int, rank: int) -> int:
    """The seed of process ``rank``'s random streams (rank 0: the run's ``seed`` itself, so one
    process trains as the trainer always did).

    >>> stream_seed(1, 0), stream_seed(1, 1) != stream_seed(1, 2)
    (1, True)
    """
    if rank == 0:
        return seed
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, np.uint64)[0] >> 1)


def _rounds(crew: Solo, config: SelfPlayConfig, run_dir: Path, learner: Learner,
            rng: np.random.Generator, pool: OpponentPool, state: dict[str, Any],
            progress: bool, log: Callable[[str], None]) -> Path | None:
    """The rounds of a session, each a step: snapshot, evaluate, checkpoint, collect, the
    advantages, the update, log; then :func:`_finish` (the leader's policy file)."""
    device = torch.device(config.device)
    share = games_share(config, crew)
    games = Games(share, pool, rng, first_game=state["games_started"],
                  stream=(crew.rank, crew.size))
    rollout = SeatRollout(share.n_games * config.num_players)
    writer = _tensorboard(run_dir) if crew.leader else None
    clock = _Clock(state)
    with _stop_on_signal() as stop, _progress_bar(config, state, progress) as bar:
        while True:
            step = state["step"]
            if step >= state["next_snapshot"]:
                _snapshot(crew, learner.net, config, pool, run_dir, state)
            if crew.leader and config.eval_games and step >= state["next_eval"]:
                _evaluate_on_bar(bar, learner.net, config, run_dir, state, writer, stop)
            if crew.any(step >= config.total_steps or stop.requested
                        or (crew.leader and clock.past(config.time_limit))):
                break
            if step >= state["next_checkpoint"]:
                # the games restart after a checkpoint, so a resumed run continues exactly
                # as this one does
                state["next_checkpoint"] = step + config.checkpoint_every
                streams = crew.gather(_streams(learner, rng, games))
                if crew.leader:
                    _checkpoint(run_dir, learner, rng, pool, games, state, streams)
                games = Games(share, pool, rng, first_game=games.started,
                              stream=(crew.rank, crew.size))
                rollout = SeatRollout(share.n_games * config.num_players)

            clock.start()
            results = _pooled(crew, pool, collect(learner.net, games, rollout, share,
                                                  learner.gen, device))
            state["engine_steps"] += config.n_games * config.n_steps
            # the advantages (dmc: lambda 1, the discounted return, its Q the completion of a
            # return the rollout's end cuts)
            batch = rollout.take(config.gamma,
                                 config.gae_lambda if config.algorithm == "ppo" else 1.0)
            clock.collected()
            stats = _learn(learner, batch, games, config, state["step"], device, crew)
            clock.updated()
            n = int(crew.sum([len(batch["action"])])[0])   # the decisions of every process
            state["step"] += n
            state["updates"] += 1
            bar.update(min(n, max(0, config.total_steps - bar.n)))
            if crew.leader:
                _log_update(run_dir, writer, _progress_row(stats, n, results, state, clock,
                                                           pool, rollout, config))
    streams = crew.gather(_streams(learner, rng, games))   # for the last checkpoint
    if not crew.leader:
        return None
    return _finish(config, run_dir, learner, rng, pool, games, state, writer, clock,
                   stop.requested, log, streams)


def games_share(config: SelfPlayConfig, crew: Solo) -> SelfPlayConfig:
    """The settings of process ``crew.rank``'s collection: its share of ``n_games`` (the
    first ``n_games % size`` processes one more)."""
    if crew.size == 1:
        return config
    share = copy.copy(config)
    share.n_games = config.n_games // crew.size + (crew.rank < config.n_games % crew.size)
    return share


def _pooled(crew: Solo, pool: OpponentPool, results: list[tuple[str, float]]
            ) -> list[tuple[str, float]]:
    """Every process's results of the round against the pool's snapshots, counted in each
    process's pool (its own ones already are), so that all draw from the same pool."""
    everyone = crew.gather(results)
    for rank, theirs in enumerate(everyone):
        for name, won in theirs if rank != crew.rank else ():
            pool.record(name, won)
    return [r for theirs in everyone for r in theirs]


def _streams(learner: Learner, rng: np.random.Generator, games: Games) -> dict[str, Any]:
    """Where this process's random streams stand (a checkpoint keeps the followers'), and a
    digest of its weights (all processes' must be the same)."""
    return {"numpy_rng": rng.bit_generator.state, "torch_gen": learner.gen.get_state(),
            "games_started": games.started, "digest": weights_digest(learner.net)}


# ------------------------------------------------------------------------------------------
# The loop's steps
# ------------------------------------------------------------------------------------------

@dataclass
class Learner:
    """What the update trains and a checkpoint saves: the network, its optimiser, the throw
    values' own optimiser (``policy="keeps"`` with ``throw_values``; None otherwise) and the
    torch generator of the sampling and the minibatches."""

    net: Any
    optimizer: torch.optim.Optimizer
    gen: torch.Generator
    value_opt: torch.optim.Optimizer | None = None

    @property
    def throw_values(self):
        """The throw values of the network (fitted apart, :mod:`train.throw_values`), or None."""
        return getattr(self.net, "throw_values", None)

    def state(self) -> dict[str, Any]:
        """The weights and the optimisers' states (a follower starts from its leader's)."""
        return {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(),
                **({} if self.value_opt is None
                   else {"value_optimizer": self.value_opt.state_dict()})}

    def load(self, state: dict[str, Any]) -> None:
        """Take :meth:`state`'s weights and optimisers' states."""
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.value_opt is not None:
            self.value_opt.load_state_dict(state["value_optimizer"])


def _use_threads(config: SelfPlayConfig) -> None:
    """Torch and the batched engine on the run's threads."""
    torch.set_num_threads(config.threads)
    numba.set_num_threads(min(config.engine_threads, numba.config.NUMBA_NUM_THREADS))


def _make_learner(config: SelfPlayConfig, device: torch.device, fresh: bool) -> Learner:
    """The network (seeded; a new run of ``init_policy`` starts from its file) and its
    optimisers."""
    torch.manual_seed(config.seed)
    net = make_network(config)
    if config.init_policy and fresh:
        net.load_policy_file(config.init_policy)
    net = net.to(device)
    values = getattr(net, "throw_values", None)   # fitted apart (train.throw_values)
    fitted = set(map(id, values.value_parameters())) if values is not None else set()
    optimizer = torch.optim.Adam([p for p in net.parameters() if id(p) not in fitted],
                                 lr=config.learning_rate, eps=1e-5, fused=True)
    value_opt = (torch.optim.Adam(values.value_parameters(), lr=config.value_lr)
                 if values is not None else None)
    return Learner(net, optimizer, torch.Generator().manual_seed(config.seed), value_opt)


def _resume(ckpt: Path, state: dict[str, Any], config: SelfPlayConfig, run_dir: Path,
            learner: Learner, rng: np.random.Generator, pool: OpponentPool,
            log: Callable[[str], None]) -> None:
    """Load the checkpoint ``ckpt`` and drop the log rows written after it."""
    _restore(ckpt, state, learner, rng, pool, run_dir, config.workers)
    if state.pop("settings_changed"):
        config.save(run_dir / "config.json")   # the run's settings from now on
    for name in ("logs/progress.csv", "eval.csv"):  # drop what came after the checkpoint
        _truncate_csv(run_dir / name, state["step"])
    print(f"resuming: {state.pop('resume_note')}")   # once the checkpoint has loaded
    log(f"resumed {run_dir} from {ckpt.name} at step {state['step']:,}")


class _Clock:
    """The run's time: since it (re)started, and the collection and update of each round."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.started, self.start_step, self.start_wall = (time.perf_counter(), state["step"],
                                                          state["wall_s"])
        self.collect_s = self.update_s = 0.0

    def past(self, limit: float) -> bool:
        """Whether the run has trained ``limit`` seconds over all its sessions (0: never), so
        a resumed run trains only what its time limit has left."""
        return bool(limit) and self.wall_s() >= limit

    def start(self) -> None:
        self.t0, self.cpu0 = time.perf_counter(), time.process_time()

    def collected(self) -> None:
        self.collect_s = time.perf_counter() - self.t0
        self.t1 = time.perf_counter()

    def updated(self) -> None:
        self.update_s = time.perf_counter() - self.t1

    def wall_s(self) -> float:
        """Seconds the run has trained, over all its sessions."""
        return self.start_wall + time.perf_counter() - self.started


class _Stop:
    requested = False


@contextlib.contextmanager
def _stop_on_signal():
    """SIGTERM and SIGINT ask the loop to stop after the current update (it checkpoints and
    exports, then raises KeyboardInterrupt)."""
    stop = _Stop()

    def on_signal(signum, frame):
        stop.requested = True

    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for s, h in old_handlers.items():
            signal.signal(s, h)


@contextlib.contextmanager
def _progress_bar(config: SelfPlayConfig, state: dict[str, Any], progress: bool):
    bar = tqdm(total=config.total_steps, initial=min(state["step"], config.total_steps),
               unit="step", disable=not progress, desc="self-play PPO", smoothing=0.05)
    try:
        yield bar
    finally:
        bar.close()


def _snapshot(crew: Solo, net, config: SelfPlayConfig, pool: OpponentPool, run_dir: Path,
              state: dict[str, Any]) -> None:
    """Add the learner as it is now to the opponent pool (the leader writes its file)."""
    step = state["step"]
    path = run_dir / "pool" / f"snap-{step:09d}.safetensors"
    if crew.leader:
        export_policy(export_arrays(net), path, config, step)
    crew.barrier()
    pool.add(path)
    state["next_snapshot"] = step + config.snapshot_every


def _evaluate_on_bar(bar, net, config: SelfPlayConfig, run_dir: Path, state: dict[str, Any],
                     writer, stop: _Stop) -> None:
    """:func:`_evaluate`, said on the progress bar (so that it does not look frozen while the
    games are played), then its win rates; a stop signal gives it up (the next session plays
    it)."""
    bar.set_postfix_str(f"evaluating against {', '.join(config.heuristics)}")
    if not _evaluate(net, config, run_dir, state, writer, state["step"], stop):
        bar.set_postfix_str("stopping: the evaluation is left to the resume")
        return
    bar.set_postfix_str(", ".join(f"{h} {100 * state['evals'][-1][f'{h}_win_rate']:.0f}%"
                                  for h in config.heuristics))
    state["next_eval"] = state["step"] + config.eval_every


def _learn(learner: Learner, batch: dict[str, np.ndarray], games: Games,
           config: SelfPlayConfig, step: int, device, crew: Solo) -> dict[str, float]:
    """The update of one round: the learning rate of its schedule, clipped PPO on ``batch``
    (the critic only during ``value_warmup``) and the throw values' fit to the starters
    turned in the round."""
    if config.anneal_lr:
        for group in learner.optimizer.param_groups:
            group["lr"] = config.learning_rate * max(0.0, 1.0 - step / config.total_steps)
    if config.algorithm == "dmc":
        stats = _update_q(learner.net, learner.optimizer, batch, config, learner.gen, device)
    else:
        stats = _update(learner.net, learner.optimizer, batch, config, learner.gen, device,
                        train_policy=step >= config.value_warmup, crew=crew)
    values = learner.throw_values
    if values is not None:
        samples = games.take_samples()
        stats["throw_value_loss"] = fit_throw_values(
            values, learner.value_opt, samples, config.n_epochs, VALUE_BATCH, learner.gen,
            device, crew)
        stats["throw_value_beta"] = float(values.log_beta.detach().exp())
        stats["throw_value_samples"] = int(crew.sum([len(samples["cards"])])[0])
    return stats


def _progress_row(stats: dict[str, float], n: int, results: list[tuple[str, float]],
                  state: dict[str, Any], clock: _Clock, pool: OpponentPool,
                  rollout: SeatRollout, config: SelfPlayConfig) -> dict[str, float]:
    """The row of ``logs/progress.csv`` of a round of ``n`` decisions: the update's
    ``stats``, the counters, the times and the learner's results against its opponents."""
    vs_pool = [won for name, won in results if name != EXPERT]
    vs_expert = [won for name, won in results if name == EXPERT]
    stats.update(step=state["step"], engine_steps=state["engine_steps"],
                 steps_per_s=n / (clock.collect_s + clock.update_s),
                 collect_s=clock.collect_s, update_s=clock.update_s,
                 cpu_s=time.process_time() - clock.cpu0, games_vs_pool=len(vs_pool),
                 win_vs_pool=float(np.mean(vs_pool)) if vs_pool else float("nan"),
                 **({"games_vs_expert": len(vs_expert), "win_vs_expert": float(
                     np.mean(vs_expert)) if vs_expert else float("nan")}
                    if config.expert_share else {}),
                 pool=len(pool.names), carried=rollout.carried(), wall_s=clock.wall_s())
    state["wall_s"] = stats["wall_s"]
    return stats


def _finish(config: SelfPlayConfig, run_dir: Path, learner: Learner, rng: np.random.Generator,
            pool: OpponentPool, games: Games, state: dict[str, Any], writer, clock: _Clock,
            stopped: bool, log: Callable[[str], None], streams: list[dict[str, Any]]) -> Path:
    """The end of a session: the final policy's evaluation, a checkpoint, the policy file,
    the plots and what happened, in words; raises KeyboardInterrupt when a signal stopped it."""
    elapsed = time.perf_counter() - clock.started
    if (config.eval_games and not stopped
            and (not state["evals"] or state["evals"][-1]["step"] != state["step"])):
        with _stop_on_signal() as stop:
            stopped = not _evaluate(learner.net, config, run_dir, state, writer,
                                    state["step"], stop)
    state["wall_s"] = clock.wall_s()     # its evaluation's time too: a resume sees it past
    _checkpoint(run_dir, learner, rng, pool, games, state, streams)
    speed = (state["step"] - clock.start_step) / elapsed if elapsed > 0 else 0.0
    final = run_dir / "policy.safetensors"
    if state["step"] > clock.start_step or not final.is_file():   # nothing trained: kept
        export_policy(export_arrays(learner.net), final, config, state["step"],
                      {"steps_per_second": round(speed, 1)})
    if config.search_table_hands and not stopped:
        solve_for_policy(final, config.search_table_hands, config.seed, log)
    if writer is not None:
        writer.close()
    plot_learning_curve(run_dir)
    plot_training(run_dir)
    if state["step"] == clock.start_step and not stopped:
        left = (f"it has trained {clock.start_wall:,.0f} s of its time limit "
                f"({config.time_limit:,.0f} s; --time-limit trains further)"
                if state["step"] < config.total_steps and clock.past(config.time_limit) else
                f"the run is at step {state['step']:,} of {config.total_steps:,}")
        log(f"nothing left to train: {left}; policy: {final}")
    else:
        log(f"{'stopped' if stopped else 'finished'} at step {state['step']:,} "
            f"({speed:,.0f} learner steps/s); policy: {final}")
    if state["evals"]:
        last = state["evals"][-1]
        log(f"evaluation at step {last['step']:,}: " + ", ".join(
            f"{h} {100 * last[f'{h}_win_rate']:.1f}% [{100 * last[f'{h}_win_lo']:.1f}, "
            f"{100 * last[f'{h}_win_hi']:.1f}]" for h in config.heuristics
            if f"{h}_win_rate" in last))
    log(f"files in {run_dir}: policy.safetensors, eval.csv, learning_curve.png, training.png, "
        f"logs/progress.csv, checkpoints/")
    if stopped:
        raise KeyboardInterrupt
    return final


def _batch_tensors(net, batch: dict[str, np.ndarray], names: list[str],
                   device) -> tuple[dict[str, torch.Tensor], ThrowInputs | None]:
    """The columns ``names`` of ``batch`` as tensors on ``device`` (the observations as
    :class:`SparseRows`, the actions as indices) and, for the throw head, the batch's
    :class:`ThrowInputs`, worked out once for every epoch and minibatch."""
    t = {k: torch.from_numpy(np.ascontiguousarray(batch[k])).to(device) for k in names}
    for k in ("logprob", "advantages", "returns"):   # float32 once, not per minibatch
        if k in t:
            t[k] = t[k].float()
    throws = net.throw_inputs(t["obs"]) if getattr(net, "keeps", False) else None
    t["obs"] = sparse_rows(t["obs"])
    t["action"] = t["action"].long()
    return t, throws


def _minibatches(t: dict[str, torch.Tensor], size: int, gen, device, parts: int = 0):
    """One epoch over ``t``: its rows shuffled with ``gen`` (one gather), in slices of
    ``size`` rows (or, with ``parts``, in that many slices as equal as can be): each a dict
    of the same columns and the batch rows it holds."""
    n = len(t["action"])
    perm = torch.randperm(n, generator=gen).to(device)
    shuffled = {k: v[perm] for k, v in t.items()}
    edges = ([n * i // parts for i in range(parts + 1)] if parts
             else [*range(0, n, size), n])
    for start, end in zip(edges[:-1], edges[1:]):
        mb = slice(start, end)
        yield {k: v[mb] for k, v in shuffled.items()}, perm[mb]


class _Whole:
    """A minibatch of the whole team, each process holding its part of it: the means over all
    its rows and its advantages normalised by their mean and deviation over all its rows (one
    process: torch's own ``mean`` and ``std``). :meth:`epoch` makes an epoch's in one
    exchange."""

    def __init__(self, solo: bool, n: float = 0, total: float = 0, squares: float = 0) -> None:
        self.solo = solo
        if not solo:
            self.n, self.a_mean = n, total / n
            self.a_std = math.sqrt(max(0.0, squares - n * self.a_mean ** 2) / (n - 1)) \
                if n > 1 else 0.0

    @classmethod
    def epoch(cls, crew: Solo, batches: list) -> list[_Whole]:
        """The whole minibatches of an epoch whose parts here are ``batches``."""
        if crew.size == 1:
            return [cls(True)] * len(batches)
        sums = crew.sum([x for mb, _ in batches for a in [mb["advantages"].double()]
                         for x in (len(a), float(a.sum()), float((a * a).sum()))])
        return [cls(False, *sums[3 * i:3 * i + 3]) for i in range(len(batches))]

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean() if self.solo else x.sum() / self.n

    def normalized(self, a: torch.Tensor) -> torch.Tensor:
        if self.solo:
            return (a - a.mean()) / (a.std() + 1e-8) if len(a) > 1 else a
        return (a - self.a_mean) / (self.a_std + 1e-8) if self.n > 1 else a


def _descend(optimizer, loss, trained: list, max_grad_norm: float, crew: Solo = SOLO
             ) -> None:
    """One gradient step of ``loss`` on the parameters ``trained`` (their gradients summed
    over ``crew``'s processes), their norm clipped."""
    optimizer.zero_grad()
    loss.backward()
    crew.add_gradients(trained)
    torch.nn.utils.clip_grad_norm_(trained, max_grad_norm)
    optimizer.step()


def _explained_variance(batch: dict[str, np.ndarray]) -> float:
    """How much of the returns' variance the values recorded at the decisions explain."""
    var = float(np.var(batch["returns"]))
    resid = float(np.var(batch["returns"] - batch["value"]))
    return 1 - resid / var if var > 0 else float("nan")


def _update(net, optimizer, batch: dict[str, np.ndarray], config: SelfPlayConfig, gen,
            device, train_policy: bool = True, crew: Solo = SOLO) -> dict[str, float]:
    """``n_epochs`` passes of clipped PPO over shuffled minibatches of ``batch``;
    ``train_policy=False`` trains the critic only (the value warm-up). With a team, each
    minibatch is the union of every process's part, its losses their means over it."""
    net.train()
    names = ["obs", "mask", "action", "logprob", "advantages", "returns"]
    with_cards = "card_ids" in batch
    names += list(CardRows.COLUMNS) if with_cards else []
    t, throws = _batch_tensors(net, batch, names, device)
    n = len(t["action"])
    trained = [p for group in optimizer.param_groups for p in group["params"]]  # not the fit's
    parts = crew.parts(n, config.minibatch_size)
    kls, clips, pls, vls, ents = [], [], [], [], []
    for _epoch in range(config.n_epochs if crew.size == 1 or parts else 0):
        batches = list(_minibatches(t, config.minibatch_size, gen, device, parts))
        for (mb, picked), whole in zip(batches, _Whole.epoch(crew, batches)):
            obs, mask, act = mb["obs"], mb["mask"], mb["action"]
            old_logp, a, ret = (mb[k] for k in ("logprob", "advantages", "returns"))
            if with_cards:
                mb_cards = CardRows(*(mb[k] for k in CardRows.COLUMNS))
                logits, value = net.logits_and_value(obs, mb_cards)
            else:
                logits, value = net.logits_and_value(
                    obs, None if throws is None else throws.select(picked))
            logp_all = masked_log_probs(logits, mask)
            logp = logp_all.gather(1, act[:, None])[:, 0]
            log_ratio = logp - old_logp
            ratio = log_ratio.exp()
            a = whole.normalized(a)
            pg = whole.mean(torch.max(-a * ratio, -a * ratio.clamp(1 - config.clip_range,
                                                                   1 + config.clip_range)))
            v_loss = 0.5 * whole.mean((value - ret) ** 2)
            ent = whole.mean(entropy(logp_all, mask))
            loss = config.vf_coef * v_loss
            if train_policy:
                loss = loss + pg - config.ent_coef * ent
            _descend(optimizer, loss, trained, config.max_grad_norm, crew)
            with torch.no_grad():
                kls.append(((ratio - 1) - log_ratio).mean().item())
                clips.append(((ratio - 1).abs() > config.clip_range).float().mean().item())
            pls.append(pg.item())
            vls.append(v_loss.item())
            ents.append(ent.item())
        recent = float(np.mean(kls[-(parts or max(1, n // config.minibatch_size)):]))
        if config.target_kl and crew.sum([recent])[0] / crew.size > config.target_kl:
            break
    # the team's: its losses are the sums of the processes' parts, the rest their means
    pl, vl, ent_, kl, clip, rows = crew.sum([float(np.mean(x)) if x else float("nan")
                                             for x in (pls, vls, ents, kls, clips)] + [n])
    return {"policy_loss": pl, "value_loss": vl, "entropy": ent_,
            "approx_kl": kl / crew.size, "clipfrac": clip / crew.size,
            "explained_variance": _explained_variance(batch), "samples": float(rows)}


def _update_q(net, optimizer, batch: dict[str, np.ndarray], config: SelfPlayConfig, gen,
              device) -> dict[str, float]:
    """``algorithm="dmc"``: ``n_epochs`` passes over shuffled minibatches of ``batch``, the
    squared error of each decision's Q-value (the network's output of the card played) to
    its return."""
    net.train()
    t, _ = _batch_tensors(net, batch, ["obs", "action", "returns"], device)
    trained = [p for group in optimizer.param_groups for p in group["params"]]
    losses = []
    for _epoch in range(config.n_epochs):
        for mb, _picked in _minibatches(t, config.minibatch_size, gen, device):
            q, _ = net.logits_and_value(mb["obs"])
            q_played = q.gather(1, mb["action"][:, None])[:, 0]
            loss = 0.5 * ((q_played - mb["returns"]) ** 2).mean()
            _descend(optimizer, loss, trained, config.max_grad_norm)
            losses.append(loss.item())
    return {"value_loss": float(np.mean(losses)), "q_mean": float(np.mean(batch["value"])),
            "return_mean": float(np.mean(batch["returns"])),
            "explained_variance": _explained_variance(batch), "samples": float(len(t["action"]))}


# ------------------------------------------------------------------------------------------
# Bookkeeping: run folder, checkpoints, logs, evaluation
# ------------------------------------------------------------------------------------------

def _fresh_state(config: SelfPlayConfig) -> dict[str, Any]:
    """The counters of a new run (``state.json`` holds these, the generator and the pool)."""
    return {"step": 0, "engine_steps": 0, "updates": 0, "games_started": 0,
            "next_snapshot": 0, "next_eval": 0, "next_checkpoint": config.checkpoint_every,
            "wall_s": 0.0, "evals": [], "fingerprint": config.fingerprint()}


def _open_run(config: SelfPlayConfig, run_dir: Path, resume: bool
              ) -> tuple[SelfPlayConfig, dict[str, Any], Path | None]:
    config, changed = run_settings(config, run_dir, resume)
    if not resume:
        (run_dir / "pool").mkdir(parents=True, exist_ok=True)
        config.save(run_dir / "config.json")
        return config, _fresh_state(config), None
    ckpt, state = read_checkpoint(run_dir, TRAINER, config.fingerprint())
    state["settings_changed"] = bool(changed)   # saved once the checkpoint has loaded
    _use_threads(config)   # the run's own hardware settings
    state["resume_note"] = describe_resume(config, changed, SelfPlayConfig.RESUMABLE)
    return config, state, ckpt


def _checkpoint(run_dir: Path, learner: Learner, rng: np.random.Generator,
                pool: OpponentPool, games: Games, state: dict[str, Any],
                streams: list[dict[str, Any]]) -> Path:
    """A complete checkpoint (atomic, via :func:`train.checkpoints.save_checkpoint`), written
    by the leader: ``model.zip`` is the torch archive of the network, optimiser and sampling
    generator; ``streams`` (:func:`_streams`, every process's) adds the followers' random
    streams (their generators in ``model.zip``, the rest in ``state.json``).

    The games in flight are not saved: the run (and a resumed one) starts fresh games with
    the next seeds."""
    check_same_weights([s["digest"] for s in streams])
    followers = streams[1:]

    class Archive:
        def save(self, path: Path) -> None:
            extra = ({"follower_gens": [f["torch_gen"] for f in followers]} if followers
                     else {})
            torch.save({**learner.state(), "torch_gen": learner.gen.get_state(), **extra},
                       path)

    payload = dict(state, trainer=TRAINER, games_started=games.started, pool=pool.state(),
                   numpy_rng=rng.bit_generator.state)
    if followers:
        payload["followers"] = [{"numpy_rng": f["numpy_rng"],
                                 "games_started": f["games_started"]} for f in followers]
    return save_checkpoint(run_dir, Archive(), SimpleNamespace(**payload))


ARCHIVE_KEYS = ("net", "optimizer", "torch_gen")   # model.zip: what _checkpoint saves
VALUE_BATCH = 256   # seats' hands a minibatch of the throw values' fit (15 throws each)


def _restore(ckpt: Path, state: dict[str, Any], learner: Learner, rng: np.random.Generator,
             pool: OpponentPool, run_dir: Path, workers: int) -> None:
    """Load checkpoint ``ckpt`` into the run's objects, or raise :class:`CheckpointError`
    naming the file and what is wrong with it (nothing on disk is changed either way)."""
    archive = ckpt / "model.zip"
    try:   # weights only: tensors, numbers and containers; any other object is refused
        saved = torch.load(archive, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:   # an object beyond weights (torch's own advice:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))   # unpickle it; we never do)
        what = f" ({found[1]})" if found else ""
        raise CheckpointError(f"{archive} cannot be loaded: it holds a Python object{what}, "
                              f"not only weights, and self-play checkpoints are never "
                              f"unpickled") from None
    except Exception as exc:  # a damaged archive
        reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise CheckpointError(f"{archive} cannot be loaded: {reason}") from None
    if not isinstance(saved, dict) or not set(ARCHIVE_KEYS) <= set(saved):
        held = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        raise CheckpointError(f"{archive} is damaged: it should hold {', '.join(ARCHIVE_KEYS)}, "
                              f"but holds {held}")
    weights = saved["net"]
    if not isinstance(weights, dict) or not all(torch.is_tensor(w) for w in weights.values()):
        raise CheckpointError(f"{archive} is damaged: its 'net' is not a set of named tensors")
    broken = [name for name, w in weights.items()
              if w.is_floating_point() and not torch.isfinite(w).all()]
    if broken:
        raise CheckpointError(f"{archive} is damaged: tensor {broken[0]} holds NaN or "
                              f"infinite weights")
    try:
        learner.load(saved)
        learner.gen.set_state(saved["torch_gen"])
    except (RuntimeError, KeyError, TypeError, ValueError) as exc:
        reason = " ".join(str(exc).split())[:300]
        raise CheckpointError(f"{archive} does not fit this run's network (config.json): "
                              f"{reason}") from None
    _restore_state(ckpt, state, rng, pool, run_dir)
    _restore_followers(ckpt, state, saved.get("follower_gens", []), workers)


def _restore_followers(ckpt: Path, state: dict[str, Any], gens: list, workers: int) -> None:
    """The followers' random streams (``state["followers"]``, their generators ``gens``
    joined in), checked: one a follower of the run's ``workers``."""
    followers = state.get("followers", [])
    if (not isinstance(followers, list) or len(followers) != workers - 1
            or len(gens) != workers - 1 or not all(
                isinstance(f, dict) and isinstance(f.get("games_started"), int)
                and isinstance(f.get("numpy_rng"), dict) for f in followers)):
        raise CheckpointError(f"checkpoint {ckpt} is damaged: it should hold the random "
                              f"streams of {workers - 1} follower(s) of this {workers}-worker "
                              f"run")
    state["followers"] = [dict(f, torch_gen=g) for f, g in zip(followers, gens)]


def _restore_state(ckpt: Path, state: dict[str, Any], rng: np.random.Generator,
                   pool: OpponentPool, run_dir: Path) -> None:
    """The run's counters, random generator and snapshot pool from ``state.json``."""
    damaged = f"checkpoint {ckpt} is damaged: state.json"
    for key, fresh in _fresh_state(SelfPlayConfig()).items():
        kind = (int, float) if isinstance(fresh, float) else type(fresh)
        if isinstance(state.get(key), bool) or not isinstance(state.get(key), kind):
            wanted = {int: "an integer", float: "a number", list: "a list"}.get(
                type(fresh), "a string")
            raise CheckpointError(f"{damaged}'s {key} is {state.get(key)!r}, not {wanted}; "
                                  f"nothing was changed")
    try:
        rng.bit_generator.state = state.pop("numpy_rng")
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{damaged}'s numpy_rng is not a generator state ({exc})"
                              ) from None
    entries = state.pop("pool", None)
    if not isinstance(entries, list):
        raise CheckpointError(f"{damaged} lacks the snapshot pool ('pool')")
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if (not isinstance(name, str) or Path(name).name != name
                or not all(isinstance(entry.get(k), int | float) for k in ("wins", "games"))):
            raise CheckpointError(f"{damaged}'s pool has a bad entry {entry!r}")
        path = run_dir / "pool" / name
        if not path.is_file():
            raise CheckpointError(f"checkpoint {ckpt.name} names {path}, which is missing")
        pool.add(path, entry["wins"], entry["games"])


def _tensorboard(run_dir: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # pragma: no cover - tensorboard is optional
        return None
    # a resumed run hides the events logged after its checkpoint (the last progress row left
    # by the truncation), so TensorBoard shows each step once
    progress = run_dir / "logs" / "progress.csv"
    last = None
    if progress.exists():
        with progress.open(newline="") as f:
            steps = [r["step"] for r in csv.DictReader(f) if r.get("step")]
        last = int(float(steps[-1])) if steps else None
    return SummaryWriter(str(run_dir / "logs"), purge_step=None if last is None else last + 1)


def _truncate_csv(path: Path, step: int) -> None:
    """Keep the rows of ``path`` logged at or before ``step`` (a resumed run logs the rest)."""
    truncate_log(path, step)


def _log_update(run_dir: Path, writer, stats: dict[str, float]) -> None:
    append_csv(run_dir / "logs" / "progress.csv",
                {k: (round(v, 6) if isinstance(v, float) else v) for k, v in stats.items()})
    if writer is not None:
        for k, v in stats.items():
            if k != "step":
                writer.add_scalar(f"train/{k}", v, stats["step"])


def learner_agent(net, config: SelfPlayConfig, path: Path):
    """The learner as a ``ppo:PATH`` agent (greedy over its logits), via its exported file."""
    export_policy(export_arrays(net), path, config, 0)
    return PPOAgent(path)


def _evaluate(net, config: SelfPlayConfig, run_dir: Path, state: dict[str, Any], writer,
              step: int, stop: _Stop) -> bool:
    """The duplicate-deal evaluation of :mod:`train.evaluation` against each heuristic (at a
    table of ``num_players``: the learner on one side, the bot in the other seats). The games
    run in a thread of their own (:func:`train.evaluation.run_stoppable`), so that a stop
    signal ends a long one (a search's decision) at once: then nothing is recorded and False
    is returned."""
    agent = learner_agent(net, config, run_dir / "pool" / "learner-eval.safetensors")
    records: list[tuple[str, float]] = []
    try:
        row = run_stoppable(lambda: evaluation_row(agent, config, step,
                                                   lambda k, v: records.append((k, v))),
                            lambda: stop.requested)
    except Stopped:
        return False
    for key, value in records if writer is not None else ():
        writer.add_scalar(key, value, step)
    row["wall_s"] = round(state["wall_s"], 1)
    state["evals"].append(row)
    append_csv(run_dir / "eval.csv", row)
    return True
