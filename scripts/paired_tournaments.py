"""The paired difference of two agents' win rates over the same duplicate deals, each read from
its own tournament database (the same ``--seed`` and opponent, so game ``(deal, seating)`` is
the same deal in both): far tighter than comparing the two win rates, since most games are won
or lost alike by both.

    python scripts/paired_tournaments.py A.sqlite LABEL_A B.sqlite LABEL_B [--opponent NAME]
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from pathlib import Path


def wins(db: Path, label: str, opponent: str | None = None) -> dict[tuple[int, int], int]:
    """``(deal, seating) -> 1 if label won`` for every game of ``label`` in ``db`` (against
    ``opponent`` alone, if named). A round robin's database holds the same ``(deal, seating)``
    once per pair, so ``label`` with more than one opponent there needs ``opponent``."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT deal, seating, winner, agent_a, agent_b FROM games")
        games = [(d, s, w, b if a == label else a) for d, s, w, a, b in rows
                 if label in (a, b)]
    others = {o for *_, o in games}
    if opponent is None and len(others) > 1:
        raise ValueError(f"{db} holds games of {label!r} against {', '.join(sorted(others))}: "
                         f"name one with --opponent")
    return {(d, s): int(w == label) for d, s, w, o in games if opponent in (None, o)}


def paired(a: dict, b: dict) -> dict[str, float]:
    """Mean and 95% half-width of ``a - b`` over the games both hold, and how many differ."""
    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        raise ValueError(f"the databases share {len(keys)} games; at least 2 are needed")
    d = [a[k] - b[k] for k in keys]
    mean = sum(d) / len(d)
    var = sum((x - mean) ** 2 for x in d) / (len(d) - 1)
    # the same over duplicate units (a deal's games together), as the tournament's intervals
    units: dict[int, list[int]] = {}
    for (deal, _), x in zip(keys, d):
        units.setdefault(deal, []).append(x)
    u = [sum(x) / len(x) for x in units.values()]
    var_u = sum((x - mean) ** 2 for x in u) / (len(u) - 1) if len(u) > 1 else float("nan")
    return {"games": len(keys), "difference": mean,
            "half_width": 1.96 * math.sqrt(var / len(d)),
            "half_width_deals": 1.96 * math.sqrt(var_u / len(u)),
            "differing": sum(1 for x in d if x) / len(d)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db_a", type=Path)
    parser.add_argument("label_a")
    parser.add_argument("db_b", type=Path)
    parser.add_argument("label_b")
    parser.add_argument("--opponent", help="only the games against this agent (needed where "
                                           "a label played several, as in a round robin)")
    args = parser.parse_args(argv)
    try:
        for db in (args.db_a, args.db_b):
            if not db.is_file():
                raise ValueError(f"no tournament database at {db}")
        a = wins(args.db_a, args.label_a, args.opponent)
        b = wins(args.db_b, args.label_b, args.opponent)
        for label, got, db in ((args.label_a, a, args.db_a), (args.label_b, b, args.db_b)):
            if not got:
                raise ValueError(f"{db} holds no game of {label!r}")
        result = paired(a, b)
    except (ValueError, sqlite3.Error) as exc:
        parser.error(str(exc))
    print(json.dumps(result))
    print(f"{args.label_a} - {args.label_b}: {result['difference']:+.1%} +- "
          f"{result['half_width']:.1%} over {result['games']} paired games "
          f"({result['differing']:.1%} of them differ; +- "
          f"{result['half_width_deals']:.1%} over deals)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
