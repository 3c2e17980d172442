"""TorchRL: a masked categorical policy learns Cribbage by self-play (policy gradient with a
value baseline), on ``PettingZooWrapper(..., use_mask=True)``.

``cribenv.integrations.torchrl.make_env`` puts both seats in one group (``"players"``), so one
policy plays both; ``masked_policy`` samples from a ``MaskedCategorical`` over each seat's
``action_mask`` (all ones for the seat that waits: its action is ignored). Rewards are
``reward="points"`` paid ``"on_turn"``: a seat's points reach it on its own rows and, at the
end of a game, on the last row. So, per seat, the return of a row is the sum of that seat's
rewards from the row to the end of its game (over every row, masked or not), and the losses
use the rows where the seat acted (its ``"mask"``).

Torch runs on one thread by default (``--threads N`` for more): the networks are small, and
more threads only make each step wait on them (on a busy 2-core machine, 3 iterations took 14 s
against 106 s with torch's default of a thread per core).

    python examples/torchrl_selfplay.py --iterations 100        # a few minutes
    python examples/torchrl_selfplay.py --iterations 2 --steps 128 --games 4   # a smoke run
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import cribenv
from cribenv.integrations.torchrl import GROUP, make_env, masked_policy


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--steps", type=int, default=1024, help="env steps per iteration")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--target", type=int, default=61, choices=(61, 121))
    p.add_argument("--games", type=int, default=50, help="evaluation games against random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (torch.set_num_threads)")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be at least 1")
    return args


def returns_to_go(reward: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
    """Undiscounted per-seat returns over a rollout: ``reward`` (T, seats), ``done`` (T,);
    a game unfinished at the end of the rollout is cut there."""
    out = torch.zeros_like(reward)
    running = torch.zeros_like(reward[0])
    for t in range(reward.shape[0] - 1, -1, -1):
        running = reward[t] + running * (~done[t]).float()
        out[t] = running
    return out


def win_rate_against_random(policy_net: torch.nn.Module, games: int, target: int,
                            seed: int) -> float:
    """The policy (greedy, as player_0) against uniformly random legal cards (player_1)."""
    env = cribenv.env(target=target)
    rng = np.random.default_rng(seed)
    wins = 0
    for g in range(games):
        env.reset(seed=seed + g)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if agent == "player_0":
                with torch.no_grad():
                    logits = policy_net(torch.as_tensor(obs["observation"]))
                card = int(legal[logits[legal].argmax()])
            else:
                card = int(rng.choice(legal))
            env.step(card)
        wins += info["winner"] == 0
    return wins / games


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    env = make_env(target=args.target, reward="points")
    env.set_seed(args.seed)
    policy = masked_policy(env)
    obs_key = (GROUP, "observation", "observation")
    size = env.observation_spec[obs_key].shape[-1]
    value = torch.nn.Sequential(torch.nn.Linear(size, 256), torch.nn.Tanh(),
                                torch.nn.Linear(256, 1))
    optim = torch.optim.Adam([*policy.parameters(), *value.parameters()], lr=args.lr)
    stats: dict[str, float] = {}
    for it in range(1, args.iterations + 1):
        with torch.no_grad():
            data = env.rollout(args.steps, policy, break_when_any_done=False)
        acted = data[GROUP, "mask"]                               # (T, seats) bool
        reward = data["next", GROUP, "reward"].squeeze(-1)        # (T, seats)
        done = data["next", "done"].squeeze(-1)                   # (T,)
        ret = returns_to_go(reward, done)
        v = value(data[obs_key]).squeeze(-1)
        dist = policy.get_dist(data)
        logp = dist.log_prob(data[GROUP, "action"])
        adv = (ret - v).detach()
        adv = (adv - adv[acted].mean()) / (adv[acted].std() + 1e-8)
        policy_loss = -(adv * logp)[acted].mean()
        value_loss = (ret - v)[acted].pow(2).mean()
        entropy = dist.entropy()[acted].mean()
        loss = policy_loss + 0.5 * value_loss - args.entropy * entropy
        optim.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([*policy.parameters(), *value.parameters()], 1.0)
        optim.step()
        stats = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                 "entropy": entropy.item(), "games": float(done.sum())}
        if it % max(1, args.iterations // 10) == 0 or it == args.iterations:
            print(f"iteration {it}: {int(stats['games'])} games ended, value loss "
                  f"{stats['value_loss']:.2f}, entropy {stats['entropy']:.3f}")
    net = policy.module[0].module   # the MLP that makes the logits
    stats["win_rate"] = win_rate_against_random(net, args.games, args.target, args.seed)
    print(f"greedy policy against random: won {stats['win_rate']:.0%} of {args.games} games")
    return stats


if __name__ == "__main__":
    main()
