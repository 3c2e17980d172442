"""The settings of a self-play run (:class:`SelfPlayConfig`, saved as ``config.json`` in the run
folder), each with its one line of help: torch-free, so ``cribenv train --help`` stays quick."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from train.settings import ExpertPriorStart, RunSettings, setting

TRAINER = "selfplay"   # named in checkpoints (the SB3 trainer's have another layout)
NUM_CARDS = 52
POLICIES = ("mlp", "cards", "keeps", "expert-prior")
ALGORITHMS = ("ppo", "dmc")
EXPERT = "expert"      # the opponent name of the expert bot (expert_share)


def check_device(device: str) -> None:
    """A ValueError naming ``device`` (a valid spelling) when this torch cannot train on it:
    no CUDA (a CPU-only build, or no GPU seen), a ``cuda:N`` past the GPUs seen, or no MPS."""
    if device == "cpu":
        return
    import torch

    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not count:
            build = ("is built for CPU only" if torch.version.cuda is None
                     else f"is built for CUDA {torch.version.cuda} but sees no GPU")
            raise ValueError(f"--device {device}: this torch ({torch.__version__}) {build}; "
                             "train with --device cpu")
        index = int(device.partition(":")[2] or 0)
        if index >= count:
            raise ValueError(f"--device {device}: torch sees {count} GPU(s), cuda:0 to "
                             f"cuda:{count - 1}")
    elif not torch.backends.mps.is_available():
        raise ValueError(f"--device {device}: this torch ({torch.__version__}) cannot use MPS "
                         "(Apple GPUs) here; train with --device cpu")


@dataclass
class SelfPlayConfig(RunSettings, ExpertPriorStart):
    """Everything that defines a self-play run (saved as ``config.json`` in the run dir): the
    shared settings, with the defaults of this backend, and its own."""

    # the shared settings whose default (or meaning) differs here
    total_steps: int = setting(5_000_000)
    reward: str = setting(
        "points",
        "'win' (+game points / -game points at the end), 'points' (point differential per "
        "decision) or 'mix' (win + shaping x points)", ("win", "points", "mix"))
    shaping: float = setting(0.1, "weight of the point differential in reward 'mix'")
    skunks: bool = setting(True)
    learning_rate: float = setting(1e-3)
    minibatch_size: int = setting(1024)
    ent_coef: float = setting(0.02)
    net_arch: list[int] = setting([128, 128])
    snapshot_every: int = setting(200_000)
    checkpoint_every: int = setting(200_000)
    # hardware
    threads: int = setting(1, "torch threads")
    engine_threads: int = setting(
        1,
        "numba threads of the batched engine (1: on a busy machine more threads spin and slow it "
        "down many times)")
    device: str = setting("cpu", "'cpu', 'cuda', 'cuda:N' or 'mps'")
    workers: int = setting(
        1,
        "processes that play and learn together, each its share of the games and of every "
        "minibatch, their gradients summed (one a core; the same results for the same number)")
    # rollouts
    n_games: int = setting(256, "games stepped together")
    n_steps: int = setting(
        32,
        "engine steps per rollout (one decision per game each)")
    # the method
    algorithm: str = setting(
        "ppo",
        "'ppo' (clipped PPO, actor and critic) or 'dmc' (Deep Monte-Carlo, value-based: the "
        "network's 52 outputs are each card's Q-value, played epsilon-greedily and regressed to "
        "the seat's discounted return; policy 'mlp' or 'cards')", ALGORITHMS)
    epsilon: float = setting(0.05, "dmc: share of the learner's decisions made at random")
    # PPO
    anneal_lr: bool = setting(False, "decay the learning rate linearly to 0 at total_steps")
    max_grad_norm: float = setting(0.5, "gradient norm clip")
    target_kl: float = setting(
        0.0,
        "stop a PPO update early once the policy moved this far (KL; 0: no limit)")
    # network
    policy: str = setting(
        "cards",
        "network: 'mlp', 'cards' (per-card head), 'keeps' (per-card head and a throw head that "
        "scores every way to lay away cards) or 'expert-prior' (beta x the expert's value of "
        "each legal card + a card MLP on its features)", POLICIES)
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
    pool_size: int = setting(8, "snapshots kept in the pool")
    pool_priority: float = setting(
        2.0,
        "snapshot j drawn with weight (1 - learner's win rate against j) ** this")
    # bookkeeping
    time_limit: float = setting(
        0.0,
        "stop (checkpointed, policy exported) once the run has trained this many seconds, "
        "over all its sessions (a resumed run trains what is left); 0: no limit")
    eval_every: int = setting(400_000, "steps between evaluations")
    search_table_hands: int = setting(
        0,
        "after training, solve the win-probability table the search over the network's own "
        "models reads (winprob.npz in the run folder, for search:ppo:RUN/policy.safetensors"
        "?models=own&table=RUN/winprob.npz) from this many hands of the policy against "
        "itself (2 players; at least 8); 0: none")

    KIND = "self-play"
    #: settings that may change when a run is resumed
    RESUMABLE = ("total_steps", "threads", "engine_threads", "device", "checkpoint_every",
                 "eval_every", "eval_games", "time_limit", "search_table_hands")
    REMOVED = {
        "feature_workers": "the expert-prior card features are compiled now (a few microseconds "
                           "a row), so there is no process pool to size",
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", str(self.device)):
            raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got "
                             f"{self.device!r}")
        if self.init_policy and self.policy != "expert-prior":
            raise ValueError(f"init_policy needs policy 'expert-prior', got {self.policy!r}")
        if self.throw_values and self.policy != "keeps":
            raise ValueError(f"throw_values needs policy 'keeps', got {self.policy!r}")
        if self.expert_share and self.policy != "expert-prior":
            raise ValueError(f"expert_share needs policy 'expert-prior' (the expert's card is "
                             f"read from its features), got {self.policy!r}")
        if self.algorithm == "dmc":
            if self.policy not in ("mlp", "cards"):
                raise ValueError(f"algorithm 'dmc' needs policy 'mlp' or 'cards' (one output a "
                                 f"card, its Q-value), got {self.policy!r}")
            if self.privileged_critic:
                raise ValueError("algorithm 'dmc' has no critic: privileged_critic needs 'ppo'")
        if self.workers > 1:
            self._check_workers()
        if self.search_table_hands:
            self._check_search_table_hands()
        self.check_rollout_size("n_games", "n_steps")

    def _check_workers(self) -> None:
        if self.algorithm != "ppo":
            raise ValueError(f"workers above 1 train algorithm 'ppo' only, got "
                             f"{self.algorithm!r} with workers {self.workers}")
        if self.n_games < self.workers:
            raise ValueError(f"each of the {self.workers} workers plays its share of n_games "
                             f"({self.n_games}): n_games must be at least workers")

    def _check_search_table_hands(self) -> None:
        from agents.winprob import MIN_HANDS  # only where asked: numpy and the engine

        if self.search_table_hands < MIN_HANDS or self.num_players != 2:
            raise ValueError(f"search_table_hands must be 0 or at least {MIN_HANDS} (four "
                             f"quarters for its error), with 2 players: the table is of 2-player "
                             f"games; got {self.search_table_hands} with {self.num_players} "
                             f"players")

    def fixed_settings(self) -> dict[str, Any]:
        fixed = super().fixed_settings()
        if not fixed["throw_values"]:   # inert: runs made before them keep their fingerprint
            for name in ("throw_values", "value_arch", "value_beta", "value_lr"):
                fixed.pop(name)
        if fixed["algorithm"] == "ppo":   # likewise
            for name in ("algorithm", "epsilon"):
                fixed.pop(name)
        if fixed["workers"] == 1:   # likewise
            fixed.pop("workers")
        return fixed

    def policy_fields(self) -> dict[str, Any]:
        """The self-play actor: ``arch`` is how the file is read (``head`` the network that
        wrote it: ``cards`` is read as an ``mlp``)."""
        arch = {"keeps": "keeps", "expert-prior": "expert-prior"}.get(self.policy, "mlp")
        return {"arch": arch, "activation": "relu", "net_arch": self.net_arch,
                "head": self.policy, "trainer": TRAINER}


