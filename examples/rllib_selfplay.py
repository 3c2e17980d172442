"""Self-play PPO on Cribbage with RLlib's new API stack (``cribenv.integrations.rllib``).

The learner plays against itself and against frozen copies of itself, refreshed as it learns;
illegal cards are masked by the module. Then one game of the learner, greedy, against a frozen
copy.

    python examples/rllib_selfplay.py --iterations 20 --env-runners 2
    python examples/rllib_selfplay.py --address auto     # on the Ray cluster of this machine

Torch runs on one thread in this process (the learner's updates, the game at the end) by default
(``--threads N`` for more); the env runners are Ray's processes, with Ray's thread settings (as
many as each runner's CPUs, one by default).

(``cribenv train --backend rllib`` runs the same algorithm with checkpoints, resume and an
evaluation against the bots.) Needs the 'rllib' extra.
"""

from __future__ import annotations

import argparse
import math

import ray
import torch
from ray.rllib.core.columns import Columns

from cribenv.integrations import rllib


def play_one_game(algo, seed: int = 0) -> dict:
    """The learner (player_0) against the first frozen copy, each taking its likeliest card."""
    env = rllib.CribbageMultiAgentEnv()
    modules = {"player_0": algo.get_module(rllib.LEARNER),
               "player_1": algo.get_module(rllib.frozen_ids(1)[0])}
    obs, _ = env.reset(seed=seed)
    while True:
        [(agent, o)] = obs.items()
        batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in o.items()}}
        with torch.no_grad():
            logits = modules[agent].forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        obs, _, terminateds, _, infos = env.step({agent: int(logits.argmax())})
        if terminateds["__all__"]:
            return infos["player_0"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--env-runners", type=int, default=2, help="Ray actors collecting games")
    parser.add_argument("--batch", type=int, default=2000, help="env steps per PPO update")
    parser.add_argument("--address", help="an existing Ray cluster (default: start one here)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads in this process (torch.set_num_threads)")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)
    started = not ray.is_initialized()
    if started:
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    config = rllib.ppo_config(
        num_env_runners=args.env_runners, frozen=2, self_play_share=0.5,
        snapshot_every=5 * args.batch, hidden=[128, 128], lr=3e-4,
        train_batch_size_per_learner=args.batch, minibatch_size=min(256, args.batch),
        num_epochs=4, entropy_coeff=0.01)
    algo = config.build_algo()
    try:
        for _ in range(args.iterations):
            runners = algo.train()["env_runners"]
            win = runners.get("learner_win_vs_frozen", math.nan)
            print(f"iteration {algo.iteration}: {runners['num_env_steps_sampled_lifetime']:,.0f} "
                  f"env steps, learner won {win:.0%} of its recent games against frozen copies")
        print("one game, learner (player_0) against frozen_0:", play_one_game(algo))
    finally:
        algo.stop()
        if started:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
