"""Self-play masked PPO on the batched engine, CleanRL style: one file that reads top to bottom.

1. **Settings** (:class:`SelfPlayConfig`, saved as ``config.json`` in the run folder).
2. **The network** (:class:`ActorCritic`): an actor MLP on the 601-entry observation giving 52
   logits, either through a plain linear head (``policy="mlp"``) or a per-card head
   (``policy="cards"``: logit of card c = query(h) . embedding(c) + bias(c), the embedding the
   sum of a rank, a suit and a card vector, so what is learnt about a rank is shared by its
   four suits), and a separate critic MLP. Both heads export as the ``mlp`` policy file of
   :mod:`agents.ppo` (the per-card head folds into a 52-row action layer), so ``ppo:PATH``
   plays the result with numpy. ``policy="keeps"`` adds a *throw head* for the discard
   (:func:`throw_logits`): every way to lay away cards is scored by a small MLP from the rank
   and suit counts of the cards it keeps and throws plus a projection of the actor's last
   hidden layer, and the two discard decisions draw from that one distribution over throws (a
   card's logit is the log-sum-exp of the scores of the throws that hold it); it exports as a
   ``keeps`` policy file. With ``privileged_critic`` the critic also reads what the seat
   cannot see (:meth:`cribenv.vector.VectorGame.hidden`); the actor never does.
3. **Seats as rows** (:class:`SeatRollout`): every seat of every game is a row; each row's
   trajectory is its own decisions. The points (and the final result) earned between two
   decisions of a seat, on anyone's turn, are credited to its earlier decision; the game's end
   closes every seat's last decision. GAE runs along each row's own chain of decisions.
4. **Opponents** (:class:`SnapshotPool`): in a share ``self_play_share`` of the games the
   learner plays every seat; in the others it plays one side and a frozen snapshot of itself,
   drawn from a pool, plays the rest (sampling rule in the class). With the ``expert-prior``
   network a share ``expert_share`` of those games is played against the expert bot instead
   (its card is the one of highest prior: :func:`expert_cards`).
5. **The loop** (:func:`train`): collect ``n_steps`` steps of ``n_games`` games, compute the
   advantages, run the clipped PPO update, log, evaluate, snapshot, checkpoint.

A rollout ends mid-game; a seat's last decision of the rollout does not know its reward yet.
It is carried into the next rollout and trained there, with the probability it was sampled
with (so its importance ratio is exact; it was drawn by the policy of one update earlier). The
advantage of the decision before it bootstraps from the value computed at it.

Counting: ``total_steps`` and the steps/s count learner decisions (the samples PPO trains on);
the engine also plays the snapshots' decisions, reported as ``engine_steps``.
"""

from __future__ import annotations

import csv
import math
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from cribenv.game import Rules
from cribenv.observation import OBS_SIZE
from cribenv.vector import HIDDEN_SIZE, VectorGame
from train.checkpoints import (
    CheckpointError,
    describe_resume,
    read_checkpoint,
    run_settings,
    save_checkpoint,
    truncate_log,
)
from train.config import RunSettings
from train.evaluation import append_csv, evaluation_row
from train.learning_curve import numeric_rows, plot_learning_curve, plot_win_rates

TRAINER = "selfplay"   # named in checkpoints (the SB3 trainer's have another layout)
NUM_CARDS = 52
POLICIES = ("mlp", "cards", "keeps", "expert-prior")
EXPERT = "expert"      # the opponent name of the expert bot (expert_share)


# ------------------------------------------------------------------------------------------
# 1. Settings
# ------------------------------------------------------------------------------------------

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
        import re

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


# ------------------------------------------------------------------------------------------
# 2. The network
# ------------------------------------------------------------------------------------------

def _torch():
    import torch

    return torch


def _mlp(sizes: list[int]):
    nn = _torch().nn
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [_init(nn.Linear(a, b), math.sqrt(2)), nn.ReLU()]
    return nn.Sequential(*layers)


def _init(layer, std: float):
    nn = _torch().nn
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer


@dataclass(frozen=True)
class SparseRows:
    """A batch of observations as their non-zero entries, for the update's first layers (an
    observation has about 45 non-zero entries of 601): row ``i`` is the sum over ``k`` of
    ``val[i, k]`` times the unit vector ``idx[i, k]``; rows with fewer entries are padded with
    index 0 and value 0. ``dense`` keeps the rows themselves where a head reads them (the throw
    head); None otherwise."""

    idx: Any
    val: Any
    dense: Any = None

    def __getitem__(self, rows) -> SparseRows:
        """The rows ``rows`` (a slice or an index tensor) of every part."""
        return SparseRows(self.idx[rows], self.val[rows],
                          None if self.dense is None else self.dense[rows])


def sparse_rows(obs, keep_dense: bool = False) -> SparseRows:
    """``obs`` (a float tensor ``(n, OBS_SIZE)``) as :class:`SparseRows`.

    >>> import torch
    >>> s = sparse_rows(torch.tensor([[0.0, 2.0, 0.0, 1.0], [0.5, 0.0, 0.0, 0.0]]))
    >>> s.idx.tolist(), s.val.tolist()
    ([[1, 3], [0, 0]], [[2.0, 1.0], [0.5, 0.0]])
    """
    torch = _torch()
    nz = obs != 0
    count = nz.sum(1)
    rows, cols = nz.nonzero(as_tuple=True)          # row-major: each row's columns ascending
    pos = torch.arange(len(rows), device=obs.device) - (count.cumsum(0) - count)[rows]
    k = max(1, int(count.max())) if len(count) else 1
    idx = torch.zeros((len(obs), k), dtype=torch.int64, device=obs.device)
    val = torch.zeros((len(obs), k), dtype=obs.dtype, device=obs.device)
    idx[rows, pos] = cols
    val[rows, pos] = obs[rows, cols]
    return SparseRows(idx, val, obs if keep_dense else None)


def _sparse_linear():
    """``x @ weight`` for ``x`` given as (idx, val) rows (see :class:`SparseRows`), ``weight``
    ``(in, out)``: an ``embedding_bag`` sum forward; the weight's gradient as a sparse
    ``x.T @ grad`` (``embedding_bag``'s own backward is slower on CPU than the dense layer)."""
    torch = _torch()

    class SparseLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, idx, val, weight):
            ctx.save_for_backward(idx, val)
            ctx.size_in = weight.shape[0]
            return torch.nn.functional.embedding_bag(idx, weight, per_sample_weights=val,
                                                     mode="sum")

        @staticmethod
        def backward(ctx, grad):
            idx, val = ctx.saved_tensors
            n, k = idx.shape
            rows = torch.arange(n, device=idx.device).repeat_interleave(k)
            xt = torch.sparse_coo_tensor(torch.stack([idx.reshape(-1), rows]), val.reshape(-1),
                                         (ctx.size_in, n), check_invariants=False)
            return None, None, torch.sparse.mm(xt, grad.contiguous())

    return SparseLinear.apply


