"""The 10,000-game evaluations of results/expert-iteration (``evaluations.txt``): a policy file
against one opponent on the duplicate deals of ``cribenv tournament --seed SEED``.

    python results/expert-iteration/h2h.py POLICY OPPONENT GAMES SEED
"""

import sys

from agents import make_agent
from train.evaluation import evaluate

path, opponent, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = evaluate(make_agent(f"ppo:{path}", seed=0), opponent, games, seed=seed, target=121)
print(f"{path.split('/')[-1]} vs {opponent} {100 * r['win_rate']:.1f}% "
      f"[{100 * r['win_lo']:.1f}, {100 * r['win_hi']:.1f}] net {r['net_points']:+.3f}")
