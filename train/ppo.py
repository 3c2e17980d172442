"""Self-play PPO (sb3-contrib MaskablePPO) against a pool of frozen snapshots and heuristic bots.

Run layout (``run_dir``)::

    config.json                  the settings (TrainConfig)
    checkpoints/LATEST           name of the newest complete checkpoint (replaced atomically)
    checkpoints/step-000040960/  model.zip (SB3 archive: weights + optimizer), state.json
    pool/snap-000040960.safetensors   frozen snapshots the learner plays against
    logs/                        progress.csv and TensorBoard event files
    eval.csv                     periodic evaluation against the heuristic bots
    policy.safetensors           the final policy, weights only (play it with ppo:PATH)
    learning_curve.png           win rate against each heuristic over training

A checkpoint is written after a PPO update (the rollout buffer is empty then), into a fresh
folder that is renamed into place, and only then named in ``LATEST``: a run killed at any
moment resumes from its last complete checkpoint with the step counter, optimizer, opponent
pool, evaluation history and random states as they were.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from agents.ppo import Policy, PPOAgent, PriorPolicy, save_policy, save_tensors
from train.config import TrainConfig

CHECKPOINT_FORMAT = "cribenv-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt or made with other settings."""


# ------------------------------------------------------------------------------------------
# Opponents
# ------------------------------------------------------------------------------------------

class OpponentPool:
    """Frozen snapshots of the learner plus heuristic bots, sampled per episode."""

    def __init__(self, config: TrainConfig, seed: int) -> None:
        self.config = config
        self.heuristics = [make_agent(spec, seed=seed + i)
                           for i, spec in enumerate(config.heuristics)]
        self.snapshot_paths: list[str] = []
        self.snapshots: list[PPOAgent] = []
        self._seed = seed

    def add_snapshot(self, path: str | Path) -> None:
        agent = PPOAgent(path, seed=self._seed + 1000 + len(self.snapshot_paths), sample=True)
        self.snapshot_paths.append(str(path))
        self.snapshots.append(agent)
        while len(self.snapshots) > self.config.pool_size:
            self.snapshot_paths.pop(0)
            self.snapshots.pop(0)

    def sample(self, rng: random.Random):
        use_bot = self.heuristics and (not self.snapshots
                                       or rng.random() < self.config.heuristic_share)
        if use_bot:
            return rng.choice(self.heuristics)
        return rng.choice(self.snapshots)


class PoolOpponent:
    """The opponent of one environment: a new pool member for every episode."""

    name = "pool"

    def __init__(self, pool: OpponentPool, seed: int) -> None:
        self.pool = pool
        self.rng = random.Random(seed)
        self.current = None

    def reset(self) -> None:
        self.current = self.pool.sample(self.rng)
        reset = getattr(self.current, "reset", None)
        if reset is not None:
            reset()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(observation)


# ------------------------------------------------------------------------------------------
# Policy export and evaluation
# ------------------------------------------------------------------------------------------

def policy_arrays(model) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                  tuple[np.ndarray, np.ndarray]]:
    """The actor's (weight, bias) pairs of an SB3 MlpPolicy, as numpy arrays."""
    import torch

    net = model.policy.mlp_extractor.policy_net
    layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
              for m in net if isinstance(m, torch.nn.Linear)]
    head = model.policy.action_net
    return layers, (head.weight.detach().cpu().numpy().copy(),
                    head.bias.detach().cpu().numpy().copy())


def _policy_meta(config: TrainConfig, steps: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"arch": config.policy, "activation": config.activation,
                            "steps": steps, "num_players": config.num_players,
                            "target": config.target, "train_config": config.to_dict()}
    if config.policy == "expert-prior":
        from agents.features import FEATURES_VERSION

        meta.update(card_arch=config.card_arch, features_version=FEATURES_VERSION)
    else:
        meta["net_arch"] = config.net_arch
    return meta


