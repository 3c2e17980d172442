"""The settings of a self-play run (:class:`SelfPlayConfig`, saved as ``config.json`` in the run
folder), each with its one line of help: torch-free, so ``cribenv train --help`` stays quick."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

from train.config import RunSettings, setting

TRAINER = "selfplay"   # named in checkpoints (the SB3 trainer's have another layout)
NUM_CARDS = 52
POLICIES = ("mlp", "cards", "keeps", "expert-prior")
EXPERT = "expert"      # the opponent name of the expert bot (expert_share)


@dataclass
class SelfPlayConfig(RunSettings):
    """Everything that defines a self-play run (saved as ``config.json`` in the run dir)."""

    # length and hardware
    total_steps: int = setting(5_000_000, "learner decisions to train on")
    threads: int = setting(1, "torch threads")
    engine_threads: int = setting(
        1,
        "numba threads of the batched engine (1: on a busy machine more threads spin and slow it "
        "down many times)")
    device: str = setting("cpu", "'cpu' or 'cuda'")
    seed: int = setting(0, "seed of everything")
    # game
    num_players: int = setting(2, "players (2)")
    target: int = setting(121, "points to win: 121 or 61")
    reward: str = setting(
        "points",
        "'win' (+game points / -game points at the end), 'points' (point differential per "
        "decision) or 'mix' (win + shaping x points)")
    shaping: float = setting(
        0.1,
        "weight of the point differential in reward 'mix'")
    skunks: bool = setting(True, "the win reward counts game points (2 or 3 for skunks)")
    # rollouts
    n_games: int = setting(256, "games stepped together")
    n_steps: int = setting(
        32,
        "engine steps per rollout (one decision per game each)")
    # PPO
    learning_rate: float = setting(1e-3, "Adam learning rate")
    anneal_lr: bool = setting(False, "decay the learning rate linearly to 0 at total_steps")
    n_epochs: int = setting(4, "PPO epochs per update")
    minibatch_size: int = setting(1024, "PPO minibatch size (decisions)")
    gamma: float = setting(0.99, "discount factor")
    gae_lambda: float = setting(0.95, "GAE lambda")
    clip_range: float = setting(0.2, "PPO clip range")
    ent_coef: float = setting(0.02, "entropy bonus")
    vf_coef: float = setting(0.5, "value loss weight")
    max_grad_norm: float = setting(0.5, "gradient norm clip")
    target_kl: float = setting(
        0.0,
        "stop a PPO update early once the policy moved this far (KL; 0: no limit)")
    # network
    policy: str = setting(
        "cards",
        "network: 'mlp', 'cards' (per-card head), 'keeps' (per-card head and a throw head that "
        "scores every way to lay away cards) or 'expert-prior' (beta x the expert's value of "
        "each legal card + a card MLP on its features)")
    net_arch: list[int] = setting([128, 128], "hidden layer sizes (actor and critic)")
    card_dim: int = setting(32, "size of the card embeddings of the per-card head")
    keep_arch: list[int] = setting(
        [64, 64],
        "hidden layer sizes of the throw head (policy 'keeps')")
    keep_ctx: int = setting(32, "inputs the throw head takes from the actor's last hidden layer")
    throw_values: bool = setting(
        False,
        "keeps: add beta x the learnt show points of each throw (its hand, and its crib signed by"
        " who deals) to the throw head's scores, fitted to what the rules score for every way to "
        "throw once the starter is turned (train.throw_values)")
    value_arch: list[int] = setting([128, 128], "throw_values: hidden layer sizes of its MLP")
    value_beta: float = setting(1.0, "throw_values: initial weight beta of the show points")
    value_lr: float = setting(1e-3, "throw_values: Adam learning rate of its fit")
    card_arch: list[int] = setting(
        [64, 64],
        "expert-prior: hidden layer sizes of the per-card network")
    beta: float = setting(
        3.0,
        "expert-prior: initial weight of the expert's card values in the logits")
    init_policy: str = setting(
        "",
        "expert-prior: start from this policy file's card network and beta ('shipped': the shipped"
        " agent)")
    value_warmup: int = setting(
        0,
        "learner steps at the start that train the critic only (the policy kept as it starts; for "
        "a strong init_policy)")
    privileged_critic: bool = setting(
        False,
        "the critic also reads what the seat cannot see (the other hands, the crib, the starter to"
        " come: VectorGame.hidden); the policy never does, so the agent plays from its own view")
    # opponents
    self_play_share: float = setting(
        0.5,
        "share of games where the learner plays every seat (the rest: against pool snapshots)")
    expert_share: float = setting(
        0.0,
        "expert-prior: share of the games not played by the learner alone that are played against "
        "the expert bot (the rest: pool snapshots)")
    snapshot_every: int = setting(200_000, "learner steps between snapshots added to the pool")
    pool_size: int = setting(8, "snapshots kept in the pool")
    pool_priority: float = setting(
        2.0,
        "snapshot j drawn with weight (1 - learner's win rate against j) ** this")
    # bookkeeping
    time_limit: float = setting(
        0.0,
        "stop (checkpointed, policy exported) after this many seconds; 0: no limit")
    checkpoint_every: int = setting(200_000, "steps between checkpoints")
    eval_every: int = setting(400_000, "steps between evaluations")
    eval_games: int = setting(200, "evaluation games per heuristic (duplicate deals), 0 disables")
    heuristics: list[str] = setting(["greedy", "expert"], "heuristic bots of the evaluation")

    #: settings that may change when a run is resumed
    KIND = "self-play"
    RESUMABLE = ("total_steps", "threads", "engine_threads", "device", "checkpoint_every",
                 "eval_every", "eval_games", "time_limit")
    #: settings of earlier versions, still found in older runs' config.json: accepted with a
    #: note and ignored (each was resumable, so no checkpoint's fingerprint holds it)
    REMOVED = {
        "feature_workers": "the expert-prior card features are compiled now (a few microseconds "
                           "a row), so there is no process pool to size",
    }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SelfPlayConfig:
        """:meth:`RunSettings.from_dict`, after dropping the settings of :attr:`REMOVED` (a
        ``FutureWarning`` names each)."""
        removed = [k for k in data if k in cls.REMOVED]
        for name in removed:
            warnings.warn(f"ignoring the self-play setting {name!r} (removed: "
                          f"{cls.REMOVED[name]}); delete it from the config file",
                          FutureWarning, stacklevel=3)
        return super().from_dict({k: v for k, v in data.items() if k not in removed})

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
        if self.throw_values and self.policy != "keeps":
            raise ValueError(f"throw_values needs policy 'keeps', got {self.policy!r}")
        if not self.value_beta > 0 or not self.value_lr > 0:
            raise ValueError(f"value_beta and value_lr must be > 0, got {self.value_beta} and "
                             f"{self.value_lr}")
        if not self.value_arch or min(self.value_arch) < 1:
            raise ValueError(f"value_arch must be hidden layer sizes >= 1, got {self.value_arch}")
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
        self.check_at_least(0, "value_warmup")
        self.check_at_least(1, "total_steps", "threads", "engine_threads", "n_games", "n_steps",
                            "n_epochs", "minibatch_size", "snapshot_every", "pool_size",
                            "checkpoint_every", "eval_every", "card_dim", "keep_ctx")
        if not self.keep_arch or min(self.keep_arch) < 1:
            raise ValueError(f"keep_arch must be hidden layer sizes >= 1, got {self.keep_arch}")
        self.check_rollout_size("n_games", "n_steps")
        self.check_eval_games()

    def fixed_settings(self) -> dict[str, Any]:
        fixed = super().fixed_settings()
        if not fixed["throw_values"]:   # inert: runs made before them keep their fingerprint
            for name in ("throw_values", "value_arch", "value_beta", "value_lr"):
                fixed.pop(name)
        return fixed

    def policy_fields(self) -> dict[str, Any]:
        """The self-play actor: ``arch`` is how the file is read (``head`` the network that
        wrote it: ``cards`` is read as an ``mlp``)."""
        arch = {"keeps": "keeps", "expert-prior": "expert-prior"}.get(self.policy, "mlp")
        return {"arch": arch, "activation": "relu", "net_arch": self.net_arch,
                "head": self.policy, "trainer": TRAINER}