@dataclass(frozen=True)
class CardRows:
    """The ``expert-prior`` network's input beside the observation: each row's legal cards
    (``ids`` ``(n, slots)``, -1 in unused slots), the expert's value of each (``prior``) and
    their feature rows (``feats`` ``(n, slots, NUM_FEATURES)``), as
    :func:`agents.features.legal_features` computes them (numpy or torch)."""

    ids: Any
    prior: Any
    feats: Any

    COLUMNS = ("card_ids", "prior", "feats")   # their names in a rollout's storage

    @classmethod
    def of(cls, obs: np.ndarray, mask: np.ndarray, workers=None, parts: int = 1) -> CardRows:
        """The legal cards of observation rows ``obs`` with masks ``mask``; ``workers``: a
        process pool sharing the rows in ``parts`` parts (the features cost ~0.2 ms a row in
        Python)."""
        from agents.features import legal_features

        if workers is None:
            return cls(*legal_features(obs, mask))
        split = np.array_split(np.arange(len(obs)), parts)
        done = [workers.submit(legal_features, obs[p], mask[p]) for p in split if len(p)]
        return cls(*(np.concatenate(x) for x in zip(*(f.result() for f in done))))

    def __getitem__(self, rows) -> CardRows:
        return CardRows(self.ids[rows], self.prior[rows], self.feats[rows])

    def columns(self) -> dict[str, Any]:
        """The parts as named columns (a rollout's storage)."""
        return dict(zip(self.COLUMNS, (self.ids, self.prior, self.feats)))

    def to_torch(self, device) -> CardRows:
        torch = _torch()
        return CardRows(*(torch.from_numpy(np.ascontiguousarray(x)).to(device)
                          for x in (self.ids, self.prior, self.feats)))


def card_logits(cards: CardRows, score_net, beta):
    """52 logits from the per-card scores ``beta * prior + score_net(feats)`` of each row's
    legal cards (torch); cards not in the row get 0 (the mask removes them)."""
    torch = _torch()
    score = beta * cards.prior + score_net(cards.feats).squeeze(-1)          # (n, slots)
    slot_card = torch.where(cards.ids >= 0, cards.ids, NUM_CARDS)           # unused: column 52
    out = torch.zeros((len(score), NUM_CARDS + 1), dtype=score.dtype, device=score.device)
    return out.scatter(1, slot_card, score)[:, :NUM_CARDS]


def critic_inputs(config: SelfPlayConfig) -> int:
    """Entries of the critic's input: the observation, then with ``privileged_critic`` what
    the seat cannot see (:meth:`cribenv.vector.VectorGame.hidden`)."""
    return OBS_SIZE + (HIDDEN_SIZE if config.privileged_critic else 0)


def make_network(config: SelfPlayConfig):
    """The actor-critic of ``config`` (a ``torch.nn.Module``)."""
    torch = _torch()
    nn = torch.nn
    sparse_linear = _sparse_linear()
    if config.policy == "expert-prior":
        return _prior_network(config, sparse_linear)

    class ActorCritic(nn.Module):
        """Actor: MLP -> 52 logits (linear or per-card head). Critic: its own MLP -> 1."""

        def __init__(self) -> None:
            super().__init__()
            sizes = [OBS_SIZE, *config.net_arch]
            width = sizes[-1]
            self.actor = _mlp(sizes)
            self.hidden_in = critic_inputs(config) - OBS_SIZE
            self.per_card = config.policy in ("cards", "keeps")
            self.keeps = config.policy == "keeps"
            if self.keeps:
                self.keep_ctx = _init(nn.Linear(width, config.keep_ctx), 1.0)
                self.keep_net = throw_net(config.keep_arch, config.keep_ctx)
                self.tables = throw_tables_torch()
            if self.per_card:
                d = config.card_dim
                self.query = _init(nn.Linear(width, d), 0.01)
                self.rank = nn.Parameter(torch.randn(13, d) / math.sqrt(d))
                self.suit = nn.Parameter(torch.randn(4, d) / math.sqrt(d))
                self.card = nn.Parameter(torch.zeros(NUM_CARDS, d))
                self.card_bias = nn.Parameter(torch.zeros(NUM_CARDS))
            else:
                self.head = _init(nn.Linear(width, NUM_CARDS), 0.01)
            self.critic = nn.Sequential(_mlp([critic_inputs(config), *config.net_arch]),
                                        _init(nn.Linear(width, 1), 1.0))

        def action_layer(self):
            """(weight (52, width), bias (52,)) of the actor's last layer."""
            if not self.per_card:
                return self.head.weight, self.head.bias
            emb = self.rank.repeat_interleave(4, 0) + self.suit.repeat(13, 1) + self.card
            return emb @ self.query.weight, emb @ self.query.bias + self.card_bias

        def logits(self, obs, layer=None, cards=None):
            """Logits of ``obs``; ``layer``: the action layer when the caller has it already
            (the rollouts compute it once per collection). ``cards``: unused (the
            ``expert-prior`` network's input)."""
            return self._head(obs, self.actor(obs), layer)

        def _head(self, obs, h, layer=None):
            """The logits from the actor's last hidden layer ``h`` (the throw head reads the
            observation rows ``obs`` too)."""
            w, b = self.action_layer() if layer is None else layer
            out = h @ w.T + b
            if self.keeps:
                out = throw_logits(obs, h, out, self.keep_ctx, self.keep_net, self.tables)
            return out

        def value(self, obs):
            """The critic's value of its input rows (:func:`critic_inputs` wide)."""
            return self.critic(obs).squeeze(-1)

        def logits_and_value(self, x: SparseRows):
            """``(logits, value)`` of the critic's input rows given as :class:`SparseRows`
            (the observation first, then with ``privileged_critic`` the hidden cards, which
            the actor does not read): the same numbers as ``logits`` and ``value`` of the
            dense rows (up to float rounding), the actor's and critic's first layers computed
            together from the non-zero entries."""
            a0, c0 = self.actor[0], self.critic[0][0]
            width = a0.out_features
            aw = a0.weight
            if self.hidden_in:
                aw = torch.cat([aw, aw.new_zeros(width, self.hidden_in)], 1)
            w = torch.cat([aw, c0.weight]).t().contiguous()     # (critic inputs, 2 width)
            z = sparse_linear(x.idx, x.val, w) + torch.cat([a0.bias, c0.bias])
            h = self.actor[1:](z[:, :width])
            v = self.critic[1:](self.critic[0][1:](z[:, width:])).squeeze(-1)
            return self._head(None if x.dense is None else x.dense[:, :OBS_SIZE], h), v

    return ActorCritic()


