"""``cribenv train --backend rllib``: RLlib PPO self-play, on this machine or a Ray cluster.

The algorithm is :func:`cribenv.integrations.rllib.ppo_config` (the masking module, the
learner against itself and frozen copies of itself); this module runs it with the contract of
the other trainers: a run folder, settings in ``config.json``, atomic checkpoints and
``--resume``, progress, and the final policy exported as a ``ppo:PATH`` file and evaluated
against the heuristic bots with the tournament's duplicate deals.

``address`` (``--address``) joins an existing Ray cluster (``ray start --head`` on one machine,
``ray start --address HEAD:6379`` on the others): the env runners (each ``1`` CPU) are spread
over its nodes; the learner runs in this process. Without it a local Ray instance of
``num_cpus`` CPUs is started and shut down with the run.

Run layout (``run_dir``)::

    config.json                  the settings (RLlibConfig)
    checkpoints/LATEST           name of the newest complete checkpoint (replaced atomically)
    checkpoints/step-000004000/  model.zip (RLlib's own checkpoint folder, zipped), state.json
    logs/progress.csv            one row per training iteration
    cluster.json                 the nodes of the cluster and where each env runner ran
    policy.safetensors           the learner's actor (play it with ppo:PATH)
    eval.csv                     the evaluation against the heuristic bots
"""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from train.checkpoints import (
    CheckpointError,
    read_checkpoint,
    run_settings,
    save_checkpoint,
    truncate_log,
)
from train.evaluation import append_csv, evaluation_row
from train.rllib_config import TRAINER, RLlibConfig


def ppo_config(config: RLlibConfig):
    """The RLlib ``PPOConfig`` of ``config`` (see :func:`cribenv.integrations.rllib.ppo_config`)."""
    from cribenv.integrations import rllib

    env_config = {"num_players": config.num_players, "target": config.target,
                  "reward": config.reward, "shaping": config.shaping, "skunks": config.skunks}
    return rllib.ppo_config(
        env_config=env_config, num_env_runners=config.num_env_runners,
        envs_per_env_runner=config.envs_per_env_runner, frozen=config.frozen,
        self_play_share=config.self_play_share, snapshot_every=config.snapshot_every,
        hidden=config.net_arch, seed=config.seed, lr=config.learning_rate,
        train_batch_size_per_learner=config.train_batch_size,
        minibatch_size=config.minibatch_size, num_epochs=config.n_epochs, gamma=config.gamma,
        lambda_=config.gae_lambda, clip_param=config.clip_range,
        entropy_coeff=config.ent_coef, vf_loss_coeff=config.vf_coef)


def start_ray(address: str | None, num_cpus: int) -> bool:
    """Join the cluster at ``address`` (:func:`tournament.ray_workers.join_cluster`), or
    start a small local Ray instance; ``True`` when this call did it (so the caller shuts it
    down). An instance already running in this process is used as it is."""
    import ray

    from tournament.ray_workers import join_cluster

    if ray.is_initialized():
        return False
    if address:
        return join_cluster(address)
    ray.init(address="local",   # a new instance, even where a cluster runs on this machine
             num_cpus=num_cpus or None, object_store_memory=200 * 1024 ** 2,
             include_dashboard=False, log_to_driver=False, logging_level="warning")
    return True


def env_runner_nodes(algo) -> list[str]:
    """The Ray node id of each remote env runner of ``algo``."""
    import ray

    return algo.env_runner_group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)


