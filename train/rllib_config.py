"""The settings of an RLlib run (:class:`RLlibConfig`, saved as ``config.json`` in the run
folder) and the help of those only this backend has: ray-free, so ``cribenv train --help``
stays quick."""

from __future__ import annotations

from dataclasses import dataclass, field

from train.config import RunSettings

TRAINER = "rllib"   # named in checkpoints


@dataclass
class RLlibConfig(RunSettings):
    """Everything that defines an RLlib run (saved as ``config.json`` in the run dir)."""

    # length and hardware
    total_steps: int = 1_000_000       # env steps (every seat's decisions) to train for
    num_env_runners: int = 2           # Ray actors collecting games (1 CPU each)
    envs_per_env_runner: int = 1       # games each env runner steps
    num_cpus: int = 0                  # CPUs of the local Ray instance (0: all); not with
                                       # --address
    seed: int = 0
    # game
    num_players: int = 2
    target: int = 121
    reward: str = "win"                # "win" or "points" (the env's reward)
    shaping: float = 0.0               # with reward "win": + shaping x point differential
    skunks: bool = False
    # PPO (RLlib's names in brackets)
    learning_rate: float = 3e-4        # lr
    train_batch_size: int = 4000       # train_batch_size_per_learner (env steps per update)
    minibatch_size: int = 256
    n_epochs: int = 4                  # num_epochs
    gamma: float = 0.99
    gae_lambda: float = 0.95           # lambda_
    clip_range: float = 0.2            # clip_param
    ent_coef: float = 0.01             # entropy_coeff
    vf_coef: float = 0.5               # vf_loss_coeff
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    # self-play
    frozen: int = 2                    # frozen copies of the learner (0: pure self-play)
    self_play_share: float = 0.5       # games where the learner plays every seat
    snapshot_every: int = 20_000       # env steps between refreshes of a frozen copy
    # bookkeeping
    checkpoint_every: int = 20_000     # env steps
    eval_games: int = 200              # per heuristic at the end (duplicate deals), 0: none
    heuristics: list[str] = field(default_factory=lambda: ["greedy", "expert"])

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


# One line of help per setting of this backend only (``cribenv train --help``).
HELP: dict[str, str] = {
    "num_env_runners": "Ray actors collecting games, 1 CPU each (0: in the learner's process)",
    "envs_per_env_runner": "games each env runner steps",
    "num_cpus": "CPUs of the local Ray instance (0: all); ignored with --address",
    "train_batch_size": "env steps per PPO update",
    "frozen": "frozen copies of the learner it plays against (0: pure self-play)",
}