def export_policy(model, path: str | Path, config: TrainConfig, steps: int,
                  extra: dict[str, Any] | None = None) -> Path:
    """Write the learner's actor as a weights-only policy file."""
    meta = _policy_meta(config, steps)
    meta.update(extra or {})
    if config.policy == "expert-prior":
        from train.prior_policy import prior_arrays

        return save_tensors(path, prior_arrays(model.policy), meta)
    layers, head = policy_arrays(model)
    return save_policy(path, layers, head, meta)


def numpy_policy(model, config: TrainConfig) -> Policy | PriorPolicy:
    """The learner's current actor as a numpy policy (what its exported file would load as)."""
    if config.policy == "expert-prior":
        from train.prior_policy import prior_arrays

        arrays = prior_arrays(model.policy)
        return PriorPolicy.from_tensors(Path("<learner>"), arrays, _policy_meta(config, 0))
    layers, head = policy_arrays(model)
    return Policy(layers, head, config.activation)


class _InMemoryPolicyAgent(PPOAgent):
    """The current learner as an agent (greedy over its logits), for evaluation."""

    def __init__(self, model, config: TrainConfig) -> None:
        self.policy = numpy_policy(model, config)
        self.name = "learner"
        self.sample = False
        self.path = "<learner>"


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float, float]:
    """Win rate and its Wilson 95% interval."""
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    p = wins / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return p, centre - half, centre + half


def evaluate(agent, opponent_spec: str, games: int, seed: int, target: int) -> dict[str, float]:
    """Duplicate games (each seed twice, seats swapped) of ``agent`` against a heuristic."""
    from agents.arena import play_game
    from cribenv.game import Rules

    rules = Rules(num_players=2, target=target)
    wins = 0
    net = 0.0
    n = 0
    for i in range(games // 2):
        game_seed = seed + i
        for learner_seat in (0, 1):
            opponent = make_agent(opponent_spec, seed=game_seed * 2 + learner_seat)
            seats = [agent, opponent] if learner_seat == 0 else [opponent, agent]
            result = play_game(seats, rules, seed=game_seed, first_dealer=i % 2)
            won = result.winner == learner_seat
            wins += won
            net += result.game_points if won else -result.game_points
            n += 1
    p, lo, hi = wilson(wins, n)
    return {"win_rate": p, "win_lo": lo, "win_hi": hi, "net_points": net / max(n, 1),
            "games": n}


# ------------------------------------------------------------------------------------------
# Checkpoints
# ------------------------------------------------------------------------------------------

def _rng_state() -> dict[str, Any]:
    import torch

    np_state = np.random.get_state()
    return {
        "python": _jsonable(random.getstate()),
        "numpy": [np_state[0], np_state[1].tolist(), *np_state[2:]],
        "torch": torch.get_rng_state().tolist(),
    }


def _set_rng_state(state: dict[str, Any]) -> None:
    import torch

    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    npst = state["numpy"]
    np.random.set_state((npst[0], np.array(npst[1], dtype=np.uint32), *npst[2:]))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))


def _jsonable(obj):
    if isinstance(obj, tuple | list):
        return [_jsonable(x) for x in obj]
    return obj


@dataclass
class RunState:
    """What a checkpoint holds besides the SB3 archive."""

    step: int
    pool: list[str]
    evals: list[dict[str, Any]]
    next_snapshot: int
    next_eval: int
    next_checkpoint: int
    rng: dict[str, Any]
    fingerprint: str
    env_resets: int = 0


