"""``ppo:PATH`` agents: a trained policy played from observations, with numpy only.

The policy file's format (weights only, three networks: ``mlp``, ``keeps``, ``expert-prior``)
has its home in :mod:`agents.policy_file`; this module reads each network into a numpy *actor*
(:class:`MlpActor`, :class:`KeepsActor`, :class:`ExpertPriorActor`; their torch counterparts
used in training live in :mod:`train`) and plays it (:class:`PPOAgent`). Illegal cards are
masked out.

* ``mlp``: the actor of an SB3 ``MlpPolicy`` on the observation vector (hidden layers with an
  activation, then 52 logits);
* ``keeps``: the ``mlp`` network for the play, and for the discard a *throw head*
  (:class:`KeepsActor`): every way to lay away the cards is scored from the rank and suit
  counts of the cards kept and thrown plus a projection of the last hidden layer, and a card's
  logit is the log-sum-exp of the scores of the throws that hold it (with the cards already
  laid away);
* ``expert-prior``: one logit per legal card, ``beta * prior + mlp(features)`` on the per-card
  features of :mod:`agents.features`; see :mod:`train.prior_policy`.

**The same choice on every machine.** The actors compute in float64 (a float32 product is
exact in float64, so BLAS kernels, thread counts and a row's place in a batch change a logit
by a few units in the 16th digit at most), and :func:`best_card` treats logits within
:data:`TIE_TOLERANCE` (relative) of the best as tied, taking the lowest card id among them.
Two cards of the same rank often get the same logit but for that rounding (float32 sums in
another order differ by ~1e-6), which once let the CPU pick the card. Training checkpoints (SB3 zip
archives, which hold optimizer state) stay in the run folder for resuming; they are never loaded
here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Observation
from agents.policy_file import (  # noqa: F401  (the format's names, importable from here too)
    POLICY_FORMAT,
    PolicyFileError,
    numbered_layers,
    read_policy_file,
    save_policy,
    save_tensors,
)
from agents.spec import BotSpec, register_agent
from cribenv.game import PlayerView
from cribenv.observation import OBS_SIZE, OFFSETS, decode, encode

#: The agent trained by the project (``make_agent("ppo:shipped")``); see docs/training.md.
SHIPPED_POLICY = Path(__file__).resolve().parent / "trained" / "cribbage_ppo.safetensors"
#: The agent self-play trained from the rules alone (``make_agent("ppo:scratch")``); see
#: docs/from-scratch.md.
SCRATCH_POLICY = Path(__file__).resolve().parent / "trained" / "scratch_ppo.safetensors"
#: ``ppo:scratch`` after five rounds of expert iteration from its own search, still from the
#: rules alone (``make_agent("ppo:scratch-exit")``; ``train/from_rules.sh``).
SCRATCH_EXIT_POLICY = Path(__file__).resolve().parent / "trained" / "scratch_exit_ppo.safetensors"
#: The policy files that ship with the project, by the name ``ppo:NAME`` plays them.
TRAINED_POLICIES = {"shipped": SHIPPED_POLICY, "scratch": SCRATCH_POLICY,
                    "scratch-exit": SCRATCH_EXIT_POLICY}


def shipped_specs() -> list[str]:
    """The specs of the shipped networks, as the commands' help and errors list them.

    >>> shipped_specs()
    ['ppo:shipped', 'ppo:scratch', 'ppo:scratch-exit']
    """
    return [f"ppo:{name}" for name in TRAINED_POLICIES]

_ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


def _activation(name: str) -> Any:
    """The numpy activation function called ``name``."""
    if not isinstance(name, str) or name not in _ACTIVATIONS:
        raise PolicyFileError(f"unknown activation {name!r}: expected one of "
                              f"{sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]


def _check_chain(layers: list[tuple[np.ndarray, np.ndarray]], size: int, name: str) -> int:
    """Check that ``layers`` (weight ``(out, in)``, bias ``(out,)``) chain from ``size`` inputs;
    return the size of the last output. ``name`` names a layer in the message ("card layer")."""
    for i, (w, b) in enumerate(layers):
        if w.ndim != 2 or w.shape[1] != size or b.shape != (w.shape[0],):
            raise PolicyFileError(f"{name} {i} has weight {w.shape} / bias {b.shape}, "
                                  f"expected input size {size}")
        size = w.shape[0]
    return size


def _transposed(w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A layer's ``(in, out)`` weight and bias as contiguous float64 (from float32 values)."""
    return (np.ascontiguousarray(w.T, np.float64), b.astype(np.float64))


