"""The settings of an RLlib run (:class:`RLlibConfig`, saved as ``config.json`` in the run
folder), each with its one line of help: ray-free, so ``cribenv train --help`` stays quick."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from train.config import RunSettings, setting

TRAINER = "rllib"   # named in checkpoints


@dataclass
class RLlibConfig(RunSettings):
    """Everything that defines an RLlib run (saved as ``config.json`` in the run dir)."""

    # length and hardware
    total_steps: int = setting(1_000_000, "learner decisions (env steps) to train for")
    num_env_runners: int = setting(
        2,
        "Ray actors collecting games, 1 CPU each (0: in the learner's process)")
    envs_per_env_runner: int = setting(1, "games each env runner steps")
    num_cpus: int = setting(0, "CPUs of the local Ray instance (0: all); ignored with --address")
    seed: int = setting(0, "seed of everything")
    # game
    num_players: int = setting(2, "players (2)")
    target: int = setting(121, "points to win: 121 or 61")
    reward: str = setting("win", "'win' (+1/-1 at the end) or 'points'")
    shaping: float = setting(0.0, "with reward 'win': + shaping x point differential per step")
    skunks: bool = setting(False, "scale the win reward by game points")
    # PPO (RLlib's names in brackets)
    learning_rate: float = setting(3e-4, "Adam learning rate")
    train_batch_size: int = setting(4000, "env steps per PPO update")
    minibatch_size: int = setting(256, "PPO minibatch size (env steps)")
    n_epochs: int = setting(4, "PPO epochs per update")
    gamma: float = setting(0.99, "discount factor")
    gae_lambda: float = setting(0.95, "GAE lambda")
    clip_range: float = setting(0.2, "PPO clip range")
    ent_coef: float = setting(0.01, "entropy bonus")
    vf_coef: float = setting(0.5, "value loss weight")
    net_arch: list[int] = setting(
        [256, 256],
        "hidden layer sizes (policy and value nets; expert-prior: the value net)")
    # self-play
    frozen: int = setting(2, "frozen copies of the learner it plays against (0: pure self-play)")
    self_play_share: float = setting(0.5, "games where the learner plays every seat")
    snapshot_every: int = setting(
        20_000,
        "steps between frozen copies of the learner added to the pool")
    # bookkeeping
    checkpoint_every: int = setting(20_000, "steps between checkpoints")
    eval_games: int = setting(200, "evaluation games per heuristic (duplicate pairs), 0 disables")
    heuristics: list[str] = setting(
        ["greedy", "expert"],
        "heuristic bots in the pool and in the evaluation")

    #: settings that may change when a run is resumed
    KIND = "rllib"
    RESUMABLE = ("total_steps", "num_env_runners", "envs_per_env_runner", "num_cpus",
                 "checkpoint_every", "eval_games", "heuristics")

    def __post_init__(self) -> None:
        if self.reward not in ("win", "points"):
            raise ValueError(f"reward must be 'win' or 'points', got {self.reward!r}")
        if self.num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {self.num_players}")
        if not 0.0 <= self.self_play_share <= 1.0:
            raise ValueError(f"self_play_share must be in [0, 1], got {self.self_play_share}")
        self.check_at_least(1, "total_steps", "envs_per_env_runner", "train_batch_size",
                            "minibatch_size", "n_epochs", "snapshot_every", "checkpoint_every")
        self.check_at_least(0, "num_env_runners", "num_cpus", "frozen")
        self.check_eval_games()

    def policy_fields(self) -> dict[str, Any]:
        """RLlib's actor: an ``mlp`` of ReLU layers."""
        return {"arch": "mlp", "activation": "relu", "net_arch": self.net_arch,
                "trainer": TRAINER}