def save_checkpoint(run_dir: Path, model, state: RunState, keep: int = 2) -> Path:
    """Write a complete checkpoint folder, then point LATEST at it (both atomic)."""
    ckdir = run_dir / "checkpoints"
    ckdir.mkdir(parents=True, exist_ok=True)
    name = f"step-{state.step:09d}"
    tmp = ckdir / (name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save(tmp / "model.zip")
    payload = dict(state.__dict__, format=CHECKPOINT_FORMAT)
    (tmp / "state.json").write_text(json.dumps(payload))
    final = ckdir / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    latest_tmp = ckdir / "LATEST.tmp"
    latest_tmp.write_text(name + "\n")
    os.replace(latest_tmp, ckdir / "LATEST")
    old = sorted(p for p in ckdir.glob("step-*") if p.is_dir() and not p.name.endswith(".tmp"))
    for p in old[:-keep]:
        shutil.rmtree(p, ignore_errors=True)
    return final


def load_checkpoint(run_dir: Path, config: TrainConfig) -> tuple[Path, RunState]:
    """The newest complete checkpoint of ``run_dir``; clear errors when it cannot be used."""
    latest = run_dir / "checkpoints" / "LATEST"
    if not latest.is_file():
        raise CheckpointError(f"nothing to resume: no checkpoint in {run_dir / 'checkpoints'}")
    name = latest.read_text().strip()
    ckpt = run_dir / "checkpoints" / name
    state_file = ckpt / "state.json"
    if not state_file.is_file() or not (ckpt / "model.zip").is_file():
        raise CheckpointError(f"checkpoint {ckpt} is incomplete (state.json or model.zip "
                              f"missing)")
    try:
        data = json.loads(state_file.read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"checkpoint {ckpt} is corrupt: state.json is not JSON "
                              f"({exc})") from None
    if data.pop("format", None) != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {ckpt} is not a {CHECKPOINT_FORMAT} checkpoint")
    try:
        state = RunState(**data)
    except TypeError as exc:
        raise CheckpointError(f"checkpoint {ckpt} has unexpected contents: {exc}") from None
    if state.fingerprint != config.fingerprint():
        raise CheckpointError(
            f"checkpoint {ckpt} was made with different settings (fingerprint "
            f"{state.fingerprint}, config.json gives {config.fingerprint()}); resume with the "
            f"run's own config.json or start a new run directory")
    return ckpt, state


def _load_model(ckpt: Path, env, device: str = "cpu"):
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(ckpt / "model.zip", env=env, device=device)
    except Exception as exc:  # zipfile / torch / pickle errors of a damaged archive
        raise CheckpointError(f"checkpoint {ckpt / 'model.zip'} cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from None


# ------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------

def _make_vec_env(config: TrainConfig, pool: OpponentPool, seed: int):
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

    return DummyVecEnv([factory(i) for i in range(config.n_envs)])


def _new_model(config: TrainConfig, env):
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config.activation]
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
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
        vf_coef=config.vf_coef, target_kl=config.target_kl or None, seed=config.seed,
        device="cpu", verbose=0, policy_kwargs=policy_kwargs)
    if config.init_policy:
        from train.prior_policy import load_card_network

        load_card_network(model.policy, config.init_policy)
    return model


