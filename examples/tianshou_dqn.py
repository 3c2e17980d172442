"""Tianshou 2: a masked DQN learns Cribbage against a random player (multi-agent API).

The env is :class:`cribenv.integrations.tianshou.CribbageTianshouEnv`, which credits every
agent the rewards it earned (the final result included) on its own rows. ``player_0`` learns
with Tianshou's ``DQN`` (its ``DiscreteQLearningPolicy`` reads the legal cards from
``obs.mask``), ``player_1`` plays uniformly among its legal cards. Each iteration collects
some steps and makes some gradient steps; the learner's result against the random player is
printed as it goes, and evaluated greedily at the end.

Torch runs on one thread by default (``--threads N`` for more): the networks are small, and
more threads only make each step wait on them (on a busy 2-core machine, 10 iterations took
20 s against 76 s with torch's default of a thread per core).

    python examples/tianshou_dqn.py --iterations 200       # a few minutes
    python examples/tianshou_dqn.py --iterations 3 --games 4   # a smoke run (what the test does)
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step

from cribenv.integrations.tianshou import CribbageTianshouEnv

LEARNER = "player_0"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=200, help="collect + update rounds")
    p.add_argument("--envs", type=int, default=4, help="games played side by side")
    p.add_argument("--steps", type=int, default=256, help="env steps collected per iteration")
    p.add_argument("--updates", type=int, default=16, help="gradient steps per iteration")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--target", type=int, default=61, choices=(61, 121))
    p.add_argument("--games", type=int, default=20, help="greedy evaluation games at the end")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (torch.set_num_threads)")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be at least 1")
    return args


def make_algorithm(env: CribbageTianshouEnv) -> MultiAgentOffPolicyAlgorithm:
    """A masked DQN for the learner, a masked random player for the other seat."""
    net = Net(state_shape=env.observation_space["observation"].shape,
              action_shape=env.action_space.n, hidden_sizes=[256, 256])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                     eps_training=0.1, eps_inference=0.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=3e-4), gamma=0.99,
              n_step_return_horizon=1, target_update_freq=200)
    random_player = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    players = {LEARNER: dqn}
    return MultiAgentOffPolicyAlgorithm(
        algorithms=[players.get(a, random_player) for a in env.agents], env=env)


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    # multi-agent episode returns have a column per agent, which Tianshou's stats logger
    # warns about at every collect; the columns are what this script reads
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    def make_env() -> CribbageTianshouEnv:
        return CribbageTianshouEnv(target=args.target, reward="win")

    algorithm = make_algorithm(make_env())
    column = make_env().agent_idx[LEARNER]
    envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    envs.seed(args.seed)
    buffer = VectorReplayBuffer(20_000, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    results: list[float] = []
    loss = float("nan")
    for it in range(1, args.iterations + 1):
        stats = collector.collect(n_step=args.steps)
        results += list(stats.returns[:, column]) if len(stats.returns) else []
        with policy_within_training_step(algorithm.policy):
            for _ in range(args.updates):
                train = algorithm.update(buffer, sample_size=args.batch_size)
        loss = float(train.get_loss_stats_dict().get(f"{LEARNER}/loss", np.nan))
        if it % max(1, args.iterations // 10) == 0 or it == args.iterations:
            recent = results[-50:]
            print(f"iteration {it}: {len(results)} games, learner's mean result over the "
                  f"last {len(recent)}: {np.mean(recent) if recent else float('nan'):+.2f}, "
                  f"loss {loss:.4f}")
    eval_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    eval_envs.seed(args.seed + 1)
    algorithm.eval()
    evaluation = Collector(algorithm, eval_envs).collect(n_episode=args.games,
                                                         reset_before_collect=True)
    wins = float(np.mean(evaluation.returns[:, column] > 0))
    print(f"greedy learner against the random player: won {wins:.0%} of {args.games} games")
    return {"games": float(len(results)), "loss": loss, "eval_win_rate": wins}


if __name__ == "__main__":
    main()
