"""A policy file (or any agent) against one opponent on duplicate deals, as the trainers
evaluate (:func:`train.evaluation.evaluate`): each deal twice, seats swapped, on the deals of
``cribenv tournament --seed SEED``. Prints the win rate with its 95% interval and the net
match points a game::

    python scripts/head_to_head.py results/expert-iteration/policy.safetensors expert \\
        --games 10000 --seed 2026

This made ``results/expert-iteration/evaluations.txt`` (then
``results/expert-iteration/h2h.py``, commit ``bd14062``). An agent spec (``search:ppo:shipped``,
``expert``) is taken as it is; anything else is a policy file, played as ``ppo:PATH``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents import make_agent
from train.evaluation import evaluate


def agent_spec(policy: str) -> str:
    """``ppo:PATH`` for a policy file, the spec itself otherwise."""
    return f"ppo:{policy}" if policy.endswith(".safetensors") else policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="a policy file (.safetensors) or an agent spec")
    parser.add_argument("opponent", help="the opponent's agent spec, e.g. expert")
    parser.add_argument("--games", type=int, default=10000,
                        help="games, rounded down to an even number (default 10000)")
    parser.add_argument("--seed", type=int, default=2026, help="deal seed (default 2026)")
    parser.add_argument("--target", type=int, choices=(61, 121), default=121)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error(f"--games must be at least 2, got {args.games}")
    spec = agent_spec(args.policy)
    try:
        agent = make_agent(spec, seed=0)
        make_agent(args.opponent, seed=0)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    r = evaluate(agent, args.opponent, args.games, seed=args.seed, target=args.target)
    print(f"{Path(args.policy).name} vs {args.opponent} {100 * r['win_rate']:.1f}% "
          f"[{100 * r['win_lo']:.1f}, {100 * r['win_hi']:.1f}] net {r['net_points']:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
