"""The settings of an RLlib run (:class:`RLlibConfig`, saved as ``config.json`` in the run
folder), each with its one line of help: ray-free, so ``cribenv train --help`` stays quick."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from train.settings import RunSettings, setting

TRAINER = "rllib"   # named in checkpoints


@dataclass
class RLlibConfig(RunSettings):
    """Everything that defines an RLlib run (saved as ``config.json`` in the run dir): the
    shared settings, with their defaults, and this backend's own."""

    # the shared settings whose meaning differs here
    heuristics: list[str] = setting(
        ["greedy", "expert"],
        "heuristic bots in the pool and in the evaluation")
    # hardware: Ray
    num_env_runners: int = setting(
        2,
        "Ray actors collecting games, 1 CPU each (0: in the learner's process)")
    envs_per_env_runner: int = setting(1, "games each env runner steps")
    num_cpus: int = setting(0, "CPUs of the local Ray instance (0: all); ignored with --address")
    # PPO
    train_batch_size: int = setting(
        4000,
        "decisions per PPO update (the rollout; the other backends: n_games x n_steps)")
    # self-play
    frozen: int = setting(2, "frozen copies of the learner it plays against (0: pure self-play)")
    self_play_share: float = setting(0.5, "games where the learner plays every seat")

    KIND = "rllib"
    #: settings that may change when a run is resumed
    RESUMABLE = ("total_steps", "num_env_runners", "envs_per_env_runner", "num_cpus",
                 "checkpoint_every", "eval_games", "heuristics")

    def policy_fields(self) -> dict[str, Any]:
        """RLlib's actor: an ``mlp`` of ReLU layers."""
        return {"arch": "mlp", "activation": "relu", "net_arch": self.net_arch,
                "trainer": TRAINER}
