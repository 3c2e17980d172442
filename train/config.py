"""The settings of an SB3 run (:class:`TrainConfig`, saved as ``config.json`` in the run
folder): the settings every backend shares (:class:`train.settings.RunSettings`) and the sb3
backend's own, each with its one line of help; torch-free, so ``cribenv train --help`` stays
quick."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from train.settings import (  # noqa: F401  (importable from here, as they were)
    LAYER_LISTS,
    MAX_GAMES,
    MAX_LAYERS,
    MAX_ROLLOUT,
    MAX_WIDTH,
    OPEN_LOW,
    RANGES,
    ExpertPriorStart,
    RunSettings,
    accepts_renamed,
    check_setting,
    help_of,
    read_settings,
    setting,
)


@accepts_renamed
@dataclass
class TrainConfig(RunSettings, ExpertPriorStart):
    """Everything that defines an SB3 run (saved as ``config.json`` in the run dir): the
    shared settings, with the defaults of this backend, and its own."""

    # the shared settings whose default (or meaning) differs here
    total_steps: int = setting(200_000)
    num_players: int = setting(2, choices=(2,))
    shaping: float = setting(0.01)
    minibatch_size: int = setting(512)
    gamma: float = setting(0.995)
    net_arch: list[int] = setting(
        [256, 256],
        "hidden layer sizes (actor and critic; expert-prior: the critic's)")
    snapshot_every: int = setting(50_000)
    heuristics: list[str] = setting(
        ["greedy", "expert"],
        "heuristic bots in the pool and in the evaluation")
    # length and hardware
    threads: int = setting(1, "torch threads (cores) for the network")
    # rollouts
    n_games: int = setting(8, "games stepped together (SB3's parallel envs)")
    n_steps: int = setting(256, "steps per game per rollout")
    # PPO
    target_kl: float = setting(
        0.0,
        "stop a PPO update early once the policy moved this far (KL; 0: no limit)")
    activation: str = setting("relu", "activation of the hidden layers", ("relu", "tanh"))
    # network: "mlp" (observation -> 52 logits) or "expert-prior" (per-card features,
    # logits = beta * expert value + card MLP; see train/prior_policy.py)
    policy: str = setting(
        "mlp",
        "network: 'mlp' (observation to 52 logits) or 'expert-prior' (per-card features)",
        ("mlp", "expert-prior"))
    beta: float = setting(2.0)   # card_arch, beta, init_policy: train.settings.ExpertPriorStart
    # behaviour-cloning warm start (0 disables): expert games imitated before PPO
    bc_games: int = setting(
        0,
        "expert-vs-expert games whose decisions the policy imitates before PPO (0: none)")
    bc_epochs: int = setting(4, "passes over the imitation data")
    bc_lr: float = setting(1e-3, "learning rate of the imitation phase")
    bc_teacher: str = setting("expert", "the bot imitated")
    # opponent pool
    heuristic_share: float = setting(0.3, "share of episodes against the heuristic bots")
    pool_size: int = setting(10, "most recent snapshots kept")
    # bookkeeping
    eval_every: int = setting(50_000, "steps between evaluations")

    #: settings that may change when a run is resumed
    RESUMABLE = ("total_steps", "threads", "checkpoint_every", "eval_every", "eval_games")
    RENAMED = {"n_envs": "n_games", "batch_size": "minibatch_size"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.policy == "expert-prior" and self.bc_games:
            raise ValueError("the expert-prior policy starts as the expert already: set "
                             "bc_games to 0")
        if self.init_policy and self.policy != "expert-prior":
            raise ValueError("init_policy needs policy 'expert-prior'")
        self.check_rollout_size("n_games", "n_steps")

    @property
    def rollout_steps(self) -> int:
        return self.n_steps * self.n_games

    def policy_fields(self) -> dict[str, Any]:
        """SB3's actor: ``arch`` is the policy (the MLP's ``net_arch`` with it)."""
        fields: dict[str, Any] = {"arch": self.policy, "activation": self.activation}
        if self.policy != "expert-prior":
            fields["net_arch"] = self.net_arch
        return fields

    def fixed_settings(self) -> dict[str, Any]:
        fixed = super().fixed_settings()
        if fixed["policy"] == "mlp":  # runs made before the expert-prior network existed
            for name in ("policy", "card_arch", "beta", "init_policy"):
                fixed.pop(name)
        return fixed