def _progress_callback(bar, stop_flag: dict[str, bool]):
    """An SB3 callback driving a tqdm bar (steps/s) and stopping cleanly on a signal."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            bar.update(self.training_env.num_envs)
            return not stop_flag["stop"]

    return Progress()


def _append_csv(path: Path, row: dict[str, Any]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False,
          progress: bool = True, log: Callable[[str], None] = print) -> Path:
    """Train (or resume) a run; returns the path of the final policy file."""
    import torch
    from stable_baselines3.common.logger import configure
    from tqdm import tqdm

    run_dir = Path(run_dir)
    torch.set_num_threads(config.threads)
    config_file = run_dir / "config.json"
    if resume:
        if not config_file.is_file():
            raise CheckpointError(f"nothing to resume: {config_file} does not exist")
        saved = TrainConfig.load(config_file)
        # the length and hardware may change on resume; the rest must match
        for name in ("total_steps", "threads", "checkpoint_every", "eval_every", "eval_games"):
            setattr(saved, name, getattr(config, name))
        config = saved
        ckpt, state = load_checkpoint(run_dir, config)
    else:
        if (run_dir / "checkpoints" / "LATEST").exists():
            raise CheckpointError(f"{run_dir} already holds a run: pass --resume to continue "
                                  f"it, or choose another --run-dir")
        run_dir.mkdir(parents=True, exist_ok=True)
        config.save(config_file)
        ckpt, state = None, None

    pool = OpponentPool(config, seed=config.seed)
    resets = state.env_resets + 1 if state else 0
    env = _make_vec_env(config, pool, seed=config.seed + 100_003 * resets)
    if ckpt is not None and state is not None:
        model = _load_model(ckpt, env)
        for name in state.pool:
            snap = run_dir / "pool" / name
            if not snap.is_file():
                raise CheckpointError(f"checkpoint {ckpt.name} names pool snapshot {snap}, "
                                      f"which is missing")
            pool.add_snapshot(snap)
        _set_rng_state(state.rng)
        log(f"resumed {run_dir} from {ckpt.name} at step {state.step:,}")
    else:
        model = _new_model(config, env)
        next_checkpoint = config.checkpoint_every
        if config.bc_games:
            _imitate(model, config, progress, log)
            next_checkpoint = 0   # keep the warm start even if the run is killed early
        state = RunState(step=0, pool=[], evals=[], next_snapshot=0, next_eval=0,
                         next_checkpoint=next_checkpoint, rng={},
                         fingerprint=config.fingerprint())
    state.env_resets = resets
    model.set_logger(configure(str(run_dir / "logs"), ["csv", "tensorboard"]))
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
                export_policy(model, path, config, step)
                pool.add_snapshot(path)
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
    _checkpoint(run_dir, model, state, pool, step)
    elapsed = time.perf_counter() - started
    speed = (step - start_steps) / elapsed if elapsed > 0 else 0.0
    final = export_policy(model, run_dir / "policy.safetensors", config, step,
                          {"steps_per_second": round(speed, 1)})
    plot_learning_curve(run_dir)
    log(f"{'stopped' if stop['stop'] else 'finished'} at step {step:,} "
        f"({speed:,.0f} env steps/s while learning); policy: {final}")
    if stop["stop"]:
        raise KeyboardInterrupt
    return final


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
    state.pool = [Path(p).name for p in pool.snapshot_paths]
    state.rng = _rng_state()
    save_checkpoint(run_dir, model, state)


def _evaluate_and_log(model, config: TrainConfig, run_dir: Path, state: RunState,
                      step: int) -> None:
    agent = _InMemoryPolicyAgent(model, config)
    row: dict[str, Any] = {"step": step}
    for spec in config.heuristics:
        res = evaluate(agent, spec, config.eval_games, seed=10_000_000, target=config.target)
        for key in ("win_rate", "win_lo", "win_hi", "net_points"):
            row[f"{spec}_{key}"] = round(res[key], 4)
            model.logger.record(f"eval/{spec}_{key}", res[key])
    model.logger.dump(step)
    state.evals.append(row)
    _append_csv(run_dir / "eval.csv", row)


def plot_learning_curve(run_dir: str | Path) -> Path | None:
    """learning_curve.png from eval.csv: win rate (95% CI) against each heuristic."""
    run_dir = Path(run_dir)
    path = run_dir / "eval.csv"
    if not path.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    steps = [int(r["step"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    specs = sorted({k[: -len("_win_rate")] for k in rows[0] if k.endswith("_win_rate")})
    for spec in specs:
        p = np.array([float(r[f"{spec}_win_rate"]) for r in rows])
        lo = np.array([float(r[f"{spec}_win_lo"]) for r in rows])
        hi = np.array([float(r[f"{spec}_win_hi"]) for r in rows])
        ax.plot(steps, p, marker="o", label=f"vs {spec}")
        ax.fill_between(steps, lo, hi, alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.set_title("Self-play PPO: evaluation against the heuristic bots")
    ax.legend()
    fig.tight_layout()
    out = run_dir / "learning_curve.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
