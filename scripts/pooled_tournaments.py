"""One agent's win rate pooled over several tournament databases, with a 95% interval over
duplicate units (a deal's two seatings, each database's deals its own), and its paired
difference with a second set of databases (the same seeds and opponents, database by
database, so unit ``(i, deal)`` is the same deal in both)::

    python scripts/pooled_tournaments.py A_s0.sqlite,A_s1.sqlite B_s0.sqlite,B_s1.sqlite

The agent is the one labelled ``--label`` (default ``S``, as in ``cribenv tournament --agents
S=SPEC OPPONENT``). This made the paired figures of ``results/search/README.md``'s sharper
models (then ``results/search/sharper-models/pooled.py``, commit ``77bb685``). For two single
databases, ``scripts/paired_tournaments.py`` gives the interval over deals and seatings.
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import sys
from pathlib import Path


def units(dbs: list[str], label: str) -> dict[tuple[int, int], list[int]]:
    """``(database, deal) -> [1 if label won, ...]`` over both seatings."""
    out: dict[tuple[int, int], list[int]] = {}
    for i, db in enumerate(dbs):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT deal, winner, agent_a, agent_b FROM games")
            for deal, winner, a, b in rows:
                if label in (a, b):
                    out.setdefault((i, deal), []).append(int(winner == label))
    return out


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and 95% half-width (normal) of ``values``; no width for one value."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    var = sum((x - mean) ** 2 for x in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def show(name: str, mean: float, half: float, games: int) -> None:
    print(f"{name}: {100 * mean:+.1f}% [{100 * (mean - half):+.1f}, "
          f"{100 * (mean + half):+.1f}] over {games} games")


def databases(parser: argparse.ArgumentParser, given: str) -> list[str]:
    """The comma-separated files of ``given``, each a tournament database, or exit 2."""
    dbs = [d for d in given.split(",") if d]
    for db in dbs:
        if not Path(db).is_file():
            parser.error(f"no tournament database at {db}")
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                conn.execute("SELECT deal, winner, agent_a, agent_b FROM games LIMIT 1")
        except sqlite3.DatabaseError as exc:
            parser.error(f"{db} is not a tournament database ({exc})")
    if not dbs:
        parser.error("name at least one database")
    return dbs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="databases of the first set, comma-separated")
    parser.add_argument("b", nargs="?", help="databases of the second set, comma-separated")
    parser.add_argument("--label", default="S", help="the agent's label (default S)")
    args = parser.parse_args(argv)
    sets = [databases(parser, args.a)] + ([databases(parser, args.b)] if args.b else [])
    found = [units(dbs, args.label) for dbs in sets]
    for dbs, got in zip(sets, found):
        if not got:
            parser.error(f"no game of {args.label!r} in {','.join(dbs)}")
    for name, got in zip("AB", found):
        show(f"{name} wins", *interval([sum(v) / len(v) for v in got.values()]),
             sum(map(len, got.values())))
    if len(found) == 2:
        a, b = found
        keys = sorted(set(a) & set(b))
        if not keys:
            parser.error("the two sets share no deal")
        diffs = [sum(a[k]) / len(a[k]) - sum(b[k]) / len(b[k]) for k in keys]
        show("A - B, paired", *interval(diffs), 2 * len(keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
