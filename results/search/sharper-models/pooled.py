"""Win rate of the agent labelled ``S`` pooled over tournament databases, with a 95% interval
over duplicate units (a deal's two seatings), and its paired difference with a second set.

    python pooled.py A1.sqlite,A2.sqlite B1.sqlite,B2.sqlite
"""

from __future__ import annotations

import math
import sqlite3
import sys

LABEL = "S"


def units(dbs: list[str]) -> dict[tuple[int, int], list[int]]:
    """``(database, deal) -> [1 if S won, ...]`` over both seatings."""
    out: dict[tuple[int, int], list[int]] = {}
    for i, db in enumerate(dbs):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT deal, winner, agent_a, agent_b FROM games")
            for deal, winner, a, b in rows:
                if LABEL in (a, b):
                    out.setdefault((i, deal), []).append(int(winner == LABEL))
    return out


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and 95% half-width (normal) of ``values``."""
    n = len(values)
    mean = sum(values) / n
    var = sum((x - mean) ** 2 for x in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def show(name: str, mean: float, half: float, games: int) -> None:
    print(f"{name}: {100 * mean:+.1f}% [{100 * (mean - half):+.1f}, "
          f"{100 * (mean + half):+.1f}] over {games} games")


def main() -> None:
    a = units(sys.argv[1].split(","))
    show("A wins", *interval([sum(v) / len(v) for v in a.values()]),
         sum(map(len, a.values())))
    if len(sys.argv) > 2:
        b = units(sys.argv[2].split(","))
        show("B wins", *interval([sum(v) / len(v) for v in b.values()]),
             sum(map(len, b.values())))
        keys = sorted(set(a) & set(b))
        diffs = [sum(a[k]) / len(a[k]) - sum(b[k]) / len(b[k]) for k in keys]
        show("A - B, paired", *interval(diffs), 2 * len(keys))


if __name__ == "__main__":
    main()
