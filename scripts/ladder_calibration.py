"""Freeze a ladder deal set: its game seeds, their fingerprint and the anchors' fixed ratings.

The anchors play a round robin on the set's first ``--calibration-deals`` deals (a resumable
tournament in ``ladder/``); their Bradley-Terry ratings on the Elo scale, shifted so that
expert is 1500, become the fixed scale of every later ladder run on the set. Run once per deal
set (this is how ``tournament/ladder/data/cribenv-ladder-v1.json`` was made)::

    python scripts/ladder_calibration.py --workers 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from cribenv.files import write_text
from tournament import run_tournament
from tournament.ladder.deals import LADDER_FILE, fingerprint
from tournament.schedule import deal_seed

NAME = "cribenv-ladder-v1"
SEED = 121121
DEALS = 1000
HERE = "{here}"   # the ladder file's folder, filled in when the file is read
ANCHORS = [("random", "random"), ("greedy", "greedy"), ("expert", "expert"),
           ("ppo-2026-12-02", f"ppo:{HERE}/ppo-2026-12-02.safetensors"),
           ("search-2026-12-02", f"search:ppo:{HERE}/ppo-2026-12-02.safetensors?playouts=200")]
SCALE = ("Bradley-Terry on the Elo scale (a difference of 400 is 10 wins to 1), expert = 1500; "
         "the other anchors' ratings were fitted once to their round robin on this set and are "
         "fixed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibration-deals", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=str(LADDER_FILE))
    args = parser.parse_args()
    seeds = [deal_seed(SEED, d) for d in range(DEALS)]
    here = str(Path(args.out).resolve().parent)
    specs = [f"{label}={spec.replace(HERE, here)}" for label, spec in ANCHORS]
    report = run_tournament(specs, 2 * args.calibration_deals, workers=args.workers,
                            db_path=Path("ladder") / f"{NAME}-calibration.sqlite", seed=SEED,
                            bootstrap=0)
    print(report.format())
    ratings = {r.agent: r.rating for r in report.ratings}
    shift = 1500.0 - ratings["expert"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    data = {
        "name": NAME, "seed": SEED, "scale": SCALE,
        "anchors": [{"label": label, "spec": spec, "rating": round(ratings[label] + shift, 1)}
                    for label, spec in ANCHORS],
        "calibration": {"deals": args.calibration_deals, "commit": commit,
                        "pairs": [{"a": p.agent_a, "b": p.agent_b, "games": p.games,
                                   "a_win": round(p.win_rate_a.value, 4)}
                                  for p in report.pairs]},
        "sha256": fingerprint(seeds), "game_seeds": seeds,
    }
    write_text(args.out, json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