def _prior_network(config: SelfPlayConfig, sparse_linear):
    """The ``expert-prior`` actor-critic: actor :func:`card_logits` (one small MLP shared by
    every card; its last layer starts at zero, so the untrained policy is the softmax of
    ``beta`` x the expert's values), critic an MLP on the observation."""
    torch = _torch()
    nn = torch.nn

    class PriorActorCritic(nn.Module):
        keeps = False

        def __init__(self) -> None:
            super().__init__()
            from agents.features import NUM_FEATURES

            out = nn.Linear(config.card_arch[-1], 1)
            nn.init.zeros_(out.weight)
            nn.init.zeros_(out.bias)
            self.card_net = nn.Sequential(_mlp([NUM_FEATURES, *config.card_arch]), out)
            self.log_beta = nn.Parameter(torch.tensor(math.log(config.beta)))
            sizes = [critic_inputs(config), *config.net_arch]
            self.critic = nn.Sequential(_mlp(sizes), _init(nn.Linear(sizes[-1], 1), 1.0))

        def action_layer(self):
            return None

        def logits(self, obs, layer=None, cards: CardRows | None = None):
            return card_logits(cards, self.card_net, self.log_beta.exp())

        def value(self, obs):
            return self.critic(obs).squeeze(-1)

        def logits_and_value(self, x: SparseRows, cards: CardRows | None = None):
            first = self.critic[0][0]
            z = sparse_linear(x.idx, x.val, first.weight.t().contiguous()) + first.bias
            v = self.critic[1:](self.critic[0][1:](z)).squeeze(-1)
            return self.logits(None, cards=cards), v

        def load_policy_file(self, path: str | Path) -> None:
            """Start from an ``expert-prior`` policy file's card network and beta."""
            linears = [m for m in self.card_net.modules() if isinstance(m, nn.Linear)]
            load_card_network(linears, self.log_beta, path, config.card_arch)

    return PriorActorCritic()


def card_network_arrays(linears: list[Any], log_beta) -> dict[str, np.ndarray]:
    """The card network (torch ``linears``) and beta (``exp(log_beta)``) as the tensors of an
    ``expert-prior`` policy file; :func:`load_card_network` reads them back."""
    out: dict[str, np.ndarray] = {}
    for i, m in enumerate(linears):
        out[f"card.{i}.weight"] = m.weight.detach().cpu().numpy().copy()
        out[f"card.{i}.bias"] = m.bias.detach().cpu().numpy().copy()
    out["beta"] = log_beta.detach().exp().cpu().numpy().reshape(1).copy()
    return out


def load_card_network(linears: list[Any], log_beta, path: str | Path,
                      card_arch: list[int]) -> None:
    """Copy the card network and beta of the ``expert-prior`` policy file ``path``
    (``shipped``: the shipped agent) into torch ``linears`` and the parameter ``log_beta``;
    :class:`agents.ppo.PolicyFileError` names a file of another network or other layer sizes."""
    from agents.ppo import ExpertPriorActor, PolicyFileError, load_policy, policy_path

    torch = _torch()
    loaded = load_policy(policy_path(path))
    if not isinstance(loaded, ExpertPriorActor):
        raise PolicyFileError(f"{path} is not an expert-prior policy file")
    shapes = [tuple(reversed(wt.shape)) for wt, _ in loaded._forward]
    if shapes != [tuple(m.weight.shape) for m in linears]:
        raise PolicyFileError(f"{path} has card layers {shapes}, which do not match card_arch "
                              f"{card_arch}")
    with torch.no_grad():
        for m, (wt, b) in zip(linears, loaded._forward):
            m.weight.copy_(torch.from_numpy(wt.T.copy()))
            m.bias.copy_(torch.from_numpy(b))
        log_beta.fill_(math.log(loaded.beta))


def throw_net(sizes: list[int], ctx: int):
    """The throw head's scorer: (34 counts + ``ctx``) -> hidden ``sizes`` -> 1 score."""
    from agents.ppo import THROW_FEATURES

    nn = _torch().nn
    return nn.Sequential(_mlp([THROW_FEATURES + ctx, *sizes]), _init(nn.Linear(sizes[-1], 1),
                                                                     0.01))


def throw_tables_torch() -> dict[int, tuple[Any, Any, Any]]:
    """:func:`agents.ppo.throw_tables` for 5 and 6 cards held, as torch tensors."""
    from agents.ppo import throw_tables

    torch = _torch()
    return {n: tuple(torch.from_numpy(t) for t in throw_tables(n)) for n in (5, 6)}


def throw_logits(obs, h, logits, ctx, score_net, tables):
    """``logits`` with the rows of seats to discard replaced by the throw head's: each way to
    lay away cards is scored from the rank and suit counts of the cards it keeps and throws and
    ``ctx(h)``; a held card's logit is the log-sum-exp of the scores of the throws (holding the
    cards already laid away) it is in. The torch twin of :class:`agents.ppo.KeepsActor`."""
    from agents.ppo import PHASE_DISCARD

    torch = _torch()
    one_hot = torch.nn.functional.one_hot

    def counts(ids):
        return torch.cat([one_hot(ids >> 2, 13).sum(-2), one_hot(ids & 3, 4).sum(-2)], -1)

    layers = [m for m in score_net.modules() if not isinstance(m, torch.nn.Sequential)]
    own = (obs[:, :52] + obs[:, 52:104]) > 0
    n_own = own.sum(1)
    discard = obs[:, PHASE_DISCARD] > 0
    out = logits.clone()
    for n, (thrown, kept, member) in tables.items():
        rows = torch.nonzero(discard & (n_own == n)).squeeze(1)
        if rows.numel() == 0:
            continue
        member, thrown, kept = (t.to(obs.device) for t in (member, thrown, kept))
        cards = torch.nonzero(own[rows])[:, 1].view(-1, n)
        feats = torch.cat([counts(cards[:, kept]), counts(cards[:, thrown])], -1).float()
        # the scorer's first layer on (feats, ctx): the ctx part is the same for every
        # throw of a row, so it is computed once a row
        first, *rest = layers
        w_feats, w_ctx = first.weight.split([feats.shape[-1], first.in_features
                                             - feats.shape[-1]], 1)
        per_row = ctx(h[rows]) @ w_ctx.T + first.bias                       # (B, hidden)
        z = feats @ w_feats.T + per_row[:, None, :]
        for layer in rest:
            z = layer(z)
        score = z.squeeze(-1)                                                # (B, T)
        laid = obs[rows[:, None], 52 + cards] > 0                            # (B, n)
        valid = laid[:, thrown].sum(-1) == laid.sum(-1, keepdim=True)        # (B, T)
        s = torch.where(valid[:, None, :] & member[None], score[:, None, :],
                        torch.full_like(score[:, None, :], -1e9))
        out[rows[:, None], cards] = torch.logsumexp(s, -1)
    return out


def masked_log_probs(logits, mask):
    """Log-probabilities of the legal cards (illegal ones get -inf-like values, probability 0)."""
    torch = _torch()
    return torch.log_softmax(logits.masked_fill(~mask, -1e9), dim=-1)


def entropy(logp, mask):
    """Entropy of each row's distribution over its legal cards. The illegal entries are set to
    0 before ``exp``: torch's vectorised ``exp`` is ~12x slower on inputs below float32's
    range (the -1e9 of :func:`masked_log_probs`), and most of a row's 52 entries are illegal.

    >>> import torch
    >>> mask = torch.tensor([[True, True, False]])
    >>> logp = masked_log_probs(torch.zeros(1, 3), mask)
    >>> round(float(entropy(logp, mask)), 4)   # log 2
    0.6931
    """
    lp = logp.masked_fill(~mask, 0.0)
    return -(lp.exp() * lp).sum(-1)


