"""The 3- and 4-player tables of results/search/README.md: ``ppo:shipped`` and
``search:ppo:shipped`` against experts (``train.evaluation.evaluate_table``, seed 0).

    python results/search/2026-12-02/tables.py PLAYERS DEALS OUT.json
"""

import json
import sys

from agents import make_agent
from train.evaluation import evaluate_table

players, deals, out_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
out = {}
for spec in ("ppo:shipped", "search:ppo:shipped"):
    r = evaluate_table(make_agent(spec, seed=0), "expert", players, deals=deals, seed=0,
                       target=121)
    out[spec] = r
    print(f"{players} {spec} {100 * r['win_rate']:.1f}% [{100 * r['win_lo']:.1f}, "
          f"{100 * r['win_hi']:.1f}] fair {r['fair_share']:.3f} net {r['net_points']:+.3f} "
          f"games {r['games']}", flush=True)
with open(out_path, "w") as fh:
    json.dump(out, fh, indent=1)
