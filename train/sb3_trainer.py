"""The self-play PPO loop (sb3-contrib MaskablePPO), top to bottom: :func:`train`.

The learner plays against an :class:`train.pool.OpponentPool` (frozen snapshots of itself and
heuristic bots, the ``uniform`` rule: :func:`train.pool.sb3_pool`); every ``snapshot_every``
steps its actor is exported (:mod:`train.export`) into the pool, every ``eval_every`` steps it
is evaluated against the heuristics (:mod:`train.evaluation`), and every ``checkpoint_every``
steps a checkpoint is written (:mod:`train.checkpoints`).

Run layout (``run_dir``)::

    config.json                  the settings (TrainConfig)
    checkpoints/LATEST           name of the newest complete checkpoint (replaced atomically)
    checkpoints/step-000040960/  model.zip (SB3 archive: weights + optimizer), state.json
    pool/snap-000040960.safetensors   frozen snapshots the learner plays against
    logs/                        progress.csv and TensorBoard event files
    eval.csv                     periodic evaluation against the heuristic bots
    policy.safetensors           the final policy, weights only (play it with ppo:PATH)
    learning_curve.png           win rate against each heuristic over training

A checkpoint is written after a PPO update (the rollout buffer is empty then): a run killed at
any moment resumes from its last complete checkpoint with the step counter, optimizer, opponent
pool, evaluation history and random states as they were.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from train.checkpoints import (
    CheckpointError,
    RunState,
    describe_resume,
    load_checkpoint,
    load_model,
    rng_state,
    run_settings,
    save_checkpoint,
    set_rng_state,
    truncate_log,
)
from train.config import TrainConfig
from train.evaluation import append_csv, evaluation_row
from train.export import LearnerAgent, export_policy, policy_tensors
from train.layers import ACTIVATIONS
from train.learning_curve import plot_learning_curve
from train.pool import OpponentPool, PoolOpponent, sb3_pool


def make_vec_env(config: TrainConfig, pool: OpponentPool, seed: int):
    """``config.n_games`` single-agent envs (opponents drawn from ``pool``) in a DummyVecEnv."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cribenv.wrappers import SingleAgentCribbageEnv

    def factory(i: int) -> Callable[[], Any]:
        def make():
            env = SingleAgentCribbageEnv(
                opponent=PoolOpponent(pool, seed * 7919 + i), num_players=config.num_players,
                target=config.target, reward=config.reward, shaping=config.shaping,
                skunks=config.skunks, seed=seed * 7919 + i)
            if config.policy == "expert-prior":
                from train.prior_policy import ExpertFeatureObservation

                env = ExpertFeatureObservation(env)
            env.reset(seed=seed * 7919 + i)
            return env
        return make

    return DummyVecEnv([factory(i) for i in range(config.n_games)])


def new_model(config: TrainConfig, env):
    """A fresh MaskablePPO learner for ``config`` on ``env`` (warm-started from
    ``config.init_policy`` when set)."""
    from sb3_contrib import MaskablePPO

    activation = ACTIVATIONS[config.activation]
    if config.policy == "expert-prior":
        from train.prior_policy import ExpertPriorPolicy

        policy: Any = ExpertPriorPolicy
        policy_kwargs: dict[str, Any] = {
            "card_hidden": list(config.card_arch), "value_hidden": list(config.net_arch),
            "activation": config.activation, "beta": config.beta}
    else:
        policy = "MlpPolicy"
        policy_kwargs = {"net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
                         "activation_fn": activation}
    model = MaskablePPO(
        policy, env, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.minibatch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
        vf_coef=config.vf_coef, target_kl=config.target_kl or None, seed=config.seed,
        device="cpu", verbose=0, policy_kwargs=policy_kwargs)
    if config.init_policy:
        from train.prior_policy import start_from_policy_file

        start_from_policy_file(model.policy, config.init_policy)
    return model


