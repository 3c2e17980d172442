"""The self-play rollout: every seat of every game a row (:class:`SeatRollout`), the snapshots
of the opponent pool as torch actors (:func:`frozen_actor`; the pool is
:class:`train.pool.OpponentPool`), the batch of games with who plays which seat
(:class:`Games`) and the collection that plays them (:func:`collect`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.ppo import ExpertPriorActor, KeepsActor, load_policy
from cribenv.game import Rules
from cribenv.observation import OBS_SIZE
from cribenv.vector import VectorGame
from train.networks import (
    CardNetwork,
    CardRows,
    card_logits,
    masked_log_probs,
    throw_logits,
    throw_tables_torch,
)
from train.pool import OpponentPool
from train.selfplay_config import EXPERT, SelfPlayConfig
from train.throw_values import ThrowValueNet, turned_samples

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

def selfplay_pool(config: SelfPlayConfig) -> OpponentPool:
    """The self-play trainer's pool: the ``priority`` rule (exponent ``config.pool_priority``)
    over the newest ``config.pool_size`` snapshots, each played by :func:`frozen_actor`."""
    return OpponentPool(config.pool_size, lambda path, kept: frozen_actor(path),
                        rule="priority", priority=config.pool_priority)


def frozen_actor(path: Path, device: str = "cpu"):
    """The actor of an ``mlp``, ``keeps`` or ``expert-prior`` policy file as a torch function:
    observations (numpy) and, for ``expert-prior``, their :class:`CardRows` -> logits.

    (Torch rather than the numpy :class:`agents.ppo.MlpActor`: same numbers, and it keeps to
    the trainer's torch threads, where numpy's BLAS may start threads of its own.)"""
    policy = load_policy(path)

    def linears(weights) -> list[Any]:
        layers: list[Any] = []
        for w, b in weights:
            linear = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(np.array(w)))
                linear.bias.copy_(torch.from_numpy(np.array(b)))
            layers += [linear, torch.nn.ReLU()]
        return layers[:-1]

    if isinstance(policy, ExpertPriorActor):
        network = CardNetwork.from_policy_file(path).to(device)

        def prior_logits(obs: np.ndarray, cards: CardRows) -> np.ndarray:
            with torch.no_grad():   # the file's beta itself, as the numpy player reads it
                return card_logits(cards.to_torch(device), network, policy.beta).cpu().numpy()

        return prior_logits

    trunk = torch.nn.Sequential(*linears(policy.layers), torch.nn.ReLU()).to(device)
    head = linears([policy.action])[0].to(device)
    values = None
    if isinstance(policy, KeepsActor):
        ctx = linears([policy.keep_ctx])[0].to(device)
        keep = torch.nn.Sequential(*linears(policy.keep_layers)).to(device)
        tables = throw_tables_torch()
        if policy.value_layers:
            values = throw_value_net(policy).to(device)

    def logits(obs: np.ndarray, cards: CardRows | None = None) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(obs).to(device)
            h = trunk(x)
            out = head(h)
            if isinstance(policy, KeepsActor):
                out = throw_logits(x, h, out, ctx, keep, tables, values)
            return out.cpu().numpy()

    return logits


def throw_value_net(policy) -> ThrowValueNet:
    """The throw values of a ``keeps`` policy file (:class:`agents.ppo.KeepsActor`) as the
    torch :class:`train.throw_values.ThrowValueNet`."""
    layers = policy.value_layers                      # (in, out) weights, float64
    net = ThrowValueNet([wt.shape[1] for wt, _ in layers[:-1]], policy.value_beta)
    with torch.no_grad():
        for m, (wt, b) in zip(net.linears(), layers):
            m.weight.copy_(torch.from_numpy(wt.T.astype(np.float32)))
            m.bias.copy_(torch.from_numpy(b.astype(np.float32)))
    return net


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



class Games:
    """The batch of games, who plays which seat, the rewards credited to the seats' decisions,
    and automatic restarts with fresh seeds.

    The rewards are the engine's (:attr:`cribenv.vector.VectorGame.rewards`, the AEC env's
    definitions): ``win`` is +game points to the winning side and the loss shared by the other
    sides (partners share their side's), ``points`` the zero-sum point differential of each
    step, ``mix`` the win reward plus ``shaping`` x the point differential.
    """

    def __init__(self, config: SelfPlayConfig, pool: OpponentPool, rng: np.random.Generator,
                 first_game: int, stream: tuple[int, int] = (0, 1)) -> None:
        self.config = config
        self.stream = stream   # (process, processes): each process deals its own seeds
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
        #: with ``throw_values``: :func:`train.throw_values.turned_samples` of the hands whose
        #: show was settled since the last :meth:`take_samples` (``crib_known``: the crib was
        #: counted, so its cards were shown)
        self.samples: list[dict[str, np.ndarray]] = []
        #: each game's samples from its starter's turn until the show settles them, and the
        #: hand they are of (-1: none pending)
        self.pending: dict[int, dict[str, np.ndarray]] = {}
        self.pending_hand = np.full(n, -1, np.int64)
        self.assign(np.arange(n))

    def _seeds(self, k: int) -> np.ndarray:
        seeds = self.config.seed * 1_000_000_007 + self.started + np.arange(k)
        self.started += k
        rank, size = self.stream
        return seeds * size + rank

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
                self.policies[name] = self.pool.player(name)
        in_play = set(self.opponent)
        if EXPERT in in_play:
            self.policies[EXPERT] = None   # played from the card features (expert_cards)
        self.policies = {k: v for k, v in self.policies.items() if k in in_play}

    def _throw_samples(self, turned: np.ndarray) -> None:
        """Keep the samples of the games whose starter was just ``turned`` until their show
        settles them: a hand whose crib is counted gives its crib target, one whose game ends
        first (in the play, or on a hand's count) only its hand target (``crib_known``
        False), since the game never shows that crib."""
        vg, seats = self.vg, self.config.num_players
        if turned.size:
            taken = turned_samples(vg, turned)
            for k, i in enumerate(turned.tolist()):
                self.pending[i] = {name: v[k * seats:(k + 1) * seats]
                                   for name, v in taken.items()}
            self.pending_hand[turned] = vg.hand_number[turned]
        waiting = self.pending_hand >= 0
        settled = np.flatnonzero(waiting & (vg.done | (vg.hand_number != self.pending_hand)))
        for i in settled.tolist():
            # a game that goes on has dealt its next hand: the crib was counted
            shown = bool(vg.crib_shown[i]) if vg.done[i] else True
            sample = self.pending.pop(i)
            self.samples.append({**sample, "crib_known": np.full(seats, shown)})
        self.pending_hand[settled] = -1

    def take_samples(self) -> dict[str, np.ndarray]:
        """The throw-value samples gathered since the last call, concatenated (and forgotten)."""
        taken, self.samples = self.samples, []
        if not taken:
            return {"cards": np.zeros((0, 6), np.int64)}
        return {k: np.concatenate([t[k] for t in taken]) for k in taken[0]}

    def step(self, actions: np.ndarray, rollout: SeatRollout) -> list[float]:
        """Play one card in every game; credit every seat's reward to its open decision; close
        the decisions of finished games and restart them. Returns the learner's results (1 won,
        0 lost) in the finished games against an opponent, as ``(opponent, result)``."""
        vg, seats = self.vg, self.config.num_players
        discarding = vg.phase == 0
        rewards = vg.step(actions)
        rollout.earn(self.all_rows, rewards.ravel())
        if self.config.throw_values:
            self._throw_samples(np.flatnonzero(discarding & (vg.phase != 0)))
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


# ------------------------------------------------------------------------------------------
# 5. The collection: n_steps steps of every game
# ------------------------------------------------------------------------------------------

def collect(net, games: Games, rollout: SeatRollout, config: SelfPlayConfig,
            gen: torch.Generator, device: torch.device) -> list[tuple[str, float]]:
    """Play ``config.n_steps`` steps of every game of ``games``: the seats the learner plays
    sample from ``net`` and their decisions go to ``rollout`` (each seat a row, rewards
    credited to its previous decision); the other seats are played by their opponent. Returns
    the learner's results in the games finished against an opponent, ``(opponent, won)``."""
    net.eval()
    with torch.no_grad():   # the action layer is fixed during the collection
        layer = net.action_layer()
        layer = None if layer is None else tuple(x.detach() for x in layer)
    with_cards = config.policy == "expert-prior"   # the network reads the legal cards' features
    game_rows = np.arange(config.n_games)
    results: list[tuple[str, float]] = []
    for _ in range(config.n_steps):
        vg = games.vg
        seat = vg.to_act
        obs, mask = vg.observe(), vg.legal_mask()
        seen = (np.concatenate([obs, vg.hidden()], 1) if config.privileged_critic
                else obs)     # the critic's input
        rows = game_rows * config.num_players + seat
        mine = games.learner[game_rows, seat]
        if not mask.any(1).all():
            raise RuntimeError("the engine asked a seat to act with no legal card")
        actions = np.zeros(config.n_games, np.int64)
        cards = CardRows.of(obs, mask) if with_cards else None
        if mine.any():
            decide = _learner_decides if config.algorithm == "ppo" else _learner_q_decides
            actions[mine] = decide(net, layer, rollout, rows[mine], obs[mine], seen[mine],
                                   mask[mine], cards[mine] if with_cards else None, gen, device,
                                   config)
        _opponents_play(games, np.flatnonzero(~mine), obs, mask, cards, actions)
        results += games.step(actions, rollout)
    return results


