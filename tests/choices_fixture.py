"""Record or check the bots' choices on fixed games (the refactor guard of issue 9).

Each game is driven through the public API only (``Game``, ``observation.encode``,
``make_agent(...).act``), so the record holds whatever the bots chose before a change and the
test fails on the first decision that differs after it.

    python tests/choices_fixture.py --write    # re-record (only for a deliberate change)
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

import numpy as np

from agents import make_agent
from cribenv.game import Game, Rules
from cribenv.observation import encode

FIXTURE = Path(__file__).resolve().parent / "data" / "choices_fixed.json"

# (rules kwargs, agent specs by seat, first seed, games)
MATCHES = [
    ({"num_players": 2}, ["ppo:shipped", "expert"], 1000, 150),
    ({"num_players": 2}, ["expert", "ppo:shipped"], 1000, 150),
    ({"num_players": 2}, ["greedy", "expert"], 2000, 60),
    ({"num_players": 2, "target": 61}, ["random", "greedy"], 3000, 40),
    ({"num_players": 3}, ["expert", "greedy", "random"], 4000, 20),
    ({"num_players": 4}, ["greedy", "expert", "random", "expert"], 5000, 20),
]


def play(rules_kwargs: dict, specs: list[str], seed: int) -> tuple[bytes, list[int]]:
    """The card ids chosen in one game, in order, as bytes, and the seat of each decision."""
    rules = Rules(**rules_kwargs)
    agents = [make_agent(spec, seed=seed * 10 + i) for i, spec in enumerate(specs)]
    game = Game(rules, seed=seed)
    out = bytearray()
    seats = []
    while game.current_player is not None:
        seat = game.current_player
        mask = np.zeros(52, np.int8)
        mask[game.legal_actions()] = 1
        card = int(agents[seat].act({"observation": encode(game.view(seat)),
                                     "action_mask": mask}))
        game.step(card)
        out.append(card)
        seats.append(seat)
    return bytes(out), seats


def record() -> dict:
    matches = []
    for rules_kwargs, specs, first, n in MATCHES:
        games = [base64.b64encode(play(rules_kwargs, specs, first + g)[0]).decode()
                 for g in range(n)]
        matches.append({"rules": rules_kwargs, "agents": specs, "first_seed": first,
                        "games": games})
    return {"matches": matches}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="re-record the fixture")
    args = parser.parse_args()
    if args.write:
        FIXTURE.write_text(json.dumps(record(), indent=0) + "\n")
        print(f"wrote {FIXTURE}")
