"""The Cribbage Bot Protocol's cost: a trivial bot (the first legal card) asked in this process
and as a ``cmd:`` program (:mod:`agents.external`), over the same decisions, in the same run.
The difference is the protocol's overhead a decision: the message built and written, the
program's JSON round trip, the answer read and checked (goal: under 100 microseconds).

The decisions are those of seeded 2-player games of ``greedy`` against ``greedy`` (every decision
with a choice). The floor beside it: a bare round trip of one short line through the same pipes
to a Python program that answers a constant, waited for the same way (polled, then slept on).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from train.benchmarks._timing import fmt_rate

ORDER = 45
GOAL_US = 100.0
#: The bot program: the first legal card, in the fewest lines a protocol bot can have.
TRIVIAL = ("import json, sys\n"
           "for line in sys.stdin:\n"
           "    m = json.loads(line)\n"
           "    if m['type'] == 'hello':\n"
           "        print(json.dumps({'type': 'hello', 'name': 'first-legal', 'version': 1}),"
           " flush=True)\n"
           "    elif m['type'] == 'decide':\n"
           "        print(json.dumps({'type': 'play', 'card': m['legal'][0]}), flush=True)\n"
           "    elif m['type'] == 'quit':\n"
           "        break\n")


class FirstLegal:
    name = "first-legal"

    def choose(self, view: Any, legal: list[int]) -> int:
        return legal[0]


def _positions(games: int = 4) -> list[tuple[Any, list[int]]]:
    from agents import make_agent
    from cribenv.game import Game

    out = []
    bot = make_agent("greedy")
    for seed in range(games):
        game = Game(seed=seed)
        while game.current_player is not None:
            view, legal = game.view(game.current_player), game.legal_actions()
            if len(legal) > 1:
                out.append((view, legal))
            game.step(bot.choose(view, legal))
    return out


def _rate(agent: Any, positions: list, seconds: float) -> float:
    decisions = 0
    start = time.perf_counter()
    while True:
        for view, legal in positions:
            agent.choose(view, legal)
            decisions += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return decisions / elapsed


ECHO = ("import sys\n"
        "for line in sys.stdin:\n"
        "    sys.stdout.write('{}\\n'); sys.stdout.flush()\n")


def _round_trip(seconds: float) -> float:
    """Seconds a bare round trip takes: a short line out, a constant line back."""
    from agents.external import _Process

    proc = _Process([sys.executable, "-c", ECHO], None)
    try:
        trips = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            proc.send({"type": "ping"})
            proc.read_line(time.perf_counter() + 10, 64)
            trips += 1
        return (time.perf_counter() - start) / trips
    finally:
        proc.kill()


def run(seconds: float, progress: Any) -> dict[str, Any]:
    from agents.external import ExternalBot

    progress("protocol: positions")
    positions = _positions()
    progress("protocol: in this process")
    local = _rate(FirstLegal(), positions, seconds)
    progress("protocol: a cmd: program")
    bot = ExternalBot([sys.executable, "-c", TRIVIAL], game_time=1e6)
    try:
        _rate(bot, positions[:20], 0.01)              # started and greeted
        external = _rate(bot, positions, seconds)
    finally:
        bot.close()
    progress("protocol: a bare round trip")
    floor = _round_trip(seconds)
    return {"positions": len(positions), "in_process": local, "external": external,
            "overhead_us": 1e6 * (1 / external - 1 / local), "round_trip_us": 1e6 * floor}


def report(res: dict[str, Any]) -> None:
    verdict = "meets" if res["overhead_us"] < GOAL_US else "misses"
    print(f"Bot protocol (the first legal card, {res['positions']} decisions of seeded games)")
    print(f"  {'in this process':<34}{fmt_rate(res['in_process']):>12} decisions/s")
    print(f"  {'cmd: program (JSON lines, pipes)':<34}{fmt_rate(res['external']):>12} "
          f"decisions/s")
    print(f"  overhead {res['overhead_us']:.0f} us a decision ({verdict} the goal of "
          f"{GOAL_US:.0f} us); a bare round trip through the pipes: "
          f"{res['round_trip_us']:.0f} us")
