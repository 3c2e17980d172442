"""Batched engine: random legal play on :class:`cribenv.vector.VectorGame` (N games stepped
together in compiled code, automatic reset), with masks only and with full observations, on 1
and 2 threads and in 2 processes, beside the rules engine (``Game``), the wrapped AEC env and
OpenSpiel's cribbage measured in the same run.

One decision is one card chosen by one seat. A batched step is ``legal_mask`` + a uniform
choice from the mask (``random_actions``) + ``step`` (+ ``observe`` of the seats to act), for
all ``BATCH`` games; finished games restart at once, so every game decides every step.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from train.benchmarks._timing import ROUNDS, fmt_rate, fmt_ratio, timed

ORDER = 25
BATCH = 4096          # games stepped together
GOAL_MASKS = 1_000_000     # decisions/s on 2 cores (issue 10)
GOAL_OBS = 250_000


class VectorRandomPlay:
    """``BATCH`` games of ``num_players`` played at random with automatic reset."""

    def __init__(self, num_players: int, observe: bool, threads: int = 1, batch: int = BATCH,
                 seed: int = 0) -> None:
        import numpy as np

        from cribenv.game import Rules
        from cribenv.observation import OBS_SIZE
        from cribenv.vector import VectorGame

        self.vg = VectorGame(Rules(num_players=num_players), np.arange(seed, seed + batch),
                             auto_reset=True, seed_stream=seed, threads=threads)
        self.rng = np.random.default_rng(seed)
        self.observe = observe
        self.mask = np.empty((batch, 52), bool)
        self.obs = np.empty((batch, OBS_SIZE), np.float32)
        self.batch = batch
        self.elapsed = 0.0
        self.decisions = 0
        for _ in range(3):
            self.step()            # warm up (compiles on a cold cache)

    def step(self) -> int:
        vg = self.vg
        if self.observe:
            vg.observe(out=self.obs)
        mask = vg.legal_mask(out=self.mask)
        vg.step(vg.random_actions(self.rng, mask))
        return self.batch

    def run(self, seconds: float) -> None:
        elapsed, decisions = timed(self.step, seconds)
        self.elapsed += elapsed
        self.decisions += decisions

    def rate(self) -> float:
        return self.decisions / self.elapsed


def _process_main(num_players: int, observe: bool, seed: int, seconds: float) -> None:
    """A measuring process: build and warm up, print "ready", wait for a line on stdin, play
    ``seconds`` in one thread, print ``elapsed decisions``."""
    runner = VectorRandomPlay(num_players, observe, seed=seed)
    print("ready", flush=True)
    sys.stdin.readline()
    runner.run(seconds)
    print(runner.elapsed, runner.decisions, flush=True)


def processes_rate(num_players: int, observe: bool, seconds: float, processes: int = 2) -> float:
    """Decisions/s of ``processes`` single-threaded processes playing at the same time."""
    code = (f"from train.benchmarks.vector_engine import _process_main; "
            f"_process_main({num_players}, {observe}, {{seed}}, {seconds})")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # this checkout first
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *(p for p in sys.path if p)]))
    procs = [subprocess.Popen([sys.executable, "-c", code.format(seed=1000 * k)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for k in range(processes)]
    try:
        for p in procs:
            line = p.stdout.readline()           # type: ignore[union-attr]
            if line.strip() != "ready":
                raise RuntimeError(f"a measuring process failed to start (said {line!r})")
        for p in procs:                          # start together
            p.stdin.write("go\n")                # type: ignore[union-attr]
            p.stdin.flush()                      # type: ignore[union-attr]
        rates = []
        for p in procs:
            elapsed, decisions = p.stdout.readline().split()   # type: ignore[union-attr]
            rates.append(int(decisions) / float(elapsed))
    except BaseException:
        for p in procs:
            p.kill()
        raise
    finally:
        for p in procs:
            p.wait()
    return sum(rates)


# (players, observations, threads) of the in-process measurements
CASES = [(2, False, 1), (2, False, 2), (2, True, 1), (2, True, 2),
         (3, False, 1), (3, True, 1), (4, False, 1), (4, True, 1)]


def _key(players: int, observe: bool, how: str) -> str:
    return f"{players}p {'masks + observations' if observe else 'masks'}, {how}"


def run(seconds: float, progress: Callable[[str], None]) -> dict[str, Any]:
    from train.benchmarks.engine import EngineRandomPlay
    from train.benchmarks.env import ENVS, PEER_HINT, AECRandomPlay

    progress("vector engine: compiling / loading the kernels, building the baselines")
    vector = {case: VectorRandomPlay(*case) for case in CASES}
    game = EngineRandomPlay(2)
    game.game()
    game.games = 0
    game_time = [0.0, 0]
    baselines: dict[str, AECRandomPlay] = {}
    labels: dict[str, str] = {}
    notes: list[str] = []
    for key, label, factory, _kind in ENVS:
        if key not in ("cribenv_wrapped", "openspiel_cribbage"):
            continue
        try:
            baselines[key] = AECRandomPlay(factory())
            labels[key] = label
        except ImportError:
            notes.append(f"{label}: not installed ({PEER_HINT.get(key, '')})")
    for r in range(ROUNDS):      # interleaved slices: load changes hit all alike
        progress(f"vector engine: round {r + 1}/{ROUNDS}")
        elapsed, decisions = timed(game.game, seconds / ROUNDS)
        game_time[0] += elapsed
        game_time[1] += decisions
        for runner in baselines.values():
            runner.run(seconds / ROUNDS)
        for runner in vector.values():
            runner.run(seconds / ROUNDS)
    rates = {_key(n, obs, f"{t} thread{'s' if t > 1 else ''}"): runner.rate()
             for (n, obs, t), runner in vector.items()}
    for obs in (False, True):
        progress(f"vector engine: 2 processes, {'observations' if obs else 'masks'}")
        rates[_key(2, obs, "2 processes")] = processes_rate(2, obs, seconds)
    return {
        "batch": BATCH, "notes": notes,
        "baselines": {"Game (2 players, legal_actions + step)": game_time[1] / game_time[0],
                      **{f"{labels[k]}, 2 players": r.result()["steps_per_s"]
                         for k, r in baselines.items()}},
        "vector": rates,
    }


def report(res: dict[str, Any]) -> None:
    print(f"vector engine: cribenv.vector.VectorGame, {res['batch']} games at once, random legal "
          "play with automatic reset")
    base = next(iter(res["baselines"].values()))
    print(f"  {'':<58}{'decisions/s':>14}{'vs Game':>10}")
    for label, rate in [*res["baselines"].items(),
                        *((f"VectorGame {k}", r) for k, r in res["vector"].items())]:
        print(f"  {label:<58}{fmt_rate(rate):>14}{fmt_ratio(rate / base):>10}")
    for observe, goal in ((False, GOAL_MASKS), (True, GOAL_OBS)):
        best = max(rate for key, rate in res["vector"].items()
                   if key.startswith(_key(2, observe, "2 ")))
        print(f"  goal on 2 cores, {'masks + observations' if observe else 'masks'}: "
              f">= {fmt_rate(goal)}: {'met' if best >= goal else 'NOT met'} ({fmt_rate(best)})")
    for note in res["notes"]:
        print(f"  note: {note}")
