"""What limits the search agent: the same search given the real deal (a perfect-information
oracle) beside the search on sampled deals and its base, on the same duplicate deals.

Each deal is played twice (seats swapped) by each of ``search:BASE``, the oracle (the same
search, every playout dealt the real unseen cards) and BASE alone, against ``--opponent``.
Prints each one's win rate with a 95% interval and the paired differences, and writes them as
JSON with ``--out``::

    python scripts/search_limits.py --base ppo:shipped --deals 200 --out limits.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from agents import make_agent
from agents.search import SearchAgent
from cribenv.game import Game, Rules
from cribenv.positions import Hidden, actual_hidden
from tournament.workers import init_worker


class OracleSearch(SearchAgent):
    """The search agent whose deals are all the real one (``game`` is set at each turn)."""

    game: Game | None = None

    def _deals(self, view, num: int) -> Hidden:
        real = actual_hidden(self.game, view.seat)
        return Hidden(*(np.repeat(a, num, axis=0) for a in (real.hands, real.discards,
                                                            real.crib_card, real.deck)))


def _play(mode: str, base: str, opponent: str, playouts: int, deal: int, swap: int) -> int:
    """1 if the searched side wins deal ``deal`` with seats swapped by ``swap``."""
    if mode == "base":
        me = make_agent(base, seed=deal)
    elif mode == "oracle":
        me = OracleSearch(base, seed=deal, playouts=playouts)
    else:
        me = make_agent(f"search:{base}?playouts={playouts}", seed=deal)
    them = make_agent(opponent, seed=deal + 1)
    seat = swap
    bots = [them, them]
    bots[seat] = me
    game = Game(Rules(), seed=10_000 + deal, first_dealer=0)
    while game.current_player is not None:
        p = game.current_player
        if isinstance(bots[p], OracleSearch):
            bots[p].game = game
        game.step(bots[p].choose(game.view(p), game.legal_actions()))
    return int(game.winner == seat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="ppo:shipped", help="the base agent (ppo:shipped)")
    parser.add_argument("--opponent", default="expert", help="the opponent (expert)")
    parser.add_argument("--deals", type=int, default=200, help="deals, each played twice (200)")
    parser.add_argument("--playouts", type=int, default=600, help="playouts a decision (600)")
    parser.add_argument("--workers", type=int, default=2, help="processes (2)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.deals < 2 or args.playouts < 1 or args.workers < 1:
        parser.error(f"--deals must be at least 2 and --playouts, --workers at least 1, got "
                     f"{args.deals}, {args.playouts}, {args.workers}")
    try:
        make_agent(args.base)
        make_agent(args.opponent)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    modes = ("base", "search", "oracle")
    jobs = [(m, args.base, args.opponent, args.playouts, d, s)
            for d in range(args.deals) for s in (0, 1) for m in modes]
    with ProcessPoolExecutor(args.workers, initializer=init_worker) as pool:
        wins = list(pool.map(_play, *zip(*jobs), chunksize=8))
    table = {m: np.array([w for j, w in zip(jobs, wins) if j[0] == m], float) for m in modes}
    result = {}
    for m in modes:
        p = table[m].mean()
        half = 1.96 * math.sqrt(p * (1 - p) / len(table[m]))
        result[m] = {"win_rate": p, "half_width": half, "games": len(table[m])}
        print(f"{m:>7}: {p:.1%} +- {half:.1%} of {len(table[m])} games against {args.opponent}")
    for a, b in (("search", "base"), ("oracle", "search"), ("oracle", "base")):
        d = table[a] - table[b]
        half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
        result[f"{a}-{b}"] = {"difference": d.mean(), "half_width": half}
        print(f"{a} - {b}: {d.mean():+.1%} +- {half:.1%} (paired)")
    if args.out:
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
