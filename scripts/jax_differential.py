"""Differential run of the JAX engine: cribenv.jax.Cribbage against Game, action by action.

Plays random games (uniform over the legal cards) on :class:`cribenv.jax.Cribbage` (``vmap``
over a chunk of games, ``jit``) and on one :class:`cribenv.game.Game` per game, from the same
deck orders, and checks after every action the end flag, the scores, the seat to act, the
legal mask, the observations of the seat to act and of the next seat, and at the end the
winner, game points and rewards (:func:`cribenv.jax.differential.play_both`, which
``tests/test_jax_engine.py`` runs on 820 games). The chunks cycle through the targets 121 and
61, with and without skunks, for each player count asked; chunk ``k`` uses seed ``--seed +
k``. On the first difference it prints the seed, game and action and the command that
replays that chunk alone, and exits 1::

    python scripts/jax_differential.py --games 50000 --players 2 --seed 0
    python scripts/jax_differential.py --games 25000 --players 3 --seed 100000
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

# (target, skunks) the chunks cycle through
CONFIGS = [(121, False), (61, True), (121, True), (61, False)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000,
                        help="games in all, shared evenly by the player counts")
    parser.add_argument("--players", type=int, nargs="+", choices=(2, 3, 4), default=[2, 3, 4],
                        help="player counts (default: 2 3 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first chunk")
    parser.add_argument("--chunk", type=int, default=500, help="games played together")
    parser.add_argument("--target", type=int, choices=(121, 61),
                        help="only this target (default: cycle 121 and 61)")
    parser.add_argument("--skunks", type=int, choices=(0, 1),
                        help="only with (1) or without (0) skunks (default: cycle both)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    from tqdm import tqdm

    from cribenv.jax.differential import Mismatch, play_both

    configs = [(t, s) for t, s in CONFIGS if args.target in (None, t)
               and args.skunks in (None, int(s))]
    # the chunks: (players, target, skunks, games), cycling configs within each player count
    chunks = []
    for i, players in enumerate(args.players):
        share = args.games // len(args.players) + (i < args.games % len(args.players))
        for k in itertools.count():
            if share <= 0:
                break
            size = min(args.chunk, share)
            chunks.append((players, *configs[k % len(configs)], size))
            share -= size
    start = time.perf_counter()
    decisions = 0
    by_players = dict.fromkeys(args.players, 0)
    with tqdm(total=args.games, unit="game", disable=args.no_progress) as bar:
        for k, (players, target, skunks, size) in enumerate(chunks):
            seed = args.seed + k
            try:
                decisions += play_both(players, target, skunks, size, seed)
            except Mismatch as exc:
                bar.close()
                print(f"MISMATCH: {exc}", file=sys.stderr)
                print(f"seed {exc.seed}, game {exc.game}, action {exc.action}; replay the chunk: "
                      f"python scripts/jax_differential.py --players {players} --target {target}"
                      f" --skunks {int(skunks)} --games {size} --chunk {size} --seed {seed}",
                      file=sys.stderr)
                return 1
            by_players[players] += size
            bar.update(size)
            bar.set_postfix(decisions=decisions)
    elapsed = time.perf_counter() - start
    counts = ", ".join(f"{n} with {p} players" for p, n in by_players.items())
    print(f"{sum(by_players.values())} games ({counts}), {decisions} decisions, seeds "
          f"{args.seed}..{args.seed + len(chunks) - 1}: cribenv.jax equals Game action by "
          f"action ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