def export_arrays(net) -> dict[str, np.ndarray]:
    """The actor as the tensors of an :mod:`agents.ppo` ``mlp``, ``keeps`` or
    ``expert-prior`` policy file."""
    torch = _torch()
    out: dict[str, np.ndarray] = {}
    if hasattr(net, "card_net"):
        return card_network_arrays([m for m in net.card_net.modules()
                                    if isinstance(m, torch.nn.Linear)], net.log_beta)
    linears = [m for m in net.actor if isinstance(m, torch.nn.Linear)]

    def put(name: str, w, b) -> None:
        out[f"{name}.weight"] = w.detach().cpu().numpy().copy()
        out[f"{name}.bias"] = b.detach().cpu().numpy().copy()

    with torch.no_grad():
        for i, m in enumerate(linears):
            put(f"pi.{i}", m.weight, m.bias)
        put("action", *net.action_layer())
        if getattr(net, "keeps", False):
            put("keep.ctx", net.keep_ctx.weight, net.keep_ctx.bias)
            keep = [m for m in net.keep_net.modules() if isinstance(m, torch.nn.Linear)]
            for i, m in enumerate(keep):
                put(f"keep.{i}", m.weight, m.bias)
    return out


def export_policy(net, path: str | Path, config: SelfPlayConfig, steps: int,
                  extra: dict[str, Any] | None = None) -> Path:
    """Write the actor as a weights-only policy file (play it with ``ppo:PATH``)."""
    from agents.features import FEATURES_VERSION
    from agents.ppo import save_tensors

    arch = {"keeps": "keeps", "expert-prior": "expert-prior"}.get(config.policy, "mlp")
    meta = {"arch": arch, "activation": "relu", "net_arch": config.net_arch,
            "head": config.policy, "steps": steps,
            "num_players": config.num_players, "target": config.target, "trainer": "selfplay",
            "train_config": config.to_dict()}
    if arch == "expert-prior":
        meta.update(card_arch=config.card_arch, features_version=FEATURES_VERSION)
    meta.update(extra or {})
    return save_tensors(path, export_arrays(net), meta)


# ------------------------------------------------------------------------------------------
# 3. Seats as rows: credit assignment and GAE
# ------------------------------------------------------------------------------------------

class SeatRollout:
    """Decisions of many rows (row = game x seat), each row's decisions chained in time.

    ``decide`` records one decision for each of some rows (at most one per row per call) and
    closes the row's previous decision: its reward is what the row earned since, its next value
    the value of the new one. ``earn`` adds rewards to rows, ``end`` closes rows whose game is
    over (terminal: no bootstrap). ``take`` returns the closed decisions with their advantages
    and keeps the open ones (each row's latest) for the next rollout.

    >>> r = SeatRollout(rows=2, obs_size=1)
    >>> _ = r.decide(np.array([0]), np.zeros((1, 1)), np.ones((1, 52), bool),
    ...              np.array([3]), np.array([-1.0]), np.array([0.5]))
    >>> r.earn(np.array([0, 1]), np.array([2.0, -2.0]))
    >>> r.end(np.array([0, 1]))
    >>> batch = r.take(gamma=1.0, lam=1.0)
    >>> batch["returns"].tolist(), batch["advantages"].tolist()
    ([2.0], [1.5])
    """

    def __init__(self, rows: int, obs_size: int = OBS_SIZE) -> None:
        self.rows = rows
        self.obs_size = obs_size
        self.open = np.full(rows, -1, np.int64)      # index of the row's open decision
        self.earned = np.zeros(rows, np.float64)     # reward since the row's open decision
        self._reset_storage()

    def _reset_storage(self) -> None:
        self.blocks: list[dict[str, np.ndarray]] = []   # one per decide() call, in time order
        self.size = 0
        # per decision, set when it is closed: reward, next value, next decision's index (-1:
        # none), terminal
        self.closed = np.zeros(0, bool)
        self.reward = np.zeros(0)
        self.next_value = np.zeros(0)
        self.nxt = np.zeros(0, np.int64)
        self.done = np.zeros(0, bool)

    def _grow(self, size: int) -> None:
        if size <= len(self.closed):
            return
        cap = max(size, 2 * len(self.closed), 1024)
        for name in ("closed", "reward", "next_value", "nxt", "done"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)

    def decide(self, rows: np.ndarray, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray,
               logprobs: np.ndarray, values: np.ndarray,
               extra: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """Record one decision of each row in ``rows``; returns their indices. ``extra``: more
        columns, one entry per decision (the same names at every call)."""
        n = len(rows)
        idx = np.arange(self.size, self.size + n)
        self.blocks.append({"row": rows.astype(np.int64), "obs": obs, "mask": mask,
                            "action": actions, "logprob": logprobs, "value": values,
                            **(extra or {})})
        self.size += n
        self._grow(self.size)
        prev = self.open[rows]
        has = prev >= 0
        self._close(prev[has], self.earned[rows[has]], values[has], idx[has], done=False)
        self.earned[rows] = 0.0
        self.open[rows] = idx
        return idx

    def earn(self, rows: np.ndarray, rewards: np.ndarray) -> None:
        """Add rewards earned now by ``rows`` (credited to each row's open decision)."""
        np.add.at(self.earned, rows, rewards)

    def end(self, rows: np.ndarray) -> None:
        """The games of ``rows`` are over: close their open decisions as terminal."""
        prev = self.open[rows]
        has = prev >= 0
        n = int(has.sum())
        self._close(prev[has], self.earned[rows[has]], np.zeros(n), np.full(n, -1), done=True)
        self.earned[rows] = 0.0
        self.open[rows] = -1

    def _close(self, idx, reward, next_value, nxt, done: bool) -> None:
        self.closed[idx] = True
        self.reward[idx] = reward
        self.next_value[idx] = next_value
        self.nxt[idx] = nxt
        self.done[idx] = done

    def take(self, gamma: float, lam: float) -> dict[str, np.ndarray]:
        """The closed decisions with ``advantages`` and ``returns`` (GAE along each row)."""
        n = self.size
        closed, nxt = self.closed[:n], self.nxt[:n]
        names = (self.blocks[0] if self.blocks
                 else ("row", "obs", "mask", "action", "logprob", "value"))
        cols = {name: (np.concatenate([b[name] for b in self.blocks]) if self.blocks
                       else np.zeros(0)) for name in names}
        value = cols["value"].astype(np.float64)
        delta = self.reward[:n] + gamma * self.next_value[:n] * ~self.done[:n] - value
        # a decision's successor is in a later block, so one backward pass over the blocks
        # suffices; an open successor (the rollout's end) adds nothing beyond its value
        adv = np.zeros(n + 1)                     # adv[-1] = adv[n] = 0: "no successor"
        carry_ok = np.zeros(n + 1, bool)
        carry_ok[:n] = closed
        stop = n
        for block in reversed(self.blocks):
            lo = stop - len(block["row"])
            j = nxt[lo:stop]
            j = np.where(j >= 0, j, n)
            here = delta[lo:stop] + gamma * lam * np.where(carry_ok[j], adv[j], 0.0)
            adv[lo:stop] = np.where(closed[lo:stop], here, 0.0)
            stop = lo
        adv = adv[:n]
        batch = {k: v[closed] for k, v in cols.items()}
        batch["advantages"] = adv[closed]
        batch["returns"] = adv[closed] + value[closed]
        # keep the open decisions (renumbered) for the next rollout
        keep = np.flatnonzero(~closed)
        old_open = self.open.copy()
        self._reset_storage()
        if len(keep):
            self.blocks.append({k: v[keep] for k, v in cols.items()})
            self.size = len(keep)
            self._grow(self.size)
        remap = np.full(n + 1, -1, np.int64)
        remap[keep] = np.arange(len(keep))
        self.open = np.where(old_open >= 0, remap[old_open], -1)
        return batch

    def carried(self) -> int:
        return self.size


# ------------------------------------------------------------------------------------------
# 4. Opponents: a pool of frozen snapshots
# ------------------------------------------------------------------------------------------

class SnapshotPool:
    """Frozen snapshots of the learner (policy files played with numpy), drawn once per game.

    Sampling rule (prioritised fictitious self-play, "hard" weighting): snapshot ``j`` is drawn
    with probability proportional to ``(1 - w_j) ** priority``, where ``w_j = (wins + 1) /
    (games + 2)`` is the learner's win rate against it so far (a new snapshot starts at 1/2).
    The snapshots the learner still loses to are played most; the newest ``size`` are kept.

        >>> pool = SnapshotPool(size=2, priority=2.0)
        >>> pool.names, pool.wins, pool.games = ["a", "b"], [9.0, 0.0], [10.0, 0.0]
        >>> [round(float(p), 3) for p in pool.probabilities()]
        [0.1, 0.9]
    """

    def __init__(self, size: int, priority: float) -> None:
        self.size = size
        self.priority = priority
        self.names: list[str] = []
        self.policies: list[Any] = []
        self.wins: list[float] = []
        self.games: list[float] = []

    def add(self, path: Path, wins: float = 0.0, games: float = 0.0) -> None:
        self.names.append(path.name)
        self.policies.append(frozen_actor(path))
        self.wins.append(wins)
        self.games.append(games)
        while len(self.names) > self.size:
            for column in (self.names, self.policies, self.wins, self.games):
                column.pop(0)

    def probabilities(self) -> np.ndarray:
        w = (np.array(self.wins) + 1) / (np.array(self.games) + 2)
        weight = (1 - w) ** self.priority + 1e-6
        return weight / weight.sum()

    def sample(self, rng: np.random.Generator, n: int) -> list[str]:
        return [self.names[i] for i in rng.choice(len(self.names), n, p=self.probabilities())]

    def record(self, name: str, learner_won: float) -> None:
        if name in self.names:
            j = self.names.index(name)
            self.wins[j] += learner_won
            self.games[j] += 1

    def policy(self, name: str):
        return self.policies[self.names.index(name)]

    def state(self) -> list[dict[str, Any]]:
        return [{"name": n, "wins": w, "games": g}
                for n, w, g in zip(self.names, self.wins, self.games)]


def frozen_actor(path: Path, device: str = "cpu"):
    """The actor of an ``mlp``, ``keeps`` or ``expert-prior`` policy file as a torch function:
    observations (numpy) and, for ``expert-prior``, their :class:`CardRows` -> logits.

    (Torch rather than the numpy :class:`agents.ppo.MlpActor`: same numbers, and it keeps to
    the trainer's torch threads, where numpy's BLAS may start threads of its own.)"""
    from agents.ppo import ExpertPriorActor, KeepsActor, load_policy

    torch = _torch()
    policy = load_policy(path)

    def linears(weights) -> list[Any]:
        layers: list[Any] = []
        for w, b in weights:
            linear = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(np.asarray(w)))
                linear.bias.copy_(torch.from_numpy(np.asarray(b)))
            layers += [linear, torch.nn.ReLU()]
        return layers[:-1]

    if isinstance(policy, ExpertPriorActor):
        score_net = torch.nn.Sequential(*linears([(wt.T, b) for wt, b in policy._forward]))
        score_net.to(device)

        def prior_logits(obs: np.ndarray, cards: CardRows) -> np.ndarray:
            with torch.no_grad():
                return card_logits(cards.to_torch(device), score_net,
                                   policy.beta).cpu().numpy()

        return prior_logits

    trunk = torch.nn.Sequential(*linears(policy.layers), torch.nn.ReLU()).to(device)
    head = linears([policy.action])[0].to(device)
    if isinstance(policy, KeepsActor):
        ctx = linears([(policy._ctx[0].T, policy._ctx[1])])[0].to(device)
        keep = torch.nn.Sequential(*linears([(w.T, b) for w, b in policy._keep])).to(device)
        tables = throw_tables_torch()

    def logits(obs: np.ndarray, cards: CardRows | None = None) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(obs).to(device)
            h = trunk(x)
            out = head(h)
            if isinstance(policy, KeepsActor):
                out = throw_logits(x, h, out, ctx, keep, tables)
            return out.cpu().numpy()

    return logits


