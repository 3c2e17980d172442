"""The search's win rate against its time a decision: one point per tournament report (the
``tournament.json`` of ``cribenv tournament --agents S=search:...?playouts=N OPPONENT``), with
its 95% interval, the time the tournament measured per decision asked, and a dashed line at
the base's own rate if given. A report is the first agent's pair (``--opponent NAME``: its pair
against NAME, in any case); ``LABEL=PATH`` names its point.

    python scripts/budget_curve.py results/search/budget.png S600.json S1500.json S3000.json \\
        --base P.json --title "search:ppo:shipped against expert, 2,000 games each"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def point(report: str | Path, opponent: str | None = None
          ) -> tuple[str, float, float, float, float]:
    """``(label, ms a decision, win rate, low, high)`` of the first agent of a report (against
    ``opponent`` if named); ``report`` may be ``LABEL=PATH``."""
    name, _, path = str(report).rpartition("=")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    pair = next((p for p in data["pairs"]
                 if opponent is None or opponent.lower() == p["agent_b"].lower()), None)
    if pair is None:
        raise ValueError(f"{path} has no pair against {opponent!r}")
    agent = pair["agent_a"]
    rate = pair["win_rate_a"]
    return (name or agent, data["think_ms_per_decision"][agent], rate["value"], rate["low"],
            rate["high"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("reports", nargs="+", help="tournament.json files ([LABEL=]PATH)")
    parser.add_argument("--base", help="the base's report (a dashed line)")
    parser.add_argument("--opponent", help="the opponent whose pair to read (default: the "
                        "first pair)")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    try:
        points = sorted((point(r, args.opponent) for r in args.reports), key=lambda p: p[1])
        base = point(args.base, args.opponent) if args.base else None
    except (OSError, KeyError, IndexError, ValueError) as exc:
        print(f"error: cannot read a report: {exc}", file=sys.stderr)
        return 2
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    xs = [p[1] for p in points]
    ys = [100 * p[2] for p in points]
    err = [[100 * (p[2] - p[3]) for p in points], [100 * (p[4] - p[2]) for p in points]]
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, label="search")
    for label, x, y, *_ in points:
        ax.annotate(label, (x, 100 * y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    if base is not None:
        ax.axhline(100 * base[2], ls="--", color="grey",
                   label=f"{base[0]} alone ({base[1]:.1f} ms)")
    ax.axhline(50, color="black", lw=0.6)
    ax.set_xscale("log")
    ax.set_xlabel("ms a decision asked (the tournament's own timing)")
    ax.set_ylabel("games won, % (95% interval)")
    ax.set_title(args.title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
