"""An agent against heuristic bots at a table of 2, 3 or 4 players, duplicate deals.

:func:`train.evaluation.evaluate_table` for each bot named: the agent plays one side (one seat,
or both partners' seats in 4 players), the bot every other seat, and each deal is played once
per side. Prints a line per bot (win rate with its 95% interval, the fair share, net points
of the env's win reward a game) and writes them as JSON with ``--out``::

    python scripts/evaluate_table.py --agent ppo:results/selfplay-keeps-3p/policy.safetensors \\
        --players 3 --bots random greedy expert --deals 200 --out final_vs_bots.json
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from agents import make_agent
from tournament.workers import init_worker
from train.evaluation import evaluate_table


def _one(agent: str, bot: str, players: int, deals: int, seed: int, target: int) -> dict:
    return evaluate_table(make_agent(agent, seed=0), bot, players, deals, seed, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", required=True, help="agent spec, e.g. ppo:PATH or expert")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), required=True)
    parser.add_argument("--bots", nargs="+", default=["random", "greedy", "expert"],
                        help="bot specs to play against (default: random greedy expert)")
    parser.add_argument("--deals", type=int, default=200,
                        help="deals per bot; each is played once per side (default 200)")
    parser.add_argument("--seed", type=int, default=2026, help="deal seed (default 2026)")
    parser.add_argument("--target", type=int, choices=(61, 121), default=121)
    parser.add_argument("--workers", type=int, default=2, help="processes, one bot each")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.workers < 1:
        parser.error(f"--deals and --workers must be at least 1, got {args.deals} and "
                     f"{args.workers}")
    try:
        make_agent(args.agent, seed=0)
        for bot in args.bots:
            make_agent(bot, seed=0)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    with ProcessPoolExecutor(args.workers, initializer=init_worker) as pool:
        jobs = {bot: pool.submit(_one, args.agent, bot, args.players, args.deals, args.seed,
                                 args.target) for bot in args.bots}
        results = {bot: job.result() for bot, job in jobs.items()}
    for bot, r in results.items():
        print(f"{args.agent} vs {bot} ({args.players} players, {r['games']} games): "
              f"{r['win_rate']:.1%} [{r['win_lo']:.1%}, {r['win_hi']:.1%}], fair share "
              f"{r['fair_share']:.1%}, net {r['net_points']:+.3f} a game")
    if args.out:
        tmp = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp.write_text(json.dumps(results, indent=2) + "\n")
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