def _progress_callback(bar, stop_flag: dict[str, bool]):
    """An SB3 callback driving a tqdm bar (steps/s) and stopping cleanly on a signal."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            bar.update(self.training_env.num_envs)
            return not stop_flag["stop"]

    return Progress()


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False,
          progress: bool = True, log: Callable[[str], None] = print) -> Path:
    """Train (or resume) a run; returns the path of the final policy file."""
    from tqdm import tqdm

    run_dir = Path(run_dir)
    config, changed = run_settings(config, run_dir, resume)
    torch.set_num_threads(config.threads)
    if resume:
        ckpt, state = load_checkpoint(run_dir, config)
        if changed:
            config.save(run_dir / "config.json")   # the run's settings from now on
    else:
        run_dir.mkdir(parents=True, exist_ok=True)
        config.save(run_dir / "config.json")
        ckpt, state = None, None

    pool = sb3_pool(config, seed=config.seed)
    resets = state.env_resets + 1 if state else 0
    env = make_vec_env(config, pool, seed=config.seed + 100_003 * resets)
    if ckpt is not None and state is not None:
        model = load_model(ckpt, env)
        for name in state.pool:
            snap = run_dir / "pool" / name
            if not snap.is_file():
                raise CheckpointError(f"checkpoint {ckpt.name} names pool snapshot {snap}, "
                                      f"which is missing")
            pool.add(snap)
        set_rng_state(state.rng)
        for name in ("eval.csv",):   # rows logged after the checkpoint are logged again
            truncate_log(run_dir / name, state.step)
        log(f"resumed {run_dir} from {ckpt.name} at step {state.step:,}; "
            + describe_resume(config, changed, TrainConfig.RESUMABLE))
    else:
        model = new_model(config, env)
        next_checkpoint = config.checkpoint_every
        if config.bc_games:
            _imitate(model, config, progress, log)
            next_checkpoint = 0   # keep the warm start even if the run is killed early
        state = RunState(step=0, pool=[], evals=[], next_snapshot=0, next_eval=0,
                         next_checkpoint=next_checkpoint, rng={},
                         fingerprint=config.fingerprint())
    state.env_resets = resets
    model.set_logger(_logger(run_dir / "logs", state.step if ckpt is not None else None))
    (run_dir / "pool").mkdir(exist_ok=True)

    stop = {"stop": False}

    def on_signal(signum, frame):  # finish the current update, checkpoint, exit
        stop["stop"] = True

    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    bar = tqdm(total=config.total_steps, initial=min(model.num_timesteps, config.total_steps),
               unit="step", disable=not progress, desc="self-play PPO", smoothing=0.05)
    started, start_steps = time.perf_counter(), model.num_timesteps
    try:
        while True:
            step = model.num_timesteps
            if step >= state.next_snapshot:
                path = run_dir / "pool" / f"snap-{step:09d}.safetensors"
                export_policy(policy_tensors(model, config), path, config, step)
                pool.add(path)
                state.next_snapshot = step + config.snapshot_every
            if config.eval_games and step >= state.next_eval:
                _evaluate_and_log(model, config, run_dir, state, step)
                state.next_eval = step + config.eval_every
            if step >= config.total_steps or stop["stop"]:
                break
            if step >= state.next_checkpoint:
                _checkpoint(run_dir, model, state, pool, step)
                state.next_checkpoint = step + config.checkpoint_every
            targets = [state.next_snapshot, state.next_checkpoint, config.total_steps]
            if config.eval_games:
                targets.append(state.next_eval)
            chunk = max(min(targets) - step, 1)
            chunk = -(-chunk // config.rollout_steps) * config.rollout_steps
            model.learn(chunk, reset_num_timesteps=False, callback=_progress_callback(bar, stop),
                        progress_bar=False)
    finally:
        bar.close()
        for s, h in old_handlers.items():
            signal.signal(s, h)
    step = model.num_timesteps
    elapsed = time.perf_counter() - started
    if (config.eval_games and not stop["stop"]
            and (not state.evals or state.evals[-1]["step"] != step)):
        _evaluate_and_log(model, config, run_dir, state, step)   # the final policy's
    _checkpoint(run_dir, model, state, pool, step)
    trained = step - start_steps
    speed = trained / elapsed if elapsed > 0 else 0.0
    final = export_policy(policy_tensors(model, config), run_dir / "policy.safetensors",
                          config, step,
                          {"steps_per_second": round(speed, 1)} if trained else {})
    plot_learning_curve(run_dir)
    rate = (f"{trained:,} steps at {speed:,.0f} env steps/s while learning" if trained else
            f"nothing left to train: the run had reached total_steps {config.total_steps:,}; "
            f"pass --total-steps to train further")
    log(f"{'stopped' if stop['stop'] else 'finished'} at step {step:,} ({rate}); "
        f"policy: {final}")
    if state.evals:
        last = state.evals[-1]
        log(f"evaluation at step {last['step']:,}: " + ", ".join(
            f"{h} {100 * last[f'{h}_win_rate']:.1f}%" for h in config.heuristics
            if f"{h}_win_rate" in last))
    log(f"files in {run_dir}: policy.safetensors, eval.csv, learning_curve.png, "
        f"logs/progress.csv, checkpoints/")
    if stop["stop"]:
        raise KeyboardInterrupt
    return final


def _logger(folder: Path, resumed_at: int | None):
    """SB3's logger writing ``progress.csv`` and TensorBoard events into ``folder``. A resumed
    run keeps the CSV rows logged up to its checkpoint (SB3 alone would start the file over)
    and hides the TensorBoard events logged after it, so each step is logged once."""
    from stable_baselines3.common.logger import CSVOutputFormat, Logger, TensorBoardOutputFormat
    from torch.utils.tensorboard import SummaryWriter

    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / "progress.csv"
    kept: list[str] = []
    if resumed_at is not None and csv_path.exists():
        truncate_log(csv_path, resumed_at, column="time/total_timesteps")
        kept = csv_path.read_text().splitlines()
    progress = CSVOutputFormat(str(csv_path))   # opens the file empty ("w+")
    if kept:
        progress.keys = kept[0].split(",")
        progress.file.write("\n".join(kept) + "\n")
        progress.file.flush()
    board = TensorBoardOutputFormat(str(folder))
    if resumed_at is not None:
        board.writer.close()
        board.writer = SummaryWriter(log_dir=str(folder), purge_step=resumed_at + 1)
    return Logger(folder=str(folder), output_formats=[progress, board])


def _imitate(model, config: TrainConfig, progress: bool, log: Callable[[str], None]) -> None:
    """Behaviour-cloning warm start (see :mod:`train.imitation`)."""
    from tqdm import tqdm

    from train.imitation import collect, pretrain

    log(f"imitating {config.bc_teacher}: {config.bc_games:,} games")
    with tqdm(total=config.bc_games, unit="game", disable=not progress,
              desc=f"{config.bc_teacher} games") as bar:
        data = collect(config.bc_games, teacher=config.bc_teacher, seed=config.seed * 1_000_003,
                       target=config.target, shaping=config.shaping, gamma=config.gamma,
                       progress=bar.update)
    log(f"  {len(data):,} decisions recorded")
    pretrain(model, data, epochs=config.bc_epochs, lr=config.bc_lr, seed=config.seed, log=log)


def _checkpoint(run_dir: Path, model, state: RunState, pool: OpponentPool, step: int) -> None:
    state.step = step
    state.pool = list(pool.names)
    state.rng = rng_state()
    save_checkpoint(run_dir, model, state)


def _evaluate_and_log(model, config: TrainConfig, run_dir: Path, state: RunState,
                      step: int) -> None:
    row = evaluation_row(LearnerAgent(model, config), config, step, model.logger.record)
    model.logger.dump(step)
    state.evals.append(row)
    append_csv(run_dir / "eval.csv", row)
