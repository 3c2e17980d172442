"""The settings of a self-play run (:class:`SelfPlayConfig`, saved as ``config.json`` in the run
folder) and their one-line help: torch-free, so ``cribenv train --help`` stays quick."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from train.config import RunSettings

TRAINER = "selfplay"   # named in checkpoints (the SB3 trainer's have another layout)
NUM_CARDS = 52
POLICIES = ("mlp", "cards", "keeps", "expert-prior")
EXPERT = "expert"      # the opponent name of the expert bot (expert_share)


@dataclass
class SelfPlayConfig(RunSettings):
    """Everything that defines a self-play run (saved as ``config.json`` in the run dir)."""

    # length and hardware
    total_steps: int = 5_000_000      # learner decisions to train on
    threads: int = 1                  # torch threads
    engine_threads: int = 1           # numba threads of the batched engine
    feature_workers: int = 0          # processes computing the "expert-prior" card features
    device: str = "cpu"               # "cpu" or "cuda"
    seed: int = 0
    # game
    num_players: int = 2
    target: int = 121
    reward: str = "points"            # "win", "points" or "mix" (win + shaping x points)
    shaping: float = 0.1              # weight of the point differential in "mix"
    skunks: bool = True               # the win reward counts game points (2 or 3 for skunks)
    # rollouts
    n_games: int = 256                # games stepped together
    n_steps: int = 32                 # engine steps per rollout (one decision per game each)
    # PPO
    learning_rate: float = 1e-3
    anneal_lr: bool = False           # decay the learning rate linearly to 0 at total_steps
    n_epochs: int = 4
    minibatch_size: int = 1024
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.02
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.0            # stop an update's epochs past this KL (0: never)
    # network
    policy: str = "cards"             # "mlp" (linear head), "cards" (per-card head),
                                      # "keeps" (per-card head + throw head for the discard)
                                      # or "expert-prior" (the expert's values + a card MLP)
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    card_dim: int = 32
    keep_arch: list[int] = field(default_factory=lambda: [64, 64])   # throw head ("keeps")
    keep_ctx: int = 32                # inputs the throw head takes from the last hidden layer
    card_arch: list[int] = field(default_factory=lambda: [64, 64])   # "expert-prior" card MLP
    beta: float = 3.0                 # "expert-prior": initial weight of the expert's values
    init_policy: str = ""             # "expert-prior": start from this policy file ("shipped")
    value_warmup: int = 0             # first learner steps that train the critic only
    privileged_critic: bool = False   # the critic also reads what the seat cannot see
    # opponents
    self_play_share: float = 0.5      # games where the learner plays every seat
    expert_share: float = 0.0         # "expert-prior": of the other games, those against expert
    snapshot_every: int = 200_000     # learner steps between snapshots added to the pool
    pool_size: int = 8
    pool_priority: float = 2.0        # snapshot weight (1 - learner's win rate) ** this
    # bookkeeping
    time_limit: float = 0.0           # stop (checkpointed, policy exported) after this many
                                      # seconds of this process's training; 0: no limit
    checkpoint_every: int = 200_000
    eval_every: int = 400_000
    eval_games: int = 200             # per heuristic, duplicate deals; 0 disables
    heuristics: list[str] = field(default_factory=lambda: ["greedy", "expert"])

    #: settings that may change when a run is resumed
    KIND = "self-play"
    RESUMABLE = ("total_steps", "threads", "engine_threads", "feature_workers", "device",
                 "checkpoint_every",
                 "eval_every", "eval_games", "time_limit")

    def __post_init__(self) -> None:
        if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", str(self.device)):
            raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got "
                             f"{self.device!r}")
        if self.reward not in ("win", "points", "mix"):
            raise ValueError(f"reward must be 'win', 'points' or 'mix', got {self.reward!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(map(repr, POLICIES))}, got "
                             f"{self.policy!r}")
        if self.init_policy and self.policy != "expert-prior":
            raise ValueError(f"init_policy needs policy 'expert-prior', got {self.policy!r}")
        if not self.beta > 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        if not self.card_arch or min(self.card_arch) < 1:
            raise ValueError(f"card_arch must be hidden layer sizes >= 1, got {self.card_arch}")
        if self.num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be 2, 3 or 4, got {self.num_players}")
        if not 0.0 <= self.self_play_share <= 1.0:
            raise ValueError(f"self_play_share must be in [0, 1], got {self.self_play_share}")
        if not 0.0 <= self.expert_share <= 1.0:
            raise ValueError(f"expert_share must be in [0, 1], got {self.expert_share}")
        if self.expert_share and self.policy != "expert-prior":
            raise ValueError(f"expert_share needs policy 'expert-prior' (the expert's card is "
                             f"read from its features), got {self.policy!r}")
        self.check_at_least(0, "value_warmup", "feature_workers")
        self.check_at_least(1, "total_steps", "threads", "engine_threads", "n_games", "n_steps",
                            "n_epochs", "minibatch_size", "snapshot_every", "pool_size",
                            "checkpoint_every", "eval_every", "card_dim", "keep_ctx")
        if not self.keep_arch or min(self.keep_arch) < 1:
            raise ValueError(f"keep_arch must be hidden layer sizes >= 1, got {self.keep_arch}")
        self.check_rollout_size("n_games", "n_steps")
        self.check_eval_games()


# One line of help per setting (``cribenv train --help``).
HELP: dict[str, str] = {
    "total_steps": "learner decisions to train on",
    "threads": "torch threads",
    "engine_threads": "numba threads of the batched engine (1: on a busy machine more threads "
                      "spin and slow it down many times)",
    "feature_workers": "processes that compute the expert-prior card features (0: in the "
                       "trainer's own process); they run while the trainer waits, so up to "
                       "one per core",
    "device": "'cpu' or 'cuda'",
    "reward": "'win' (+game points / -game points at the end), 'points' (point differential "
              "per decision) or 'mix' (win + shaping x points)",
    "shaping": "weight of the point differential in reward 'mix' (sb3: with reward 'win')",
    "skunks": "the win reward counts game points (2 or 3 for skunks)",
    "n_games": "games stepped together",
    "n_steps": "engine steps per rollout (selfplay: one decision per game each; sb3: per env)",
    "n_epochs": "PPO epochs per update",
    "anneal_lr": "decay the learning rate linearly to 0 at total_steps",
    "minibatch_size": "PPO minibatch size (decisions)",
    "max_grad_norm": "gradient norm clip",
    "policy": "network: selfplay 'mlp', 'cards' (per-card head), 'keeps' (per-card head "
              "and a throw head that scores every way to lay away cards) or 'expert-prior' "
              "(beta x the expert's value of each legal card + a card MLP on its features); "
              "sb3 'mlp' or 'expert-prior'",
    "net_arch": "hidden layer sizes (actor and critic)",
    "card_dim": "size of the card embeddings of the per-card head",
    "keep_arch": "hidden layer sizes of the throw head (policy 'keeps')",
    "keep_ctx": "inputs the throw head takes from the actor's last hidden layer",
    "card_arch": "expert-prior: hidden layer sizes of the per-card network",
    "beta": "expert-prior: initial weight of the expert's card values in the logits",
    "init_policy": "expert-prior: start from this policy file's card network and beta "
                   "('shipped': the shipped agent)",
    "privileged_critic": "the critic also reads what the seat cannot see (the other hands, "
                         "the crib, the starter to come: VectorGame.hidden); the policy never "
                         "does, so the agent plays from its own view",
    "value_warmup": "learner steps at the start that train the critic only (the "
                    "policy kept as it starts; for a strong init_policy)",
    "self_play_share": "share of games where the learner plays every seat (the rest: "
                       "against pool snapshots)",
    "expert_share": "expert-prior: share of the games not played by the learner alone that "
                    "are played against the expert bot (the rest: pool snapshots)",
    "snapshot_every": "learner steps between snapshots added to the pool",
    "pool_size": "snapshots kept in the pool",
    "pool_priority": "snapshot j drawn with weight (1 - learner's win rate against j) ** this",
    "eval_games": "evaluation games per heuristic (duplicate deals), 0 disables",
    "time_limit": "stop (checkpointed, policy exported) after this many seconds; 0: no limit",
    "heuristics": "heuristic bots of the evaluation",
}


