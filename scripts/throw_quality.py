"""How good are an agent's throws? The exact expected value of the cards it lays away.

Deals ``--deals`` 2-player hands (``Game(Rules(), seed=s)``, the first hand of each game, so
both seats' first throws: dealer and pone). Each agent named throws from every seat (the other
seat throws as greedy, which only fixes the order of the two decisions; a seat's own throw does
not see the other's). Each throw is scored with :func:`cribenv.discard.analyse_discards`: the
kept four's mean show over the 46 starters (``hand``), the crib's mean (the opponent's two cards
taken as random), and ``expected`` (hand + crib when dealing, hand - crib otherwise). The
table gives the means and the *regret*: the best option's ``expected`` minus the one thrown
(pegging ignored, so a throw that keeps good pegging cards may have a small regret by design)::

    python scripts/throw_quality.py --agents greedy expert \
        hour=ppo:results/selfplay-hour/policy.safetensors
"""

from __future__ import annotations

import argparse
import sys

from agents.base import make_agent
from train.evaluation import throw_quality as quality
from train.evaluation import throws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", required=True,
                        help="agent specs, optionally LABEL=SPEC")
    parser.add_argument("--deals", type=int, default=1000, help="game seeds (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="first game seed (default 0)")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    print(f"{'agent':<44}{'role':<8}{'hand':>7}{'crib':>7}{'expected':>10}{'regret':>8}"
          f"{'best %':>8}")
    for item in args.agents:
        label, _, spec = item.rpartition("=")
        try:
            rows = throws(make_agent(spec, seed=0), range(args.seed, args.seed + args.deals))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for role, q in quality(rows).items():
            print(f"{(label or spec)[-44:]:<44}{role:<8}{q['hand']:7.3f}{q['crib']:7.3f}"
                  f"{q['expected']:+10.3f}{q['regret']:8.3f}{100 * q['best']:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