def train(config: RLlibConfig, run_dir: str | Path, resume: bool = False,
          progress: bool = True, log: Callable[[str], None] = print,
          address: str | None = None) -> Path:
    """Train (or resume) an RLlib self-play run in ``run_dir``; returns the policy file."""
    import ray
    from tqdm import tqdm

    from cribenv.integrations.rllib import LEARNER
    from train.export import export_policy

    run_dir = Path(run_dir)
    stop = {"stop": False}
    config, state, ckpt = _open_run(config, run_dir, resume)   # checks only, writes nothing
    started_ray = start_ray(address, config.num_cpus)          # a bad address: nothing written
    try:
        (run_dir / "logs").mkdir(parents=True, exist_ok=True)
        config.save(run_dir / "config.json")
        algo = ppo_config(config).build_algo()
        try:
            if ckpt is not None:
                _restore(algo, ckpt)
                truncate_log(run_dir / "logs" / "progress.csv", state["step"])
                log(f"resumed {run_dir} from {ckpt.name} at step {state['step']:,}")
            nodes = env_runner_nodes(algo)
            (run_dir / "cluster.json").write_text(json.dumps(
                {"address": address or "local", "env_runner_nodes": nodes,
                 "nodes": [n["NodeID"] for n in ray.nodes() if n["Alive"]],
                 "resources": ray.cluster_resources()}, indent=2, default=str) + "\n")
            bar = tqdm(total=config.total_steps, initial=min(state["step"], config.total_steps),
                       unit="step", disable=not progress, desc="rllib PPO", smoothing=0.1)
            t_start, wall0 = time.perf_counter(), state["wall_s"]

            def on_signal(signum, frame):  # finish the iteration, checkpoint, export, stop
                stop["stop"] = True

            old_handlers = {sig: signal.signal(sig, on_signal)
                            for sig in (signal.SIGTERM, signal.SIGINT)}
            try:
                while state["step"] < config.total_steps and not stop["stop"]:
                    t0 = time.perf_counter()
                    result = algo.train()
                    # an iteration whose env runners returned nothing in time (a busy machine)
                    # reports no env_runners: the step stays where it was
                    runners = result.get("env_runners") or {}
                    step = int(runners.get("num_env_steps_sampled_lifetime", state["step"]))
                    bar.update(step - state["step"])
                    state.update(step=step, iteration=int(algo.iteration),
                                 wall_s=wall0 + time.perf_counter() - t_start)
                    _log_iteration(run_dir, state, result, time.perf_counter() - t0)
                    if step >= state["next_checkpoint"]:
                        state["next_checkpoint"] = step + config.checkpoint_every
                        _checkpoint(run_dir, algo, state)
            finally:
                bar.close()
                for sig, handler in old_handlers.items():
                    signal.signal(sig, handler)
            if ckpt is None or state["step"] > ckpt_step(ckpt):
                _checkpoint(run_dir, algo, state)
            policy = export_policy(algo.get_module(LEARNER).actor_arrays(),
                                   run_dir / "policy.safetensors", config, state["step"])
        finally:
            algo.stop()
    finally:
        if started_ray:
            ray.shutdown()
    if config.eval_games and config.num_players == 2 and not stop["stop"]:
        from agents.ppo import PPOAgent

        row = evaluation_row(PPOAgent(policy), config, state["step"])  # type: ignore[arg-type]
        append_csv(run_dir / "eval.csv", row)
        log("evaluation: " + ", ".join(f"{h} {row[f'{h}_win_rate']:.1%}"
                                       for h in config.heuristics))
    log(f"{'stopped' if stop['stop'] else 'finished'} at step {state['step']:,} "
        f"({state['iteration']} iterations); policy: {policy}")
    if stop["stop"]:
        raise KeyboardInterrupt
    return policy


# ------------------------------------------------------------------------------------------
# Run folder, checkpoints, logs
# ------------------------------------------------------------------------------------------

def ckpt_step(ckpt: Path) -> int:
    return int(ckpt.name.split("-")[1])


def _open_run(config: RLlibConfig, run_dir: Path, resume: bool
              ) -> tuple[RLlibConfig, dict[str, Any], Path | None]:
    """The settings, state and checkpoint a run starts from (checked; nothing written)."""
    config, _ = run_settings(config, run_dir, resume)
    if not resume:
        state = {"step": 0, "iteration": 0, "next_checkpoint": config.checkpoint_every,
                 "wall_s": 0.0, "fingerprint": config.fingerprint()}
        return config, state, None
    ckpt, state = read_checkpoint(run_dir, TRAINER, config.fingerprint())
    return config, state, ckpt


def _checkpoint(run_dir: Path, algo, state: dict[str, Any]) -> Path:
    """A complete checkpoint (atomic, via :func:`train.checkpoints.save_checkpoint`):
    ``model.zip`` is RLlib's checkpoint folder of the algorithm (``save_to_path``), zipped."""

    class Archive:
        def save(self, path: Path) -> None:
            with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
                algo.save_to_path((Path(tmp) / "algorithm").resolve())   # RLlib: absolute
                made = shutil.make_archive(str(Path(tmp) / "model"), "zip",
                                           root_dir=Path(tmp) / "algorithm")
                Path(made).replace(path)

    return save_checkpoint(run_dir, Archive(), SimpleNamespace(**state, trainer=TRAINER))


def _restore(algo, ckpt: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            shutil.unpack_archive(ckpt / "model.zip", tmp, "zip")
            algo.restore_from_path(str(Path(tmp).resolve()))
        except Exception as exc:  # a damaged archive or another algorithm's checkpoint
            raise CheckpointError(f"{ckpt / 'model.zip'} cannot be restored: "
                                  f"{type(exc).__name__}: {exc}") from None


def _log_iteration(run_dir: Path, state: dict[str, Any], result: dict[str, Any],
                   seconds: float) -> None:
    runners = result.get("env_runners") or {}
    learner = result.get("learners", {}).get("learner", {})
    row = {"step": state["step"], "iteration": state["iteration"],
           "episodes": int(runners.get("num_episodes_lifetime", 0)),
           "episode_len_mean": runners.get("episode_len_mean", float("nan")),
           "learner_win_vs_frozen": runners.get("learner_win_vs_frozen", float("nan")),
           "entropy": learner.get("entropy", float("nan")),
           "policy_loss": learner.get("policy_loss", float("nan")),
           "vf_loss": learner.get("vf_loss", float("nan")),
           "steps_per_s": runners.get("num_env_steps_sampled", 0) / max(seconds, 1e-9),
           "wall_s": state["wall_s"]}
    append_csv(run_dir / "logs" / "progress.csv",
               {k: round(float(v), 6) if isinstance(v, float) else v for k, v in row.items()})
