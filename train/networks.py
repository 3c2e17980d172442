"""The torch networks of the trainers, and their export as a ``ppo:PATH`` policy file: the
self-play actor-critics, the ``expert-prior`` card network of every trainer
(:class:`CardNetwork`: the self-play one, the SB3 policy of :mod:`train.prior_policy`, the fits
of :mod:`train.rollouts` and :mod:`train.expert_iteration`, the frozen snapshots), and the layers
they build from (:mod:`train.layers`: :func:`mlp`, :data:`ACTIVATIONS`, still importable
here).

``policy="mlp"``: an MLP on the observation and a linear head of 52 logits; ``"cards"``: a
per-card head (logit of card c = query(h) . embedding(c) + bias(c), the embedding the sum of a
rank, a suit and a card vector); ``"keeps"``: the per-card head plus a throw head that scores
every way to lay away cards (:func:`throw_logits`); ``"expert-prior"``: beta x the expert's
value of each legal card plus a card MLP on its features. The critic is a separate MLP (with
``privileged_critic`` it also reads :meth:`cribenv.vector.VectorGame.hidden`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.features import FEATURES_VERSION, NUM_FEATURES, legal_features
from agents.ppo import (
    PHASE_DISCARD,
    THROW_FEATURES,
    ExpertPriorActor,
    PolicyFileError,
    load_policy,
    policy_path,
    save_tensors,
    throw_tables,
)
from cribenv.observation import OBS_SIZE
from cribenv.vector import HIDDEN_SIZE
from train.layers import ACTIVATIONS, mlp, orthogonal_init
from train.selfplay_config import NUM_CARDS, SelfPlayConfig
from train.throw_values import ThrowValueNet, crib_sign


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


class SparseLinear(torch.autograd.Function):
    """``x @ weight`` for ``x`` given as (idx, val) rows (see :class:`SparseRows`), ``weight``
    ``(in, out)``: an ``embedding_bag`` sum forward; the weight's gradient as a sparse
    ``x.T @ grad`` (``embedding_bag``'s own backward is slower on CPU than the dense layer)."""

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


sparse_linear = SparseLinear.apply


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
    def of(cls, obs: np.ndarray, mask: np.ndarray) -> CardRows:
        """The legal cards of observation rows ``obs`` with masks ``mask`` (compiled: a few
        microseconds a row, :func:`agents.features.legal_features`)."""
        return cls(*legal_features(obs, mask))

    def __getitem__(self, rows) -> CardRows:
        return CardRows(self.ids[rows], self.prior[rows], self.feats[rows])

    def columns(self) -> dict[str, Any]:
        """The parts as named columns (a rollout's storage)."""
        return dict(zip(self.COLUMNS, (self.ids, self.prior, self.feats)))

    def to_torch(self, device) -> CardRows:
        return CardRows(*(torch.from_numpy(np.ascontiguousarray(x)).to(device)
                          for x in (self.ids, self.prior, self.feats)))


class CardNetwork(nn.Module):
    """The ``expert-prior`` card network in torch, the one of every trainer: the logit of a card
    is ``beta * prior + out(net(features))``, one small MLP ``net`` shared by every card (its
    feature row, :func:`agents.features.card_features`) and a last layer ``out`` that starts at
    zero, so the untrained network is ``beta`` x the expert's values. The numpy twin that plays
    its policy files is :class:`agents.ppo.ExpertPriorActor`.

    ``orthogonal``: the self-play trainer's initialisation (``out`` drawn first, then ``net``
    orthogonal as :func:`mlp`'s); else torch's default (``net``, then ``out``: the SB3 policy's
    and the fits'). The order only sets which random draws each layer takes (``out`` is zeroed
    either way); the parameters come as ``log_beta``, ``net``'s, ``out``'s."""

    def __init__(self, card_arch: list[int], activation: str = "relu", beta: float = 1.0,
                 orthogonal: bool = True) -> None:
        super().__init__()
        self.card_arch = list(card_arch)
        self.activation = activation
        width = self.card_arch[-1] if self.card_arch else NUM_FEATURES
        sizes = [NUM_FEATURES, *self.card_arch]
        if orthogonal:
            out = nn.Linear(width, 1)
            self.net = mlp(sizes, ACTIVATIONS[activation], orthogonal=True)
        else:
            self.net = mlp(sizes, ACTIVATIONS[activation], orthogonal=False)
            out = nn.Linear(width, 1)
        nn.init.zeros_(out.weight)
        nn.init.zeros_(out.bias)
        self.out = out
        self.log_beta = nn.Parameter(torch.tensor(math.log(beta)))

    def scores(self, features):
        """``out(net(features))``: the learned part of the logits, one per feature row."""
        return self.out(self.net(features)).squeeze(-1)

    def forward(self, prior, features, beta=None):
        """Logits of cards given their expert values ``prior`` (..., n) and feature rows
        ``features`` (..., n, NUM_FEATURES); ``beta``: a fixed number in place of
        ``exp(log_beta)`` (a policy file's own, as the numpy player reads it)."""
        return (self.log_beta.exp() if beta is None else beta) * prior + self.scores(features)

    def linears(self) -> list[nn.Linear]:
        """The linear layers in order, as a policy file numbers them (``card.i``)."""
        return [m for m in self.net if isinstance(m, nn.Linear)] + [self.out]

    def arrays(self) -> dict[str, np.ndarray]:
        """The network as the tensors of an ``expert-prior`` policy file."""
        return card_network_arrays(self.linears(), self.log_beta)

    def save(self, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
        """Write the network as an ``expert-prior`` policy file for 2 players to 121 (what
        the rollout fit and expert iteration make), its config the network's own fields and
        ``meta``; ``ppo:PATH`` plays it."""
        config = {"arch": "expert-prior", "activation": self.activation,
                  "card_arch": self.card_arch, "features_version": FEATURES_VERSION,
                  "num_players": 2, "target": 121, **(meta or {})}
        return save_tensors(path, self.arrays(), config)

    def load_policy_file(self, path: str | Path) -> None:
        """Copy the card network and beta of the ``expert-prior`` policy file ``path``
        (``shipped``: the shipped agent) into this one (:func:`load_card_network`)."""
        load_card_network(self.linears(), self.log_beta, path, self.card_arch)

    @classmethod
    def from_policy_file(cls, path: str | Path, orthogonal: bool = False) -> CardNetwork:
        """The network of the ``expert-prior`` policy file ``path``, its sizes and activation
        read from the file; :class:`agents.ppo.PolicyFileError` names a file of another
        network."""
        loaded = load_policy(policy_path(path))
        if not isinstance(loaded, ExpertPriorActor):
            raise PolicyFileError(f"{path} is not an expert-prior policy file")
        net = cls([int(wt.shape[1]) for wt, _ in loaded._forward[:-1]],
                  loaded.config.get("activation", "relu"), orthogonal=orthogonal)
        net.load_policy_file(path)
        return net


def card_logits(cards: CardRows, network: CardNetwork, beta=None):
    """52 logits from ``network``'s logits of each row's legal cards (torch; ``beta``: see
    :meth:`CardNetwork.forward`); cards not in the row get 0 (the mask removes them)."""
    score = network(cards.prior, cards.feats, beta)                          # (n, slots)
    slot_card = torch.where(cards.ids >= 0, cards.ids, NUM_CARDS)           # unused: column 52
    out = torch.zeros((len(score), NUM_CARDS + 1), dtype=score.dtype, device=score.device)
    return out.scatter(1, slot_card, score)[:, :NUM_CARDS]


def renamed_on_load(module: nn.Module, renames: dict[str, str]) -> None:
    """Let ``module`` load state dicts that name its tensors the old way (checkpoints made
    before :class:`CardNetwork`): a key beginning with ``old`` (after the module's prefix) is
    read as beginning with ``renames[old]``."""

    def hook(module, state_dict, prefix, *args) -> None:
        for key in [k for k in state_dict if k.startswith(prefix)]:
            rest = key[len(prefix):]
            for old, new in renames.items():
                if rest == old or rest.startswith(old) and old.endswith("."):
                    state_dict[prefix + new + rest[len(old):]] = state_dict.pop(key)
                    break

    module.register_load_state_dict_pre_hook(hook)


def critic_inputs(config: SelfPlayConfig) -> int:
    """Entries of the critic's input: the observation, then with ``privileged_critic`` what
    the seat cannot see (:meth:`cribenv.vector.VectorGame.hidden`)."""
    return OBS_SIZE + (HIDDEN_SIZE if config.privileged_critic else 0)


class ActorCritic(nn.Module):
    """Actor: MLP -> 52 logits (linear or per-card head). Critic: its own MLP -> 1."""

    def __init__(self, config: SelfPlayConfig) -> None:
        super().__init__()
        sizes = [OBS_SIZE, *config.net_arch]
        width = sizes[-1]
        self.actor = mlp(sizes)
        self.hidden_in = critic_inputs(config) - OBS_SIZE
        self.per_card = config.policy in ("cards", "keeps")
        self.keeps = config.policy == "keeps"
        if self.keeps:
            self.keep_ctx = orthogonal_init(nn.Linear(width, config.keep_ctx), 1.0)
            self.keep_net = throw_net(config.keep_arch, config.keep_ctx)
            self.tables = throw_tables_torch()
        self.throw_values = None
        if config.throw_values:
            self.throw_values = ThrowValueNet(config.value_arch, config.value_beta)
        if self.per_card:
            d = config.card_dim
            self.query = orthogonal_init(nn.Linear(width, d), 0.01)
            self.rank = nn.Parameter(torch.randn(13, d) / math.sqrt(d))
            self.suit = nn.Parameter(torch.randn(4, d) / math.sqrt(d))
            self.card = nn.Parameter(torch.zeros(NUM_CARDS, d))
            self.card_bias = nn.Parameter(torch.zeros(NUM_CARDS))
        else:
            self.head = orthogonal_init(nn.Linear(width, NUM_CARDS), 0.01)
        self.critic = nn.Sequential(mlp([critic_inputs(config), *config.net_arch]),
                                    orthogonal_init(nn.Linear(width, 1), 1.0))

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

    def _head(self, obs, h, layer=None, throws: ThrowInputs | None = None):
        """The logits from the actor's last hidden layer ``h`` (the throw head reads the
        observation rows ``obs``, or their :func:`throw_inputs` ``throws`` worked out
        already)."""
        w, b = self.action_layer() if layer is None else layer
        out = h @ w.T + b
        if self.keeps:
            if throws is None:
                throws = self.throw_inputs(obs)
            out = throw_head(throws, h, out, self.keep_ctx, self.keep_net, self.throw_values)
        return out

    def throw_inputs(self, obs) -> ThrowInputs:
        """The throw head's inputs of observation rows ``obs`` (:func:`throw_inputs`)."""
        return throw_inputs(obs, self.tables, self.throw_values)

    def value(self, obs):
        """The critic's value of its input rows (:func:`critic_inputs` wide)."""
        return self.critic(obs).squeeze(-1)

    def logits_and_value(self, x: SparseRows, throws: ThrowInputs | None = None):
        """``(logits, value)`` of the critic's input rows given as :class:`SparseRows`
        (the observation first, then with ``privileged_critic`` the hidden cards, which
        the actor does not read): the same numbers as ``logits`` and ``value`` of the
        dense rows (up to float rounding), the actor's and critic's first layers computed
        together from the non-zero entries. The throw head reads ``throws`` (the rows'
        :meth:`throw_inputs`) or else the dense rows ``x.dense``."""
        a0, c0 = self.actor[0], self.critic[0][0]
        width = a0.out_features
        aw = a0.weight
        if self.hidden_in:
            aw = torch.cat([aw, aw.new_zeros(width, self.hidden_in)], 1)
        w = torch.cat([aw, c0.weight]).t().contiguous()     # (critic inputs, 2 width)
        z = sparse_linear(x.idx, x.val, w) + torch.cat([a0.bias, c0.bias])
        h = self.actor[1:](z[:, :width])
        v = self.critic[1:](self.critic[0][1:](z[:, width:])).squeeze(-1)
        return self._head(None if x.dense is None else x.dense[:, :OBS_SIZE], h,
                          throws=throws), v


def make_network(config: SelfPlayConfig) -> nn.Module:
    """The actor-critic of ``config``: :class:`PriorActorCritic` for ``policy="expert-prior"``,
    else :class:`ActorCritic`. Both answer ``logits``, ``value``, ``logits_and_value`` and
    ``load_policy_file``, and :func:`export_arrays` writes either."""
    if config.policy == "expert-prior":
        return PriorActorCritic(config)
    return ActorCritic(config)




class PriorActorCritic(nn.Module):
    """The ``expert-prior`` actor-critic: actor :func:`card_logits` (one small MLP shared by
    every card; its last layer starts at zero, so the untrained policy is the softmax of
    ``beta`` x the expert's values), critic an MLP on the observation."""

    keeps = False

    def __init__(self, config: SelfPlayConfig) -> None:
        super().__init__()
        self.card = CardNetwork(config.card_arch, beta=config.beta, orthogonal=True)
        sizes = [critic_inputs(config), *config.net_arch]
        self.critic = nn.Sequential(mlp(sizes), orthogonal_init(nn.Linear(sizes[-1], 1), 1.0))
        renamed_on_load(self, {"card_net.0.": "card.net.", "card_net.1.": "card.out.",
                               "log_beta": "card.log_beta"})

    def action_layer(self):
        return None

    def logits(self, obs, layer=None, cards: CardRows | None = None):
        return card_logits(cards, self.card)

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    def logits_and_value(self, x: SparseRows, cards: CardRows | None = None):
        first = self.critic[0][0]
        z = sparse_linear(x.idx, x.val, first.weight.t().contiguous()) + first.bias
        v = self.critic[1:](self.critic[0][1:](z)).squeeze(-1)
        return self.logits(None, cards=cards), v

    def load_policy_file(self, path: str | Path) -> None:
        """Start from an ``expert-prior`` policy file's card network and beta."""
        self.card.load_policy_file(path)




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
    return nn.Sequential(mlp([THROW_FEATURES + ctx, *sizes]),
                         orthogonal_init(nn.Linear(sizes[-1], 1), 0.01))


def throw_tables_torch() -> dict[int, tuple[Any, Any, Any]]:
    """:func:`agents.ppo.throw_tables` for 5 and 6 cards held, as torch tensors."""
    return {n: tuple(torch.from_numpy(t) for t in throw_tables(n)) for n in (5, 6)}


@dataclass(frozen=True)
class ThrowRows:
    """What the throw head reads of the discard rows with ``n`` cards held, worked out once from
    the observations (:func:`throw_inputs`): the rows (``rows``, indices into the batch), their
    held card ids ``cards`` ``(B, n)``, each way's rank and suit counts ``feats``
    ``(B, T, 34)``, ``allowed`` ``(B, n, T)`` (way ``t`` throws held card ``j`` and keeps the
    cards already laid away) and with throw values their show points ``shown`` ``(B, T)``
    (hand + crib signed by who deals, before beta; fixed while the policy learns)."""

    rows: Any
    cards: Any
    feats: Any
    allowed: Any
    shown: Any = None


@dataclass(frozen=True)
class ThrowInputs:
    """The throw head's inputs of a batch, one :class:`ThrowRows` per number of cards held.

    The PPO update works them out once for its whole batch and takes each minibatch's share
    with :meth:`select`: the counts and the throw values' outputs do not change while the
    policy learns, so no minibatch pays for them again."""

    groups: tuple[ThrowRows, ...]
    size: int   # rows of the batch

    def select(self, picked) -> ThrowInputs:
        """The inputs of the batch rows ``picked`` (an index tensor), renumbered as the rows of
        ``batch[picked]``."""
        groups = []
        for g in self.groups:
            slot = torch.full((self.size,), -1, dtype=torch.int64, device=g.rows.device)
            slot[g.rows] = torch.arange(len(g.rows), device=g.rows.device)
            s = slot[picked]
            pos = torch.nonzero(s >= 0).squeeze(1)
            i = s[pos]
            groups.append(ThrowRows(pos, g.cards[i], g.feats[i], g.allowed[i],
                                    None if g.shown is None else g.shown[i]))
        return ThrowInputs(tuple(groups), len(picked))


def throw_inputs(obs, tables, values=None) -> ThrowInputs:
    """The :class:`ThrowInputs` of observation rows ``obs`` (torch, ``(N, OBS_SIZE)`` or wider):
    for each table of :func:`throw_tables_torch`, the rows of seats to discard holding that many
    cards; ``values`` (a :class:`train.throw_values.ThrowValueNet`): their show points too."""
    one_hot = torch.nn.functional.one_hot

    def counts(ids):
        return torch.cat([one_hot(ids >> 2, 13).sum(-2), one_hot(ids & 3, 4).sum(-2)], -1)

    obs = obs[:, :OBS_SIZE]
    own = (obs[:, :52] + obs[:, 52:104]) > 0
    n_own = own.sum(1)
    discard = obs[:, PHASE_DISCARD] > 0
    groups = []
    for n, (thrown, kept, member) in tables.items():
        rows = torch.nonzero(discard & (n_own == n)).squeeze(1)
        if rows.numel() == 0:
            continue
        member, thrown, kept = (t.to(obs.device) for t in (member, thrown, kept))
        cards = torch.nonzero(own[rows])[:, 1].view(-1, n)
        feats = torch.cat([counts(cards[:, kept]), counts(cards[:, thrown])], -1).float()
        laid = obs[rows[:, None], 52 + cards] > 0                            # (B, n)
        valid = laid[:, thrown].sum(-1) == laid.sum(-1, keepdim=True)        # (B, T)
        allowed = valid[:, None, :] & member[None]                           # (B, n, T)
        shown = None
        if values is not None:
            sign = crib_sign(obs[rows])
            with torch.no_grad():
                v = values(feats, sign)
            shown = v[..., 0] + sign[:, None] * v[..., 1]
        groups.append(ThrowRows(rows, cards, feats, allowed, shown))
    return ThrowInputs(tuple(groups), len(obs))


def throw_head(inputs: ThrowInputs, h, logits, ctx, score_net, values=None):
    """``logits`` with the rows of seats to discard (``inputs``, :func:`throw_inputs`) replaced
    by the throw head's: each way to lay away cards is scored from the rank and suit counts of
    the cards it keeps and throws and ``ctx(h)``, plus with ``values`` beta times the throw's
    learnt show points (only beta learns from the policy); a held card's logit is the
    log-sum-exp of the scores of the throws (holding the cards already laid away) it is in."""
    layers = [m for m in score_net.modules() if not isinstance(m, torch.nn.Sequential)]
    first, *rest = layers
    out = logits.clone()
    for g in inputs.groups:
        if g.rows.numel() == 0:
            continue
        # the scorer's first layer on (feats, ctx): the ctx part is the same for every
        # throw of a row, so it is computed once a row
        w_feats, w_ctx = first.weight.split([g.feats.shape[-1], first.in_features
                                             - g.feats.shape[-1]], 1)
        per_row = ctx(h[g.rows]) @ w_ctx.T + first.bias                     # (B, hidden)
        z = g.feats @ w_feats.T + per_row[:, None, :]
        for layer in rest:
            z = layer(z)
        score = z.squeeze(-1)                                                # (B, T)
        if values is not None and g.shown is not None:
            score = score + values.log_beta.exp() * g.shown
        s = score[:, None, :].masked_fill(~g.allowed, -1e9)
        out[g.rows[:, None], g.cards] = torch.logsumexp(s, -1)
    return out


def throw_logits(obs, h, logits, ctx, score_net, tables, values=None):
    """``logits`` with the rows of seats to discard replaced by the throw head's
    (:func:`throw_head` on :func:`throw_inputs` of ``obs``). The torch twin of
    :class:`agents.ppo.KeepsActor`."""
    return throw_head(throw_inputs(obs, tables, values), h, logits, ctx, score_net, values)


def masked_log_probs(logits, mask):
    """Log-probabilities of the legal cards (illegal ones get -inf-like values, probability 0)."""
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
    out: dict[str, np.ndarray] = {}
    if isinstance(net, PriorActorCritic):
        return net.card.arrays()
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
            if net.throw_values is not None:
                for i, m in enumerate(net.throw_values.linears()):
                    put(f"value.{i}", m.weight, m.bias)
                out["value.beta"] = net.throw_values.log_beta.detach().exp().cpu().numpy(
                ).reshape(1).copy()
    return out
