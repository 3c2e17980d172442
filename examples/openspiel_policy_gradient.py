"""Self-play policy gradient from OpenSpiel's own algorithms on Cribbage (``python_cribenv``).

One file, top to bottom: the settings, OpenSpiel's ``rl_environment`` on the game, one
``open_spiel.python.pytorch.policy_gradient.PolicyGradient`` learner a seat (A2C by default;
``--loss rpg``, ``qpg`` or ``rm`` for the regret-based losses of Srinivasan et al. 2018), the
self-play loop, then seat 0's mean return against uniformly random play. The information state
is :func:`cribenv.observation.encode` of the seat's view; the returns are the game points
(skunks count double or treble).

    python examples/openspiel_policy_gradient.py --episodes 200 --target 61

needs the 'openspiel' extra (open_spiel) and torch (the 'train' extra). A short run learns
little: a 61-point game is about 60 decisions a seat, and its result is a noisy signal.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

import numpy as np
import pyspiel
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import policy_gradient

import cribenv.integrations.openspiel  # noqa: F401 - registers python_cribenv


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200, help="self-play games")
    parser.add_argument("--loss", default="a2c", choices=["a2c", "rpg", "qpg", "rm"])
    parser.add_argument("--target", type=int, default=61, choices=[61, 121])
    parser.add_argument("--eval-games", type=int, default=50,
                        help="games of seat 0 against random play at the end")
    parser.add_argument("--critic-steps", type=int, default=4,
                        help="critic updates before each policy update")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def play(env: rl_environment.Environment, players: list[Any], learn: bool) -> list[float]:
    """One game; ``players[p]`` is a learner (``.step(time_step)``) or None (random)."""
    time_step = env.reset()
    while not time_step.last():
        seat = time_step.observations["current_player"]
        player = players[seat]
        if player is None:
            action = random.choice(time_step.observations["legal_actions"][seat])
        else:
            action = player.step(time_step, is_evaluation=not learn).action
        time_step = env.step([action])
    for player in players:        # the learners see the final rewards
        if player is not None:
            player.step(time_step, is_evaluation=not learn)
    return time_step.rewards


def last_loss(learner: Any) -> tuple[float, float] | None:
    """The learner's last (critic, policy) losses; None before its first policy update."""
    try:
        return tuple(float(x.detach()) if hasattr(x, "detach") else float(x)
                     for x in learner.loss)
    except AttributeError:         # PolicyGradient sets them at its first updates
        return None


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    random.seed(args.seed)
    np.random.seed(args.seed)          # PolicyGradient samples its actions with np.random
    torch.manual_seed(args.seed)
    game = pyspiel.load_game("python_cribenv", {"players": 2, "target": args.target})
    env = rl_environment.Environment(
        game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=args.seed))
    size = env.observation_spec()["info_state"][0]
    learners = [policy_gradient.PolicyGradient(
        seat, size, env.action_spec()["num_actions"], loss_str=args.loss,
        hidden_layers_sizes=(128,), batch_size=16, num_critic_before_pi=args.critic_steps)
        for seat in range(2)]

    losses = []
    for episode in range(args.episodes):
        play(env, learners, learn=True)     # a game is more than a batch: it learns each game
        loss = last_loss(learners[0])
        if loss is not None:
            losses.append(loss)
        if (episode + 1) % 50 == 0:
            print(f"episode {episode + 1}: seat 0 losses (critic, pi) {losses[-1:]}")

    returns = [play(env, [learners[0], None], learn=False)[0] for _ in range(args.eval_games)]
    mean = float(np.mean(returns)) if returns else 0.0
    print(f"seat 0 against random play: mean return {mean:+.2f} over {len(returns)} games")
    return {"episodes": args.episodes, "losses": losses, "mean_return": mean}


if __name__ == "__main__":
    main()