def expert_cards(cards: CardRows) -> np.ndarray:
    """The expert bot's card in each row: the legal card of highest prior (the expert's value,
    with its tie-break; in the discard each card of its best throw has the throw's value).

    >>> expert_cards(CardRows(np.array([[3, 9, -1]]), np.array([[1.0, 2.5, 0.0]]), None))
    array([9])
    """
    prior = np.where(cards.ids >= 0, cards.prior, -np.inf)
    return cards.ids[np.arange(len(prior)), np.argmax(prior, 1)]


def sample_masked(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One legal card per row, drawn with probabilities softmax(logits) over the legal ones."""
    gumbel = -np.log(-np.log(rng.random(logits.shape)))
    return np.argmax(np.where(mask, logits + gumbel, -np.inf), axis=1)


# ------------------------------------------------------------------------------------------
# 5. The loop
# ------------------------------------------------------------------------------------------

class Games:
    """The batch of games, who plays which seat, the rewards credited to the seats' decisions,
    and automatic restarts with fresh seeds.

    The rewards are the engine's (:attr:`cribenv.vector.VectorGame.rewards`, the AEC env's
    definitions): ``win`` is +game points to the winning side and the loss shared by the other
    sides (partners share their side's), ``points`` the zero-sum point differential of each
    step, ``mix`` the win reward plus ``shaping`` x the point differential.
    """

    def __init__(self, config: SelfPlayConfig, pool: SnapshotPool, rng: np.random.Generator,
                 first_game: int) -> None:
        self.config = config
        self.rules = Rules(num_players=config.num_players, target=config.target)
        self.sides = np.array([self.rules.side_of(s) for s in range(config.num_players)])
        self.pool = pool
        self.rng = rng
        self.started = first_game
        n, seats = config.n_games, config.num_players
        self.learner = np.ones((n, seats), bool)   # seats the learner plays
        self.opponent: list[str | None] = [None] * n  # snapshot playing the other seats
        self.policies: dict[str, Any] = {}  # the snapshots in play (kept if the pool drops one)
        self.vg = VectorGame(self.rules, self._seeds(n),
                             reward="points" if config.reward == "points" else "win",
                             skunks=config.skunks,
                             shaping=config.shaping if config.reward == "mix" else 0.0)
        self.all_rows = np.arange(n * seats)
        self.assign(np.arange(n))

    def _seeds(self, k: int) -> np.ndarray:
        seeds = self.config.seed * 1_000_000_007 + self.started + np.arange(k)
        self.started += k
        return seeds

    def assign(self, idx: np.ndarray) -> None:
        """Draw who plays each seat of the games ``idx``."""
        selfplay = self.rng.random(len(idx)) < self.config.self_play_share
        expert = np.zeros(len(idx), bool)
        if self.config.expert_share:
            expert = ~selfplay & (self.rng.random(len(idx)) < self.config.expert_share)
        if not self.pool.names:
            selfplay = ~expert
        side = self.rng.integers(0, self.rules.num_sides, len(idx))
        self.learner[idx] = np.where(selfplay[:, None], True,
                                     self.sides[None, :] == side[:, None])
        names = self.pool.sample(self.rng, len(idx)) if self.pool.names else [None] * len(idx)
        for i, sp, ex, name in zip(idx.tolist(), selfplay.tolist(), expert.tolist(), names):
            self.opponent[i] = None if sp else EXPERT if ex else name
            if not sp and not ex and name not in self.policies:
                self.policies[name] = self.pool.policy(name)
        in_play = set(self.opponent)
        if EXPERT in in_play:
            self.policies[EXPERT] = None   # played from the card features (expert_cards)
        self.policies = {k: v for k, v in self.policies.items() if k in in_play}

    def step(self, actions: np.ndarray, rollout: SeatRollout) -> list[float]:
        """Play one card in every game; credit every seat's reward to its open decision; close
        the decisions of finished games and restart them. Returns the learner's results (1 won,
        0 lost) in the finished games against an opponent, as ``(opponent, result)``."""
        vg, seats = self.vg, self.config.num_players
        rewards = vg.step(actions)
        rollout.earn(self.all_rows, rewards.ravel())
        done = np.flatnonzero(vg.done)
        results: list[tuple[str, float]] = []
        if done.size:
            rollout.end((done[:, None] * seats + np.arange(seats)).ravel())
            for i, w in zip(done.tolist(), vg.winner[done].tolist()):
                name = self.opponent[i]
                if name is not None:
                    won = float(self.learner[i, np.flatnonzero(self.sides == w)[0]])
                    self.pool.record(name, won)
                    results.append((name, won))
            self.vg.reset_games(done, self._seeds(done.size))
            self.assign(done)
        return results


def train(config: SelfPlayConfig, run_dir: str | Path, resume: bool = False,
          progress: bool = True, log: Callable[[str], None] = print) -> Path:
    """Train (or resume) a self-play run in ``run_dir``; returns the final policy file."""
    torch = _torch()
    from tqdm import tqdm

    run_dir = Path(run_dir)
    torch.set_num_threads(config.threads)
    import numba

    numba.set_num_threads(min(config.engine_threads, numba.config.NUMBA_NUM_THREADS))
    config, state, ckpt = _open_run(config, run_dir, resume)
    device = torch.device(config.device)
    torch.manual_seed(config.seed)
    net = make_network(config)
    if config.init_policy and ckpt is None:
        net.load_policy_file(config.init_policy)
    net = net.to(device)
    with_cards = config.policy == "expert-prior"   # the network reads the legal cards' features
    workers = None
    if with_cards and config.feature_workers:
        import concurrent.futures as cf
        import multiprocessing

        workers = cf.ProcessPoolExecutor(config.feature_workers,
                                         mp_context=multiprocessing.get_context("spawn"))
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5,
                                 fused=True)
    gen = torch.Generator().manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    pool = SnapshotPool(config.pool_size, config.pool_priority)
    if ckpt is not None:
        _restore(ckpt, state, net, optimizer, gen, rng, pool, run_dir)
        for name in ("logs/progress.csv", "eval.csv"):  # drop what came after the checkpoint
            _truncate_csv(run_dir / name, state["step"])
        print(f"resuming: {state.pop('resume_note')}")   # once the checkpoint has loaded
        log(f"resumed {run_dir} from {ckpt.name} at step {state['step']:,}")
    games = Games(config, pool, rng, first_game=state["games_started"])
    seats = config.num_players
    rollout = SeatRollout(config.n_games * seats)
    writer = _tensorboard(run_dir)
    stop = {"stop": False}

    def on_signal(signum, frame):  # finish the current update, checkpoint, exit
        stop["stop"] = True

    old_handlers = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    bar = tqdm(total=config.total_steps, initial=min(state["step"], config.total_steps),
               unit="step", disable=not progress, desc="self-play PPO", smoothing=0.05)
    started, start_step, start_wall = time.perf_counter(), state["step"], state["wall_s"]
    game_rows = np.arange(config.n_games)
    try:
        while True:
            step = state["step"]
            if step >= state["next_snapshot"]:
                path = run_dir / "pool" / f"snap-{step:09d}.safetensors"
                export_policy(net, path, config, step)
                pool.add(path)
                state["next_snapshot"] = step + config.snapshot_every
            if config.eval_games and step >= state["next_eval"]:
                # said on the bar, so it does not look frozen while the games are played
                bar.set_postfix_str(f"evaluating against {', '.join(config.heuristics)}")
                _evaluate(net, config, run_dir, state, writer, step)
                bar.set_postfix_str(", ".join(
                    f"{h} {100 * state['evals'][-1][f'{h}_win_rate']:.0f}%"
                    for h in config.heuristics))
                state["next_eval"] = step + config.eval_every
            if step >= config.total_steps or stop["stop"]:
                break
            if config.time_limit and time.perf_counter() - started >= config.time_limit:
                break
            if step >= state["next_checkpoint"]:
                # the games restart after a checkpoint, so a resumed run continues exactly
                # as this one does
                state["next_checkpoint"] = step + config.checkpoint_every
                _checkpoint(run_dir, net, optimizer, gen, rng, pool, games, state)
                games = Games(config, pool, rng, first_game=games.started)
                rollout = SeatRollout(config.n_games * seats)

            # ---- collect: every seat of every game is a row; rewards go to each seat's
            # previous decision
            t0, cpu0 = time.perf_counter(), time.process_time()
            net.eval()
            with torch.no_grad():   # the action layer is fixed during the collection
                layer = net.action_layer()
                layer = None if layer is None else tuple(x.detach() for x in layer)
            results: list[tuple[str, float]] = []
            for _ in range(config.n_steps):
                vg = games.vg
                seat = vg.to_act
                obs, mask = vg.observe(), vg.legal_mask()
                seen = (np.concatenate([obs, vg.hidden()], 1) if config.privileged_critic
                        else obs)     # the critic's input
                rows = game_rows * seats + seat
                mine = games.learner[game_rows, seat]
                if not mask.any(1).all():
                    raise RuntimeError("the engine asked a seat to act with no legal card")
                actions = np.zeros(config.n_games, np.int64)
                cards = (CardRows.of(obs, mask, workers, config.feature_workers)
                         if with_cards else None)
                if mine.any():
                    o = torch.from_numpy(obs[mine]).to(device)
                    m = torch.from_numpy(mask[mine]).to(device)
                    my_cards = cards[mine] if with_cards else None
                    with torch.no_grad():
                        logits = net.logits(o, layer, None if my_cards is None
                                            else my_cards.to_torch(device))
                        logp = masked_log_probs(logits, m)
                        gumbel = -torch.log(-torch.log(
                            torch.rand(logp.shape, generator=gen).clamp_min(1e-20))).to(device)
                        a = torch.argmax(logp + gumbel, 1)
                        v = net.value(torch.from_numpy(seen[mine]).to(device))
                    a_np = a.cpu().numpy()
                    actions[mine] = a_np
                    rollout.decide(rows[mine], seen[mine], mask[mine], a_np,
                                   logp.gather(1, a[:, None])[:, 0].cpu().numpy(),
                                   v.cpu().numpy(),
                                   None if my_cards is None else my_cards.columns())
                theirs = np.flatnonzero(~mine)
                for name in sorted({games.opponent[i] for i in theirs.tolist()}):
                    sel = theirs[[games.opponent[i] == name for i in theirs.tolist()]]
                    if name == EXPERT:
                        actions[sel] = expert_cards(cards[sel])
                        continue
                    logits = games.policies[name](obs[sel], None if cards is None
                                                  else cards[sel])
                    actions[sel] = sample_masked(logits, mask[sel], rng)
                results += games.step(actions, rollout)
                state["engine_steps"] += config.n_games
            vs_pool = [won for name, won in results if name != EXPERT]
            vs_expert = [won for name, won in results if name == EXPERT]
            batch = rollout.take(config.gamma, config.gae_lambda)
            collect_s = time.perf_counter() - t0

            # ---- update: clipped PPO on the closed decisions
            t1 = time.perf_counter()
            if config.anneal_lr:
                for group in optimizer.param_groups:
                    group["lr"] = config.learning_rate * max(
                        0.0, 1.0 - state["step"] / config.total_steps)
            stats = _update(net, optimizer, batch, config, gen, device,
                            train_policy=state["step"] >= config.value_warmup)
            update_s = time.perf_counter() - t1
            n = len(batch["action"])
            state["step"] += n
            state["updates"] += 1
            bar.update(min(n, max(0, config.total_steps - bar.n)))   # the bar ends at its total
            stats.update(step=state["step"], engine_steps=state["engine_steps"],
                         steps_per_s=n / (collect_s + update_s),
                         collect_s=collect_s, update_s=update_s,
                         cpu_s=time.process_time() - cpu0, games_vs_pool=len(vs_pool),
                         win_vs_pool=float(np.mean(vs_pool)) if vs_pool else float("nan"),
                         **({"games_vs_expert": len(vs_expert), "win_vs_expert": float(
                             np.mean(vs_expert)) if vs_expert else float("nan")}
                            if config.expert_share else {}),
                         pool=len(pool.names), carried=rollout.carried(),
                         wall_s=start_wall + time.perf_counter() - started)
            state["wall_s"] = stats["wall_s"]
            _log_update(run_dir, writer, stats)
    finally:
        bar.close()
        if workers is not None:
            workers.shutdown(cancel_futures=True)
        for s, h in old_handlers.items():
            signal.signal(s, h)
    _checkpoint(run_dir, net, optimizer, gen, rng, pool, games, state)
    elapsed = time.perf_counter() - started
    speed = (state["step"] - start_step) / elapsed if elapsed > 0 else 0.0
    final = export_policy(net, run_dir / "policy.safetensors", config, state["step"],
                          {"steps_per_second": round(speed, 1)})
    if writer is not None:
        writer.close()
    plot_learning_curve(run_dir)
    plot_training(run_dir)
    if state["step"] == start_step:
        log(f"nothing left to train: the run is at step {state['step']:,} of "
            f"{config.total_steps:,}; policy: {final}")
    else:
        log(f"{'stopped' if stop['stop'] else 'finished'} at step {state['step']:,} "
            f"({speed:,.0f} learner steps/s); policy: {final}")
    if stop["stop"]:
        raise KeyboardInterrupt
    return final


def _update(net, optimizer, batch: dict[str, np.ndarray], config: SelfPlayConfig, gen,
            device, train_policy: bool = True) -> dict[str, float]:
    """``n_epochs`` passes of clipped PPO over shuffled minibatches of ``batch``;
    ``train_policy=False`` trains the critic only (the value warm-up)."""
    torch = _torch()
    net.train()
    names = ["obs", "mask", "action", "logprob", "advantages", "returns"]
    with_cards = "card_ids" in batch
    names += list(CardRows.COLUMNS) if with_cards else []
    t = {k: torch.from_numpy(np.ascontiguousarray(batch[k])).to(device) for k in names}
    t["obs"] = sparse_rows(t["obs"], keep_dense=net.keeps)
    t["action"] = t["action"].long()
    n = len(t["action"])
    kls, clips, pls, vls, ents = [], [], [], [], []
    for _epoch in range(config.n_epochs):
        perm = torch.randperm(n, generator=gen).to(device)
        shuffled = {k: v[perm] for k, v in t.items()}   # one gather an epoch; minibatches slice
        for start in range(0, n, config.minibatch_size):
            mb = slice(start, start + config.minibatch_size)
            obs, mask, act = shuffled["obs"][mb], shuffled["mask"][mb], shuffled["action"][mb]
            old_logp, a, ret = (shuffled[k][mb].float()
                                for k in ("logprob", "advantages", "returns"))
            if with_cards:
                mb_cards = CardRows(*(shuffled[k][mb] for k in CardRows.COLUMNS))
                logits, value = net.logits_and_value(obs, mb_cards)
            else:
                logits, value = net.logits_and_value(obs)
            logp_all = masked_log_probs(logits, mask)
            logp = logp_all.gather(1, act[:, None])[:, 0]
            log_ratio = logp - old_logp
            ratio = log_ratio.exp()
            a = (a - a.mean()) / (a.std() + 1e-8) if len(a) > 1 else a
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - config.clip_range,
                                                        1 + config.clip_range)).mean()
            v_loss = 0.5 * ((value - ret) ** 2).mean()
            ent = entropy(logp_all, mask).mean()
            loss = config.vf_coef * v_loss
            if train_policy:
                loss = loss + pg - config.ent_coef * ent
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                kls.append(((ratio - 1) - log_ratio).mean().item())
                clips.append(((ratio - 1).abs() > config.clip_range).float().mean().item())
            pls.append(pg.item())
            vls.append(v_loss.item())
            ents.append(ent.item())
        if config.target_kl and np.mean(kls[-max(1, n // config.minibatch_size):]) > \
                config.target_kl:
            break
    var = float(np.var(batch["returns"]))
    resid = float(np.var(batch["returns"] - batch["value"]))
    return {"policy_loss": float(np.mean(pls)), "value_loss": float(np.mean(vls)),
            "entropy": float(np.mean(ents)), "approx_kl": float(np.mean(kls)),
            "clipfrac": float(np.mean(clips)),
            "explained_variance": 1 - resid / var if var > 0 else float("nan"),
            "samples": float(n)}


# ------------------------------------------------------------------------------------------
# 6. Bookkeeping: run folder, checkpoints, logs, evaluation
# ------------------------------------------------------------------------------------------

def _open_run(config: SelfPlayConfig, run_dir: Path, resume: bool
              ) -> tuple[SelfPlayConfig, dict[str, Any], Path | None]:
    config, changed = run_settings(config, run_dir, resume)
    if not resume:
        (run_dir / "pool").mkdir(parents=True, exist_ok=True)
        config.save(run_dir / "config.json")
        state = {"step": 0, "engine_steps": 0, "updates": 0, "games_started": 0,
                 "next_snapshot": 0, "next_eval": 0, "next_checkpoint": config.checkpoint_every,
                 "wall_s": 0.0, "evals": [], "fingerprint": config.fingerprint()}
        return config, state, None
    ckpt, state = read_checkpoint(run_dir, TRAINER, config.fingerprint())
    if changed:
        config.save(run_dir / "config.json")   # the run's settings from now on
    _torch().set_num_threads(config.threads)   # the run's own hardware settings
    import numba

    numba.set_num_threads(min(config.engine_threads, numba.config.NUMBA_NUM_THREADS))
    state["resume_note"] = describe_resume(config, changed, SelfPlayConfig.RESUMABLE)
    return config, state, ckpt


def _checkpoint(run_dir: Path, net, optimizer, gen, rng: np.random.Generator,
                pool: SnapshotPool, games: Games, state: dict[str, Any]) -> Path:
    """A complete checkpoint (atomic, via :func:`train.checkpoints.save_checkpoint`):
    ``model.zip`` is the torch archive of the network, optimiser and sampling generator.

    The games in flight are not saved: the run (and a resumed one) starts fresh games with
    the next seeds."""
    torch = _torch()

    class Archive:
        def save(self, path: Path) -> None:
            torch.save({"net": net.state_dict(), "optimizer": optimizer.state_dict(),
                        "torch_gen": gen.get_state()}, path)

    payload = dict(state, trainer=TRAINER, games_started=games.started, pool=pool.state(),
                   numpy_rng=rng.bit_generator.state)
    return save_checkpoint(run_dir, Archive(), SimpleNamespace(**payload))


def _restore(ckpt: Path, state: dict[str, Any], net, optimizer, gen,
             rng: np.random.Generator, pool: SnapshotPool, run_dir: Path) -> None:
    torch = _torch()
    try:   # weights only: tensors, numbers and containers; any other object is refused
        saved = torch.load(ckpt / "model.zip", map_location="cpu", weights_only=True)
    except Exception as exc:  # damaged archive, or one holding more than weights
        found = re.search(r"Unsupported global: GLOBAL (\S+)", str(exc))
        if found:
            reason = (f"it holds a Python object ({found[1]}), not only weights, and self-play "
                      f"checkpoints are never unpickled")
        else:
            reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise CheckpointError(f"{ckpt / 'model.zip'} cannot be loaded: {reason}") from None
    net.load_state_dict(saved["net"])
    optimizer.load_state_dict(saved["optimizer"])
    gen.set_state(saved["torch_gen"])
    rng.bit_generator.state = state.pop("numpy_rng")
    for entry in state.pop("pool"):
        path = run_dir / "pool" / entry["name"]
        if not path.is_file():
            raise CheckpointError(f"checkpoint {ckpt.name} names {path}, which is missing")
        pool.add(path, entry["wins"], entry["games"])


def _tensorboard(run_dir: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # pragma: no cover - tensorboard is optional
        return None
    # a resumed run hides the events logged after its checkpoint (the last progress row left
    # by the truncation), so TensorBoard shows each step once
    progress = run_dir / "logs" / "progress.csv"
    last = None
    if progress.exists():
        with progress.open(newline="") as f:
            steps = [r["step"] for r in csv.DictReader(f) if r.get("step")]
        last = int(float(steps[-1])) if steps else None
    return SummaryWriter(str(run_dir / "logs"), purge_step=None if last is None else last + 1)


def _truncate_csv(path: Path, step: int) -> None:
    """Keep the rows of ``path`` logged at or before ``step`` (a resumed run logs the rest)."""
    truncate_log(path, step)


def _log_update(run_dir: Path, writer, stats: dict[str, float]) -> None:
    append_csv(run_dir / "logs" / "progress.csv",
                {k: (round(v, 6) if isinstance(v, float) else v) for k, v in stats.items()})
    if writer is not None:
        for k, v in stats.items():
            if k != "step":
                writer.add_scalar(f"train/{k}", v, stats["step"])


def learner_agent(net, config: SelfPlayConfig, path: Path):
    """The learner as a ``ppo:PATH`` agent (greedy over its logits), via its exported file."""
    from agents.ppo import PPOAgent

    export_policy(net, path, config, 0)
    return PPOAgent(path)


def _evaluate(net, config: SelfPlayConfig, run_dir: Path, state: dict[str, Any], writer,
              step: int) -> None:
    """The duplicate-deal evaluation of :mod:`train.evaluation` against each heuristic (at a
    table of ``num_players``: the learner on one side, the bot in the other seats)."""
    agent = learner_agent(net, config, run_dir / "pool" / "learner-eval.safetensors")
    record = None if writer is None else (lambda k, v: writer.add_scalar(k, v, step))
    row = {**evaluation_row(agent, config, step, record), "wall_s": round(state["wall_s"], 1)}
    state["evals"].append(row)
    append_csv(run_dir / "eval.csv", row)


def plot_training(run_dir: str | Path) -> Path | None:
    """``training.png``: win rate against the heuristics (95% intervals) over wall-clock
    minutes, and entropy, KL, value loss and steps/s over learner steps (``logs/progress.csv``)."""
    run_dir = Path(run_dir)
    progress = run_dir / "logs" / "progress.csv"
    if not progress.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = ("step", "entropy", "approx_kl", "value_loss", "steps_per_s")

    train_rows = numeric_rows(progress, keys)
    col = {k: np.array([float(r[k]) for r in train_rows]) for k in keys}
    fig, axes = plt.subplots(1, 5, figsize=(20, 3.6))
    evals = numeric_rows(run_dir / "eval.csv") if (run_dir / "eval.csv").exists() else []
    evals = [r for r in evals if r.get("wall_s", "").replace(".", "", 1).isdigit()]
    ax = axes[0]
    if evals:
        plot_win_rates(ax, np.array([float(r["wall_s"]) for r in evals]) / 60, evals)
    ax.set_xlabel("minutes of training")
    ax.set_title("win rate (95% CI)")
    from matplotlib.ticker import EngFormatter, MaxNLocator

    for ax, key in zip(axes[1:], ("entropy", "approx_kl", "value_loss", "steps_per_s")):
        ax.plot(col["step"], col[key], lw=0.8)
        ax.set_xlabel("learner steps")
        ax.set_title(key)
        ax.xaxis.set_major_locator(MaxNLocator(4))   # "2M", not 2000000: labels that fit
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    fig.tight_layout()
    out = run_dir / "training.png"
    from cribenv.files import save_figure

    save_figure(fig, out, dpi=100)
    plt.close(fig)
    return out
