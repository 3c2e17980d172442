"""Paired differences of results/search/README.md: an agent's wins against one opponent in a
tournament database minus another agent's in another, over the games both hold (the same
deals and seats), with a 95% interval over duplicate units (deals). Unlike
``scripts/paired_tournaments.py`` it keeps only the games against ``OPPONENT``, so a database
of a round robin of several agents can be read.

    python results/search/2026-12-02/paired.py DB_A LABEL_A DB_B LABEL_B [OPPONENT]
"""

import collections
import math
import sqlite3
import sys


def wins(db: str, label: str, opponent: str) -> dict[tuple[int, int], int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT deal, seating, winner, agent_a, agent_b FROM games")
    return {(d, s): int(w == label) for d, s, w, a, b in rows if {a, b} == {label, opponent}}


def paired(db_a: str, label_a: str, db_b: str, label_b: str, opponent: str = "expert"):
    a, b = wins(db_a, label_a, opponent), wins(db_b, label_b, opponent)
    per_deal: dict[int, float] = collections.defaultdict(float)
    keys = sorted(set(a) & set(b))
    for deal, seating in keys:
        per_deal[deal] += (a[deal, seating] - b[deal, seating]) / 2
    d = list(per_deal.values())
    mean = sum(d) / len(d)
    sd = (sum((x - mean) ** 2 for x in d) / (len(d) - 1)) ** 0.5
    return len(keys), mean, 1.96 * sd / math.sqrt(len(d))


if __name__ == "__main__":
    games, mean, half = paired(*sys.argv[1:6])
    print(f"{games} games: {100 * mean:+.1f}% [{100 * (mean - half):+.1f}, "
          f"{100 * (mean + half):+.1f}]")