def _learner_decides(net, layer, rollout: SeatRollout, rows: np.ndarray, obs: np.ndarray,
                     seen: np.ndarray, mask: np.ndarray, cards: CardRows | None,
                     gen: torch.Generator, device: torch.device,
                     config: SelfPlayConfig | None = None) -> np.ndarray:
    """The learner's cards in ``rows`` (drawn from its masked softmax with ``gen``), recorded in
    ``rollout`` with their log-probabilities and the critic's values of ``seen``."""
    o = torch.from_numpy(obs).to(device)
    m = torch.from_numpy(mask).to(device)
    with torch.no_grad():
        logits = net.logits(o, layer, None if cards is None else cards.to_torch(device))
        logp = masked_log_probs(logits, m)
        gumbel = -torch.log(-torch.log(
            torch.rand(logp.shape, generator=gen).clamp_min(1e-20))).to(device)
        a = torch.argmax(logp + gumbel, 1)
        v = net.value(torch.from_numpy(seen).to(device))
    a_np = a.cpu().numpy()
    rollout.decide(rows, seen, mask, a_np, logp.gather(1, a[:, None])[:, 0].cpu().numpy(),
                   v.cpu().numpy(), None if cards is None else cards.columns())
    return a_np


def _learner_q_decides(net, layer, rollout: SeatRollout, rows: np.ndarray, obs: np.ndarray,
                       seen: np.ndarray, mask: np.ndarray, cards: CardRows | None,
                       gen: torch.Generator, device: torch.device,
                       config: SelfPlayConfig) -> np.ndarray:
    """``algorithm="dmc"``: the learner's cards in ``rows``, the legal card of the highest
    Q-value (the network's outputs), or with chance ``epsilon`` a legal card drawn uniformly
    (both with ``gen``); recorded in ``rollout`` with the chosen card's Q-value as its value
    (what a return cut by the rollout's end is completed with)."""
    o = torch.from_numpy(obs).to(device)
    m = torch.from_numpy(mask).to(device)
    with torch.no_grad():
        q = net.logits(o, layer, None).masked_fill(~m, -torch.inf)
        best = torch.argmax(q, 1)
        noise = torch.rand(m.shape, generator=gen).to(device).masked_fill(~m, -1.0)
        explore = torch.rand(len(rows), generator=gen).to(device) < config.epsilon
        a = torch.where(explore, torch.argmax(noise, 1), best)
        value = q.gather(1, a[:, None])[:, 0]
    a_np = a.cpu().numpy()
    rollout.decide(rows, seen, mask, a_np, np.zeros(len(rows), np.float32),
                   value.cpu().numpy(), None)
    return a_np


def _opponents_play(games: Games, theirs: np.ndarray, obs: np.ndarray, mask: np.ndarray,
                    cards: CardRows | None, actions: np.ndarray) -> None:
    """Fill in ``actions`` of the games ``theirs``, whose seat to act is an opponent's: the
    expert's card, or a card drawn from the snapshot's logits."""
    for name in sorted({games.opponent[i] for i in theirs.tolist()}):
        sel = theirs[[games.opponent[i] == name for i in theirs.tolist()]]
        if name == EXPERT:
            actions[sel] = expert_cards(cards[sel])
            continue
        logits = games.policies[name](obs[sel], None if cards is None else cards[sel])
        actions[sel] = sample_masked(logits, mask[sel], games.rng)
