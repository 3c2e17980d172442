"""What each way to lay away cards would have scored at the show, learnt from the games
themselves: the ``keeps`` network's throw values (``throw_values=True``).

Once the show has counted a hand, the table has seen everything it scored: every seat's kept
cards, the crib and the starter. For each seat and each way it could have laid away cards
(15 with 2 players) the rules score, with the starter that was turned and the cards the other
seats really laid away, the hand it would have kept and the crib it would have made
(:func:`throw_targets`). No bot and no expected-value table is involved: one sample per seat
and hand, the starter as it fell. A hand whose game ends before its crib is counted (in the
play, or on a hand's count) gives only its hand targets: the game never shows that crib
(``crib_known`` False; :class:`train.selfplay_rollout.Games` settles each hand's samples at
its show). :class:`ThrowValueNet` regresses the two numbers on the
throw head's inputs (rank and suit counts of the kept and the thrown cards), so it learns
their expectation over starters and over the other seats' throws as the learner's games play
them; the throw head adds ``beta x (hand + crib)`` (the crib's sign: + when the seat's side
deals) to each throw's score, the gradient of the policy stopped at the values.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.ppo import THROW_FEATURES, throw_features, throw_tables
from cribenv.observation import OFFSETS
from cribenv.scoring import score_hands
from train.layers import mlp, orthogonal_init
from train.selfplay_team import SOLO, Solo

#: The two numbers a throw value holds: the kept hand's show points, the crib's.
VALUE_NAMES = ("hand", "crib")


def throw_targets(kept: np.ndarray, laid: np.ndarray, crib: np.ndarray,
                  starter: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``m`` seats' hands (``kept`` ``(m, 4)``, ``laid`` ``(m, k)``, the whole ``crib``
    ``(m, 4)`` and the ``starter`` ``(m,)``, card ids): the seat's cards ``(m, n)`` sorted, and
    for every way ``t`` of :func:`agents.ppo.throw_tables` the show points of the hand it keeps
    and of the crib it makes with the other cards of the crib, ``(m, T)`` each.

    >>> from cribenv.cards import parse_many as p
    >>> cards, hand, crib = throw_targets(np.array([p("5H 5S 5C JD")]), np.array([p("2C 3C")]),
    ...                                   np.array([p("2C 3C 9H KS")]), np.array(p("5D")))
    >>> cards[0].tolist() == sorted(p("5H 5S 5C JD 2C 3C"))
    True
    >>> int(hand.max()), int(crib[0, hand[0].argmax()])   # kept 5 5 5 J: 29; the crib 2 3 9 K
    (29, 4)
    """
    kept, laid, crib = (np.asarray(a, np.int64) for a in (kept, laid, crib))
    starter = np.asarray(starter, np.int64)
    m, k = laid.shape
    cards = np.sort(np.concatenate([kept, laid], 1), 1)
    thrown_t, kept_t, _ = throw_tables(cards.shape[1])
    t = len(thrown_t)
    others = crib[~(crib[:, :, None] == laid[:, None, :]).any(-1)].reshape(m, 4 - k)
    starters = np.repeat(starter, t)
    hand = score_hands(cards[:, kept_t].reshape(-1, 4), starters, validate=False)
    made = np.concatenate([cards[:, thrown_t], np.broadcast_to(others[:, None], (m, t, 4 - k))],
                          -1)
    crib_pts = score_hands(made.reshape(-1, 4), starters, is_crib=True, validate=False)
    return cards, hand.reshape(m, t), crib_pts.reshape(m, t)


def turned_samples(vg, games: np.ndarray) -> dict[str, np.ndarray]:
    """The :func:`throw_targets` of every seat of ``games`` of the batched engine ``vg`` (games
    whose starter was just turned), with ``own_crib`` (the seat's side deals): the samples
    :class:`ThrowValueNet` fits."""
    shown = vg.show_cards(games)
    n = vg.num_players
    seats = np.arange(n)
    dealer = vg.dealer[games]
    kept = shown["kept"].reshape(-1, 4)
    laid = shown["laid"].reshape(len(games) * n, -1)
    cards, hand, crib = throw_targets(kept, laid, np.repeat(shown["crib"], n, 0),
                                      np.repeat(shown["starter"], n))
    offset = (seats[None, :] - dealer[:, None]) % n
    own_crib = (offset == 0) | ((n == 4) & (offset == 2))
    return {"cards": cards, "hand": hand, "crib": crib, "own_crib": own_crib.ravel()}


def crib_sign(obs) -> torch.Tensor:
    """+1 for observation rows whose seat's side deals (its crib), else -1 (torch)."""
    dealer, team = OFFSETS["dealer"], OFFSETS["teammate"]
    own = (obs[:, dealer] * obs[:, team]).sum(-1) > 0
    return own.float() * 2 - 1