def _read_only(w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A layer's weight and bias as float32 copies that cannot be written to."""
    w, b = w.astype(np.float32), b.astype(np.float32)
    w.flags.writeable = b.flags.writeable = False
    return w, b


def _check_finite(layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Refuse weights that are not finite once cast to float32 (1e300 in a float64 file)."""
    for i, (w, b) in enumerate(layers):
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise PolicyFileError(f"layer {i} holds values that are not finite as float32 "
                                  f"(NaN, inf, or beyond float32's range); the file is damaged")


def _forward_chain(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray,
                   activation: Any) -> np.ndarray:
    """``x`` through transposed ``layers`` (``(in, out)`` weights), ``activation`` between them
    and none after the last."""
    last = len(layers) - 1
    for i, (wt, b) in enumerate(layers):
        x = x @ wt + b
        if i < last:
            x = activation(x)
    return x


class MlpActor:
    """The actor network of an ``mlp`` policy file, evaluated with numpy (logits from the
    observation vector)."""

    arch = "mlp"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]],
                 action: tuple[np.ndarray, np.ndarray], activation: str = "tanh",
                 config: dict[str, Any] | None = None) -> None:
        self.activation = _activation(activation)
        self.layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers]
        self.action = (action[0].astype(np.float32), action[1].astype(np.float32))
        _check_finite(self.layers + [self.action])
        self.config = dict(config or {})
        size = _check_chain(self.layers + [self.action], OBS_SIZE, "layer")
        if size != 52:
            raise PolicyFileError(f"the action layer gives {size} logits, expected 52")
        # transposed float64 copies (see the module's note on machines)
        self._forward = [_transposed(w, b) for w, b in self.layers]
        self._head = _transposed(*self.action)

    @classmethod
    def load(cls, path: str | Path) -> MlpActor:
        """Read an ``mlp`` policy file; raises :class:`PolicyFileError` with the reason."""
        policy = load_policy(path)
        if not isinstance(policy, MlpActor):
            raise PolicyFileError(f"{path} holds an {policy.arch!r} policy, not an 'mlp' one")
        return policy

    @classmethod
    def from_tensors(cls, path: Path, tensors: dict[str, np.ndarray],
                     config: dict[str, Any]) -> MlpActor:
        layers = numbered_layers(tensors, "pi")
        if "action.weight" not in tensors or "action.bias" not in tensors:
            raise PolicyFileError(f"{path} has no action layer")
        return cls(layers, (tensors["action.weight"], tensors["action.bias"]),
                   config.get("activation", "tanh"), config)

    def hidden(self, obs: np.ndarray) -> np.ndarray:
        """The last hidden layer's activations for one observation vector or a batch."""
        h = np.asarray(obs, np.float64)
        act = self.activation
        for wt, b in self._forward:
            h = act(h @ wt + b)
        return h

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked logits for one observation vector or a batch (rows)."""
        wt, b = self._head
        return self.hidden(obs) @ wt + b


class ExpertPriorActor:
    """The actor of an ``expert-prior`` policy file, evaluated with numpy: the card network of
    :class:`train.networks.CardNetwork` (torch) read back from the file."""

    arch = "expert-prior"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], beta: float,
                 activation: str = "relu", config: dict[str, Any] | None = None) -> None:
        from agents.features import FEATURES_VERSION, NUM_FEATURES

        self.activation = _activation(activation)
        self.config = dict(config or {})
        version = self.config.get("features_version", FEATURES_VERSION)
        if version != FEATURES_VERSION:
            raise PolicyFileError(f"the policy was trained on card features version {version}; "
                                  f"this cribenv computes version {FEATURES_VERSION}")
        if not layers or _check_chain(layers, NUM_FEATURES, "card layer") != 1:
            raise PolicyFileError("the card network must end in one output per card")
        self.beta = float(np.float32(beta))
        layers = [(w.astype(np.float32), b.astype(np.float32)) for w, b in layers]
        _check_finite(layers)
        self._forward = [_transposed(w, b) for w, b in layers]

    @classmethod
    def from_tensors(cls, path: Path, tensors: dict[str, np.ndarray],
                     config: dict[str, Any]) -> ExpertPriorActor:
        layers = numbered_layers(tensors, "card")
        if "beta" not in tensors or tensors["beta"].size != 1:
            raise PolicyFileError(f"{path} has no beta (one number), got "
                                  f"{tensors['beta'].shape if 'beta' in tensors else 'none'}")
        return cls(layers, float(tensors["beta"].reshape(-1)[0]),
                   config.get("activation", "relu"), config)

    def card_logits(self, prior: np.ndarray, features: np.ndarray) -> np.ndarray:
        """Logits of cards given their expert values (n,) and feature rows (n, F)."""
        feats = np.asarray(features, np.float32).astype(np.float64)
        h = _forward_chain(self._forward, feats, self.activation)
        return self.beta * np.asarray(prior, np.float32).astype(np.float64) + h[..., 0]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Unmasked logits for one :func:`agents.features.augment` vector or a batch (rows)."""
        from agents.features import NUM_FEATURES

        x = np.asarray(obs, np.float32)
        prior = x[..., OBS_SIZE:OBS_SIZE + 52]
        feats = x[..., OBS_SIZE + 52:].reshape(*x.shape[:-1], 52, NUM_FEATURES)
        return self.card_logits(prior, feats)

    def legal_logits(self, view: PlayerView, legal: list[int]) -> np.ndarray:
        """Logits of the ``legal`` cards (sorted ids) for a seat's view."""
        from agents.features import card_features

        prior, feats = card_features(view, legal)
        return self.card_logits(prior[legal], feats[legal])


def throw_tables(n_own: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ways to lay away cards from ``n_own`` cards held (6 with 2 players: 2 thrown; 5 with
    3 or 4: 1 thrown), as positions into the sorted cards: ``(thrown (T, k), kept (T, n - k),
    member (n, T))``, ``member[j, t]`` when position ``j`` is thrown in way ``t``.

    >>> thrown, kept, member = throw_tables(6)
    >>> thrown.shape, kept.shape, member.sum(axis=1).tolist()
    ((15, 2), (15, 4), [5, 5, 5, 5, 5, 5])
    """
    import itertools

    k = 2 if n_own == 6 else 1
    thrown = np.array(list(itertools.combinations(range(n_own), k)), dtype=np.int64)
    kept = np.array([[j for j in range(n_own) if j not in t] for t in thrown], dtype=np.int64)
    member = np.zeros((n_own, len(thrown)), dtype=bool)
    for t, pos in enumerate(thrown):
        member[pos, t] = True
    return thrown, kept, member


#: Inputs of the throw head besides the context: rank (13) and suit (4) counts of the cards
#: kept, then of the cards thrown.
THROW_FEATURES = 34
#: The entry of the observation's ``phase`` block that flags the discard.
PHASE_DISCARD = OFFSETS["phase"].start


def throw_features(cards: np.ndarray, thrown: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """``(B, T, 34)`` counts for the held card ids ``cards`` ``(B, n)``: ranks then suits of the
    kept cards, then of the thrown ones (float32)."""
    def counts(ids: np.ndarray) -> np.ndarray:
        ranks = (np.arange(13) == (ids >> 2)[..., None]).sum(-2)
        suits = (np.arange(4) == (ids & 3)[..., None]).sum(-2)
        return np.concatenate([ranks, suits], -1)

    return np.concatenate([counts(cards[:, kept]), counts(cards[:, thrown])],
                          -1).astype(np.float32)


def crib_sign(obs: np.ndarray) -> np.ndarray:
    """+1 for observation rows whose seat's side deals (its crib), else -1."""
    own = (obs[:, OFFSETS["dealer"]] * obs[:, OFFSETS["teammate"]]).sum(-1) > 0
    return np.where(own, 1.0, -1.0)


class KeepsActor(MlpActor):
    """The actor of a ``keeps`` policy file: an :class:`MlpActor` whose discard logits come
    from the throw head (the torch network is :func:`train.networks.make_network` with
    ``policy="keeps"``)."""

    arch = "keeps"

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]],
                 action: tuple[np.ndarray, np.ndarray], ctx: tuple[np.ndarray, np.ndarray],
                 keep_layers: list[tuple[np.ndarray, np.ndarray]], activation: str = "relu",
                 config: dict[str, Any] | None = None,
                 value_layers: list[tuple[np.ndarray, np.ndarray]] | None = None,
                 value_beta: float = 0.0) -> None:
        super().__init__(layers, action, activation, config)
        width = self.layers[-1][0].shape[0] if self.layers else OBS_SIZE
        size = THROW_FEATURES + _check_chain([ctx], width, "keep.ctx layer")
        if not keep_layers or _check_chain(keep_layers, size, "keep layer") != 1:
            raise PolicyFileError("the throw head must end in one output per throw")
        keep_layers = [_read_only(w, b) for w, b in keep_layers]
        ctx = _read_only(*ctx)
        _check_finite(keep_layers + [ctx])
        self._keep_ctx, self._keep_layers = ctx, tuple(keep_layers)
        self._ctx = _transposed(*ctx)
        self._keep = [_transposed(w, b) for w, b in keep_layers]
        self._tables = {n: throw_tables(n) for n in (5, 6)}
        #: the learnt show points of a throw (hand, crib), weighted by ``value_beta`` in its
        #: score (:mod:`train.throw_values`); empty in files without them
        self.value_layers: list[tuple[np.ndarray, np.ndarray]] = []
        self.value_beta = float(value_beta)
        if value_layers:
            if _check_chain(value_layers, THROW_FEATURES + 1, "value layer") != 2:
                raise PolicyFileError("the throw values must end in two outputs (hand, crib)")
            if not np.isfinite(self.value_beta):
                raise PolicyFileError(f"value.beta is {self.value_beta}, not a finite number")
            value_layers = [(w.astype(np.float32), b.astype(np.float32))
                            for w, b in value_layers]
            _check_finite(value_layers)
            self.value_layers = [_transposed(w, b) for w, b in value_layers]

    @property
    def keep_ctx(self) -> tuple[np.ndarray, np.ndarray]:
        """The throw head's projection of the last hidden layer, as the file holds it (``keep.ctx``:
        weight ``(out, in)``, bias; float32, read-only)."""
        return self._keep_ctx

    @property
    def keep_layers(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """The throw head's layers, as the file holds them (``keep.{i}``: weight ``(out, in)``,
        bias; float32, read-only), the last giving one score per way to throw."""
        return self._keep_layers

    @classmethod
    def from_tensors(cls, path: Path, tensors: dict[str, np.ndarray],
                     config: dict[str, Any]) -> KeepsActor:
        base = MlpActor.from_tensors(path, tensors, config)
        if "keep.ctx.weight" not in tensors or "keep.ctx.bias" not in tensors:
            raise PolicyFileError(f"{path} has no throw head (keep.ctx)")
        values = numbered_layers(tensors, "value")
        if values and tensors.get("value.beta", np.zeros(0)).shape != (1,):
            raise PolicyFileError(f"{path} has throw values but no value.beta of shape (1,)")
        return cls(base.layers, base.action, (tensors["keep.ctx.weight"],
                   tensors["keep.ctx.bias"]), numbered_layers(tensors, "keep"),
                   config.get("activation", "relu"), config, values,
                   float(tensors["value.beta"][0]) if values else 0.0)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, np.float32).astype(np.float64)
        single = x.ndim == 1
        x = x.reshape(1, -1) if single else x
        h = self.hidden(x)
        out = h @ self._head[0] + self._head[1]
        own = (x[:, :52] + x[:, 52:104]) > 0
        for n, (thrown, kept, member) in self._tables.items():
            rows = np.flatnonzero((x[:, PHASE_DISCARD] > 0) & (own.sum(1) == n))
            if rows.size:
                cards = np.nonzero(own[rows])[1].reshape(rows.size, n)
                out[rows[:, None], cards] = self._card_logits(x[rows], h[rows], cards,
                                                              thrown, kept, member)
        return out[0] if single else out

    def throw_log_probs(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For discard observations of a seat holding all its cards (none laid away yet):
        ``(cards (B, n), log_probs (B, T))``, the held card ids in order and the log-chance of
        each way to throw them (positions :func:`throw_tables` ``(n)[0]``): the softmax of the
        throw head's scores, the chance the policy lays that throw away in its two decisions
        (with one card thrown, exactly; with two, as if the scores stayed put between them).

        >>> from cribenv.game import Game
        >>> actor = load_policy(SCRATCH_POLICY)
        >>> g = Game(seed=3)
        >>> cards, logp = actor.throw_log_probs(encode(g.view(g.current_player))[None])
        >>> logp.shape, bool(np.isclose(np.exp(logp).sum(), 1.0))
        ((1, 15), True)
        """
        x = np.asarray(obs, np.float32).astype(np.float64)
        own = x[:, :52] > 0
        n = int(own[0].sum()) if len(x) else 6
        if (x[:, PHASE_DISCARD] <= 0).any() or (own.sum(1) != n).any() \
                or (x[:, 52:104] > 0).any() or n not in self._tables:
            raise ValueError("throw_log_probs reads discard observations of seats that hold "
                             "all their cards, 5 or 6, none laid away")
        thrown, kept, _ = self._tables[n]
        cards = np.nonzero(own)[1].reshape(len(x), n)
        score = self._throw_scores(x, self.hidden(x), cards, thrown, kept)
        top = score.max(1, keepdims=True)
        return cards, score - top - np.log(np.exp(score - top).sum(1, keepdims=True))

    def _throw_scores(self, x, h, cards, thrown, kept) -> np.ndarray:
        """``(B, T)`` the throw head's score of each way to throw the held cards ``cards``."""
        ctx = h @ self._ctx[0] + self._ctx[1]
        feats = throw_features(cards, thrown, kept).astype(np.float64)
        z = np.concatenate([feats, np.broadcast_to(ctx[:, None], (*feats.shape[:2],
                                                                   ctx.shape[1]))], -1)
        score = _forward_chain(self._keep, z, self.activation)[..., 0]
        if self.value_layers:
            sign = crib_sign(x)[:, None, None]
            v = _forward_chain(self.value_layers, np.concatenate(
                [feats, np.broadcast_to(sign, (*feats.shape[:2], 1))], -1), self.activation)
            score = score + self.value_beta * (v[..., 0] + sign[..., 0] * v[..., 1])
        return score

    def _card_logits(self, x, h, cards, thrown, kept, member) -> np.ndarray:
        """Logits ``(B, n)`` of the held cards: log-sum-exp of the scores of the throws (that
        hold the cards already laid away) each card is in."""
        score = self._throw_scores(x, h, cards, thrown, kept)
        laid = x[np.arange(len(x))[:, None], 52 + cards] > 0          # (B, n)
        valid = (laid[:, thrown].sum(-1) == laid.sum(-1, keepdims=True))  # (B, T)
        s = np.where(valid[:, None, :] & member[None], score[:, None, :], -1e9)
        top = s.max(-1, keepdims=True)
        return np.log(np.exp(s - top).sum(-1)) + top[..., 0]


def load_policy(path: str | Path) -> MlpActor | ExpertPriorActor:
    """Read a policy file of any network (:func:`agents.policy_file.read_policy_file`) into
    its numpy actor; raises :class:`PolicyFileError` with the reason."""
    path = Path(path)
    tensors, config = read_policy_file(path)
    arch = config.get("arch", "mlp")
    try:
        if arch == "mlp":
            return MlpActor.from_tensors(path, tensors, config)
        if arch == "keeps":
            return KeepsActor.from_tensors(path, tensors, config)
        if arch == "expert-prior":
            return ExpertPriorActor.from_tensors(path, tensors, config)
    except PolicyFileError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise PolicyFileError(f"{path}: {exc}") from None
    raise PolicyFileError(f"{path}: unknown network {arch!r} (expected 'mlp', "
                          f"'keeps' or 'expert-prior')")


class PPOAgent:
    """Plays a trained policy: the most likely legal card, or a sample with ``sample=True``.

    A bot (``choose(view, legal)``, what :func:`agents.arena.run_game` asks) and a policy
    (``act(observation)``, the RL boundary) with the same choices: ``choose`` encodes the view
    for an ``mlp`` network, ``act`` decodes the observation for an ``expert-prior`` one. In
    sample mode every decision draws a random number, so the agent ``asks_forced`` then.
    """

    def __init__(self, path: str | Path, seed: int | None = None, sample: bool = False) -> None:
        self.path = str(path)
        self.policy = load_policy(path)
        self.name = f"ppo:{Path(path).name}"
        self.sample = sample
        self.asks_forced = sample
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        """The card for a seat's view and its legal cards (sorted ids)."""
        if isinstance(self.policy, ExpertPriorActor):
            logits = self.policy.legal_logits(view, legal)
        else:
            logits = self.policy.logits(encode(view))[legal]
        return self._pick(np.asarray(legal), logits)

    def act(self, observation: Observation) -> int:
        """The card for an environment observation dict."""
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError(f"{self.name}: no legal action in this observation (not its turn?)")
        legal = np.flatnonzero(mask)
        if isinstance(self.policy, ExpertPriorActor):
            logits = self.policy.legal_logits(decode(observation["observation"]),
                                              legal.tolist())
        else:
            logits = self.policy.logits(observation["observation"])[legal]
        return self._pick(legal, logits)

    def _pick(self, legal: np.ndarray, logits: np.ndarray) -> int:
        """The most likely legal card (:func:`best_card`), or one drawn from the softmax in
        sample mode."""
        if not self.sample:
            return best_card(legal, logits)
        p = np.exp(logits - logits.max())
        cdf = np.cumsum(p)
        i = int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right"))
        return int(legal[min(i, legal.size - 1)])


#: Logits within ``TIE_TOLERANCE * max(1, |best|)`` of the best tie (see the module docstring).
TIE_TOLERANCE = 1e-9


def best_card(legal: np.ndarray | list[int], logits: np.ndarray) -> int:
    """The legal card of highest logit; cards within :data:`TIE_TOLERANCE` of it tie, and the
    lowest card id among them wins (``legal`` in any order).

    >>> best_card([40, 3, 9], np.array([2.0, 2.0 - 1e-12, 1.0]))
    3
    >>> best_card([40, 3, 9], np.array([2.0, 1.999, 1.0]))
    40
    """
    legal = np.asarray(legal)
    full = np.zeros((1, 52))
    full[0, legal] = np.asarray(logits, np.float64)
    mask = np.zeros((1, 52), bool)
    mask[0, legal] = True
    return int(best_cards(full, mask)[0])


def best_cards(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``(N,)`` each row's legal card (``mask``) of highest logit (``(N, 52)``), the lowest
    card id among those within :data:`TIE_TOLERANCE` of it: :func:`best_card` of every row.

    >>> best_cards(np.array([[0.0, 2.0, 2.0, 5.0]]), np.array([[True, True, True, False]]))
    array([1])
    """
    z = np.where(mask, logits, -np.inf)
    top = z.max(1, keepdims=True)
    tied = mask & (z >= top - TIE_TOLERANCE * np.maximum(1.0, np.abs(top)))
    return np.argmax(tied, 1)


def policy_path(name: str | Path) -> Path:
    """The policy file ``name`` names: a name of :data:`TRAINED_POLICIES` (``"shipped"``,
    ``"scratch"``) is the file that ships, anything else a path.

    >>> policy_path("shipped") == SHIPPED_POLICY, policy_path("runs/a/policy.safetensors").name
    (True, 'policy.safetensors')
    """
    return TRAINED_POLICIES.get(str(name), Path(name))


def _read_path(arg: str) -> tuple[str, dict[str, Any]]:
    """``ppo:PATH``'s argument: the path, which must be given (its file is read when built)."""
    if not arg:
        raise ValueError("'ppo:PATH' needs the path of a policy file, e.g. "
                         "ppo:runs/quick/policy.safetensors (or ppo:shipped)")
    return arg, {}


def _make_ppo(spec: BotSpec, seed: int | None = None, **kwargs: Any) -> PPOAgent:
    path = spec.arg
    if path.lower() in TRAINED_POLICIES:
        path = path.lower()
    resolved = policy_path(path)
    if not resolved.is_file():
        import difflib

        close = difflib.get_close_matches(path.lower(), list(TRAINED_POLICIES), n=1)
        hint = f" (did you mean 'ppo:{close[0]}'?)" if close else ""
        raise PolicyFileError(f"agent 'ppo:{path}': no policy file at {resolved}{hint}; "
                              f"ppo:shipped is the shipped agent, ppo:scratch the one trained "
                              f"from the rules alone (ppo:scratch-exit after expert "
                              f"iteration), ppo:PATH a policy file")
    agent = PPOAgent(resolved, seed=seed, **kwargs)
    if path in TRAINED_POLICIES:
        agent.name = f"ppo:{path}"
    return agent


register_agent("ppo", _make_ppo, read=_read_path)
