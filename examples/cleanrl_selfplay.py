"""CleanRL-style self-play PPO for Cribbage in one file: copy it and change what you like.

Everything is here, top to bottom: the arguments, the network, the rollout on the batched
engine (``cribenv.vector.VectorGame``, thousands of games stepped in compiled code), the
per-seat credit and GAE, the PPO update and an evaluation against a random player. It needs
only numpy, torch and ``cribenv`` (the ``vector`` extra for numba). The project's full trainer,
``train/selfplay.py`` (``cribenv train``), adds a pool of frozen snapshots, checkpoints with exact
resume, TensorBoard, evaluation against the heuristic bots and a per-card head.

One policy plays every seat of every game (pure self-play), so every seat of every game is a
row of the batch. A seat's trajectory is its own decisions: the rewards the engine pays it
between two of its decisions (points pegged on the opponent's turn, the show, the final result)
are credited to the earlier one, and GAE runs along each seat's chain of decisions. A chain cut
by the end of a rollout is bootstrapped with the value of the seat's view at that moment.

Torch runs on one thread by default (``--threads N`` for more): the network is small, and more
threads only make each step wait on them.

    python examples/cleanrl_selfplay.py                        # about 10 minutes on 2 cores
    python examples/cleanrl_selfplay.py --total-steps 20000    # a smoke run
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from cribenv.game import Rules
from cribenv.observation import OBS_SIZE
from cribenv.vector import VectorGame


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--total-steps", type=int, default=3_000_000, help="decisions to train on")
    p.add_argument("--num-games", type=int, default=256, help="games stepped together")
    p.add_argument("--num-steps", type=int, default=32, help="engine steps per rollout")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--target", type=int, default=121, choices=(61, 121))
    p.add_argument("--reward", default="points", choices=("points", "win"),
                   help="points: each step's point differential; win: the game's result")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.02)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--eval-games", type=int, default=400, help="games against random (0: none)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--save", default=None, help="write the weights (a state dict) here")
    p.add_argument("--threads", type=int, default=1, help="torch threads (torch.set_num_threads)")
    args = p.parse_args(argv)
    if min(args.total_steps, args.num_games, args.num_steps, args.threads) < 1:
        p.error("--total-steps, --num-games, --num-steps and --threads must be at least 1")
    return args


# ------------------------------------------------------------------------------ the network
class Agent(nn.Module):
    """Separate actor and critic MLPs on the 601-entry observation; the actor gives 52 logits,
    illegal cards are masked to probability 0."""

    def __init__(self, hidden: int) -> None:
        super().__init__()

        def mlp(out: int, gain: float) -> nn.Sequential:
            layers = [nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                      nn.Linear(hidden, out)]
            for layer in layers:
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight, np.sqrt(2))
                    nn.init.zeros_(layer.bias)
            nn.init.orthogonal_(layers[-1].weight, gain)
            return nn.Sequential(*layers)

        self.actor = mlp(52, 0.01)
        self.critic = mlp(1, 1.0)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(obs).masked_fill(~mask, torch.finfo(torch.float32).min)
        return torch.distributions.Categorical(logits=logits)


# ------------------------------------------------------------------------------ the rollout
def collect(vg: VectorGame, agent: Agent, args: argparse.Namespace) -> dict[str, np.ndarray]:
    """``num_steps`` engine steps of every game; one decision per game and step.

    Returns the batch, ``(T, N)`` arrays: the ``seat`` that decided, each decision's reward
    (everything its seat was paid until its next decision or the game's end), ``next_t`` (the
    step of the seat's next decision in this rollout, -1 if none), ``terminal`` and
    ``bootstrap`` (the value of the seat's view at the rollout's end, for chains it cuts)."""
    T, N, P = args.num_steps, vg.num_games, vg.num_players
    games = np.arange(N)
    obs = np.empty((T, N, OBS_SIZE), np.float32)
    mask = np.empty((T, N, 52), bool)
    action = np.empty((T, N), np.int64)
    seats = np.empty((T, N), np.int64)
    logp = np.empty((T, N), np.float32)
    value = np.empty((T, N), np.float32)
    reward = np.zeros((T, N), np.float32)
    next_t = np.full((T, N), -1, np.int64)
    terminal = np.zeros((T, N), bool)
    bootstrap = np.zeros((T, N), np.float32)
    last_t = np.full((N, P), -1, np.int64)      # each seat's latest decision in this rollout
    owed = np.zeros((N, P), np.float32)         # paid to each seat since that decision
    for t in range(T):
        seats[t] = vg.to_act
        seat = seats[t]
        prev = last_t[games, seat]
        linked = prev >= 0
        reward[prev[linked], games[linked]] += owed[games[linked], seat[linked]]
        next_t[prev[linked], games[linked]] = t
        owed[games, seat] = 0.0
        last_t[games, seat] = t
        obs[t], mask[t] = vg.observe(), vg.legal_mask()
        with torch.no_grad():
            o, m = torch.from_numpy(obs[t]), torch.from_numpy(mask[t])
            d = agent.dist(o, m)
            a = d.sample()
            logp[t], value[t], action[t] = d.log_prob(a).numpy(), agent.value(o).numpy(), a.numpy()
        owed += vg.step(action[t]).astype(np.float32)   # auto-reset: ended games start anew
        for i in np.flatnonzero(vg.finished):           # a game ended: settle every seat
            for s in range(P):
                if last_t[i, s] >= 0:
                    reward[last_t[i, s], i] += owed[i, s]
                    terminal[last_t[i, s], i] = True
            last_t[i], owed[i] = -1, 0.0
    for s in range(P):                                 # chains cut by the rollout's end
        cut = last_t[:, s] >= 0
        if cut.any():
            view = vg.observe(seats=np.full(N, s))[cut]
            with torch.no_grad():
                v = agent.value(torch.from_numpy(view)).numpy()
            rows = last_t[cut, s]
            reward[rows, games[cut]] += owed[cut, s]
            bootstrap[rows, games[cut]] = v
    return dict(obs=obs, mask=mask, action=action, seat=seats, logp=logp, value=value,
                reward=reward, next_t=next_t, terminal=terminal, bootstrap=bootstrap)


def advantages(b: dict[str, np.ndarray], gamma: float, lam: float) -> np.ndarray:
    """GAE along each seat's chain of decisions (a decision's successor is later in time, so
    one backward pass over the steps computes them all)."""
    T, N = b["reward"].shape
    games = np.arange(N)
    adv = np.zeros((T, N), np.float32)
    for t in reversed(range(T)):
        nt = b["next_t"][t]
        linked = nt >= 0
        next_value = np.where(linked, b["value"][np.maximum(nt, 0), games], b["bootstrap"][t])
        next_adv = np.where(linked, adv[np.maximum(nt, 0), games], 0.0)
        alive = ~b["terminal"][t]
        delta = b["reward"][t] + gamma * next_value * alive - b["value"][t]
        adv[t] = delta + gamma * lam * alive * next_adv
    return adv


# ------------------------------------------------------------------------------ the update
def update(agent: Agent, optimizer: torch.optim.Optimizer, b: dict[str, np.ndarray],
           adv: np.ndarray, args: argparse.Namespace) -> dict[str, float]:
    flat = {k: torch.from_numpy(v.reshape(-1, *v.shape[2:])) for k, v in b.items()
            if k in ("obs", "mask", "action", "logp", "value")}
    advs = torch.from_numpy(adv.reshape(-1))
    returns = advs + flat["value"]
    n = len(advs)
    stats: dict[str, float] = {}
    for _ in range(args.epochs):
        for idx in torch.randperm(n).split(args.minibatch):
            d = agent.dist(flat["obs"][idx], flat["mask"][idx])
            ratio = (d.log_prob(flat["action"][idx]) - flat["logp"][idx]).exp()
            a = advs[idx]
            a = (a - a.mean()) / (a.std() + 1e-8)
            policy_loss = -torch.min(ratio * a, ratio.clamp(1 - args.clip, 1 + args.clip) * a
                                     ).mean()
            value_loss = 0.5 * (agent.value(flat["obs"][idx]) - returns[idx]).pow(2).mean()
            entropy = d.entropy().mean()
            loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
            stats = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                     "entropy": entropy.item(),
                     "approx_kl": ((ratio - 1) - ratio.log()).mean().item()}
    return stats


# ------------------------------------------------------------------------------ evaluation
def win_rate_vs_random(agent: Agent, args: argparse.Namespace, seed: int) -> tuple[float, float]:
    """The agent (greedy: its most likely legal card) in seat 0 of ``eval_games`` games, a
    uniformly random player in the other seats; returns the win rate and its 95% half-width."""
    rules = Rules(num_players=args.players, target=args.target)
    vg = VectorGame(rules, seeds=np.arange(args.eval_games) + seed)
    rng = np.random.default_rng(seed)
    while not vg.done.all():
        mask = vg.legal_mask()
        cards = vg.random_actions(rng, mask)
        mine = vg.to_act == 0
        if mine.any():
            with torch.no_grad():
                logits = agent.actor(torch.from_numpy(vg.observe()[mine]))
            logits = logits.masked_fill(~torch.from_numpy(mask[mine]), -torch.inf)
            cards[mine] = logits.argmax(1).numpy()
        vg.step(cards)
    # seat 0 is side 0 (with 4 players its partner, seat 2, plays at random)
    p = float(np.mean(vg.winner == 0))
    return p, 1.96 * np.sqrt(p * (1 - p) / len(vg.winner))


# ------------------------------------------------------------------------------ the loop
def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    agent = Agent(args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    rules = Rules(num_players=args.players, target=args.target)
    vg = VectorGame(rules, seeds=np.arange(args.num_games) + args.seed * 1_000_003,
                    reward=args.reward, auto_reset=True, seed_stream=args.seed)
    result: dict[str, float] = {}
    if args.eval_games:
        p, h = win_rate_vs_random(agent, args, seed=10**9)
        result["win_rate_start"] = p
        print(f"before training: {100 * p:.1f}% +- {100 * h:.1f} against random")
    steps, start = 0, time.perf_counter()
    per_rollout = args.num_games * args.num_steps
    updates = -(-args.total_steps // per_rollout)
    for k in range(1, updates + 1):
        for group in optimizer.param_groups:        # linear learning-rate decay
            group["lr"] = args.lr * (1 - (k - 1) / updates)
        batch = collect(vg, agent, args)
        stats = update(agent, optimizer, batch, advantages(batch, args.gamma, args.gae_lambda),
                       args)
        steps += per_rollout
        if k % 10 == 0 or k == updates:
            rate = steps / (time.perf_counter() - start)
            print(f"update {k}/{updates}: {steps:,} decisions, {rate:,.0f}/s, entropy "
                  f"{stats['entropy']:.3f}, approx_kl {stats['approx_kl']:.4f}, value_loss "
                  f"{stats['value_loss']:.3f}")
    result["steps"] = steps
    if args.eval_games:
        p, h = win_rate_vs_random(agent, args, seed=10**9)
        result["win_rate_end"] = p
        print(f"after {steps:,} decisions: {100 * p:.1f}% +- {100 * h:.1f} against random")
    if args.save:
        torch.save(agent.state_dict(), args.save)   # weights only: torch.load(weights_only=True)
        print(f"weights: {args.save}")
    return result


if __name__ == "__main__":
    main()
