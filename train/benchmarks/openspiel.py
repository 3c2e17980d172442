"""OpenSpiel: random play of ``python_cribenv`` (Cribbage on the cribenv engine, in Python)
beside OpenSpiel's own C++ ``cribbage``, through the same pyspiel loop (a uniformly random
chance outcome or legal action, then ``apply_action``), 2 players to 121.

A *state* is one ``apply_action``: chance nodes (each card of a deal, the starter, the cut)
count as decisions do, in both games.
"""

from __future__ import annotations

import random
from typing import Any

from train.benchmarks import Progress
from train.benchmarks._timing import ROUNDS, fmt_rate, fmt_ratio, timed

ORDER = 35
GAMES = {"python_cribenv": "python_cribenv (cribenv engine, Python)",
         "cribbage": "OpenSpiel cribbage (C++)"}


class PyspielRandomPlay:
    """Whole games of a pyspiel game, every chance outcome and action drawn uniformly."""

    def __init__(self, game: Any, seed: int = 0) -> None:
        self.game = game
        self.rng = random.Random(seed)
        self.games = 0
        self.play()                      # warm up; not counted
        self.games = 0

    def play(self) -> int:
        state = self.game.new_initial_state()
        randrange = self.rng.randrange
        states = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[randrange(len(outcomes))][0]
            else:
                legal = state.legal_actions()
                action = legal[randrange(len(legal))]
            state.apply_action(action)
            states += 1
        self.games += 1
        return states


def run(seconds: float, progress: Progress) -> dict[str, Any]:
    notes: list[str] = []
    try:
        import pyspiel

        import cribenv.integrations.openspiel  # noqa: F401 - registers python_cribenv
    except ImportError as exc:
        return {"games": {key: None for key in GAMES}, "ratio": None,
                "notes": [f"skipped: {exc} (pip install 'cribenv[openspiel]')"]}
    runners: dict[str, PyspielRandomPlay] = {}
    for key in GAMES:
        progress(f"openspiel: setting up {key}")
        try:
            runners[key] = PyspielRandomPlay(pyspiel.load_game(key, {"players": 2}))
        except Exception as exc:  # noqa: BLE001 - a missing game is a note, not a crash
            notes.append(f"skipped {GAMES[key]}: {type(exc).__name__}: {exc}")
    totals = {key: [0.0, 0] for key in runners}
    for r in range(ROUNDS):          # interleaved slices, as for the engine and the envs
        progress(f"openspiel: round {r + 1}/{ROUNDS}: random play of {', '.join(runners)}")
        for key, runner in runners.items():
            elapsed, states = timed(runner.play, seconds / ROUNDS)
            totals[key][0] += elapsed
            totals[key][1] += states
    results: dict[str, Any] = {key: None for key in GAMES}
    for key, (elapsed, states) in totals.items():
        games = runners[key].games
        results[key] = {"states_per_s": states / elapsed, "games_per_s": games / elapsed,
                        "states_per_game": states / max(games, 1)}
    ours, theirs = results["python_cribenv"], results["cribbage"]
    ratio = ours["states_per_s"] / theirs["states_per_s"] if ours and theirs else None
    return {"games": results, "ratio": ratio, "notes": notes}


def report(res: dict[str, Any]) -> None:
    print("OpenSpiel: random play to 121, 2 players, the same pyspiel loop (states = "
          "apply_action calls, chance nodes included)")
    print(f"  {'':<48}{'states/s':>14}{'games/s':>12}{'states/game':>14}{'vs C++':>10}")
    for key, label in GAMES.items():
        row = res["games"].get(key)
        if row is None:
            print(f"  {label:<48}{'skipped':>14}")
            continue
        ratio = fmt_ratio(res["ratio"]) if key == "python_cribenv" and res["ratio"] else ""
        print(f"  {label:<48}{fmt_rate(row['states_per_s']):>14}"
              f"{fmt_rate(row['games_per_s']):>12}{row['states_per_game']:>14.1f}{ratio:>10}")
    for note in res["notes"]:
        print(f"  note: {note}")