class ThrowValueNet(nn.Module):
    """Hand and crib points of a way to lay away cards, from its 34 rank and suit counts and
    the seat's :func:`crib_sign` (the other seats throw differently to their own crib): an MLP
    ``(B, T, 35) -> (B, T, 2)``. ``beta`` (learnt by the policy's gradient) weighs them in the
    throw head's scores.

    >>> net = ThrowValueNet([8])
    >>> net(torch.zeros(3, 15, 34), torch.ones(3)).shape
    torch.Size([3, 15, 2])
    """

    def __init__(self, arch: list[int], beta: float = 1.0) -> None:
        super().__init__()
        self.arch = list(arch)
        self.net = mlp([THROW_FEATURES + 1, *self.arch])
        self.out = orthogonal_init(nn.Linear(self.arch[-1], len(VALUE_NAMES)), 1.0)
        with torch.no_grad():   # about the mean show points: the fit starts near its answer
            self.out.bias.copy_(torch.tensor([4.7, 4.0]))
        self.log_beta = nn.Parameter(torch.tensor(float(np.log(beta))))

    def forward(self, feats, sign):
        x = torch.cat([feats, sign[:, None, None].expand(*feats.shape[:2], 1).to(feats)], -1)
        return self.out(self.net(x))

    def prior(self, feats, sign):
        """``beta x (hand + sign x crib)`` of throw rows ``feats`` ``(B, T, 34)``, ``sign``
        ``(B,)`` (:func:`crib_sign`): the values detached, so only beta learns from the
        policy."""
        v = self(feats, sign).detach()
        return self.log_beta.exp() * (v[..., 0] + sign[:, None] * v[..., 1])

    def value_parameters(self) -> list[nn.Parameter]:
        """The parameters the fit trains (all but beta)."""
        return [p for name, p in self.named_parameters() if name != "log_beta"]

    def linears(self) -> list[nn.Linear]:
        return [m for m in self.net if isinstance(m, nn.Linear)] + [self.out]


def _tensors(samples: dict[str, np.ndarray], device) -> tuple[torch.Tensor, ...]:
    """The throw features ``(m, T, 34)``, crib signs ``(m,)``, targets ``(m, T, 2)`` and the
    targets' weights ``(m, 2)`` of ``samples`` (the crib's 0 where ``crib_known`` is False:
    the game never showed that crib)."""
    thrown_t, kept_t, _ = throw_tables(samples["cards"].shape[1])
    feats = torch.from_numpy(throw_features(samples["cards"], thrown_t, kept_t)).to(device)
    sign = torch.from_numpy(np.where(samples["own_crib"], 1.0, -1.0)).float().to(device)
    target = torch.from_numpy(np.stack([samples["hand"], samples["crib"]], -1)).float().to(device)
    known = samples.get("crib_known", np.ones(len(samples["cards"]), bool))
    weight = torch.from_numpy(np.stack([np.ones(len(known)), known], -1)).float().to(device)
    return feats, sign, target, weight


def masked_squared_error(pred, target, weight) -> torch.Tensor:
    """The mean of ``(pred - target) ** 2`` over the targets of weight 1 (``weight`` ``(m, 2)``
    for ``pred`` ``(m, T, 2)``): with every weight 1, the plain mean.

    >>> p, t = torch.zeros(2, 3, 2), torch.ones(2, 3, 2)
    >>> float(masked_squared_error(p, 2 * t, torch.tensor([[1.0, 1.0], [1.0, 0.0]])))
    4.0
    """
    w = weight[:, None, :].expand_as(pred)
    return ((pred - target) ** 2 * w).sum() / w.sum()


def throw_value_loss(net: ThrowValueNet, samples: dict[str, np.ndarray], device="cpu") -> float:
    """The mean squared error of ``net`` on ``samples`` (points squared, per value shown)."""
    feats, sign, target, weight = _tensors(samples, device)
    with torch.no_grad():
        return float(masked_squared_error(net(feats, sign), target, weight))


def fit_throw_values(net: ThrowValueNet, optimizer, samples: dict[str, np.ndarray],
                     epochs: int, batch: int, gen, device, crew: Solo = SOLO) -> float:
    """``epochs`` passes of mean-squared error over ``samples`` (:func:`turned_samples`,
    concatenated) in minibatches of ``batch`` seats' hands; returns the mean loss (points
    squared, per value). With a team (:mod:`train.selfplay_team`) each minibatch is the union
    of every process's part of it, its loss the mean over all of them."""
    m = len(samples["cards"])
    parts = crew.parts(m, batch)
    if not m or (crew.size > 1 and not parts):
        return float("nan")
    feats, sign, target, weight = _tensors(samples, device)
    edges = [m * i // parts for i in range(parts + 1)] if parts else [*range(0, m, batch), m]
    losses = []
    for _ in range(epochs):
        perm = torch.randperm(m, generator=gen).to(device)
        # with a team: each whole minibatch's weight, summed over the processes' parts
        wholes = crew.sum([float(weight[perm[start:end]].sum()) * feats.shape[1]
                           for start, end in zip(edges[:-1], edges[1:])]) if parts else []
        for k, (start, end) in enumerate(zip(edges[:-1], edges[1:])):
            mb = perm[start:end]
            pred = net(feats[mb], sign[mb])
            if parts:   # the sum over this part, over the weight of the whole minibatch
                w = weight[mb][:, None, :].expand_as(pred)
                loss = ((pred - target[mb]) ** 2 * w).sum() / wholes[k]
            else:
                loss = masked_squared_error(pred, target[mb], weight[mb])
            optimizer.zero_grad()
            loss.backward()
            crew.add_gradients(net.value_parameters())
            optimizer.step()
            losses.append(loss.item())
    return crew.sum([float(np.mean(losses))])[0] if parts else float(np.mean(losses))
