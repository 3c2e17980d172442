"""Engine: random legal play of whole games on :class:`cribenv.game.Game` (no env around it),
2, 3 and 4 players."""

from __future__ import annotations

import random
from typing import Any

from train.benchmarks import Progress
from train.benchmarks._timing import ROUNDS, fmt_rate, timed

ORDER = 20


class EngineRandomPlay:
    """Random legal play of whole games on :class:`cribenv.game.Game` (no env around it)."""

    def __init__(self, num_players: int, seed: int = 0) -> None:
        from cribenv.game import Game, Rules

        self.make = Game
        self.rules = Rules(num_players=num_players)
        self.rng = random.Random(seed)
        self.seed = seed
        self.games = 0

    def game(self) -> int:
        game = self.make(self.rules, seed=self.seed + self.games)
        randrange = self.rng.randrange
        steps = 0
        while game.current_player is not None:
            legal = game.legal_actions()
            game.step(legal[randrange(len(legal))])
            steps += 1
        self.games += 1
        return steps


def run(seconds: float, progress: Progress) -> dict[str, Any]:
    runners = {n: EngineRandomPlay(n) for n in (2, 3, 4)}
    totals = {n: [0.0, 0] for n in runners}
    for runner in runners.values():
        runner.game()              # warm up
        runner.games = 0
    for r in range(ROUNDS):        # interleaved slices, as for the envs
        progress(f"engine: round {r + 1}/{ROUNDS}: random play with 2, 3 and 4 players")
        for n, runner in runners.items():
            elapsed, decisions = timed(runner.game, seconds / ROUNDS)
            totals[n][0] += elapsed
            totals[n][1] += decisions
    results: dict[str, Any] = {}
    for n, (elapsed, decisions) in totals.items():
        games = runners[n].games
        results[f"{n}p"] = {"decisions_per_s": decisions / elapsed, "games_per_s": games / elapsed,
                            "decisions_per_game": decisions / max(games, 1)}
    return results


def report(res: dict[str, Any]) -> None:
    print("engine: cribenv.game.Game, random legal play to 121 (legal_actions + step)")
    print(f"  {'':<48}{'decisions/s':>14}{'games/s':>14}{'decisions/game':>16}")
    for key, row in res.items():
        print(f"  {key[0] + ' players':<48}{fmt_rate(row['decisions_per_s']):>14}"
              f"{fmt_rate(row['games_per_s']):>14}{row['decisions_per_game']:>16.1f}")
