"""``cribenv bench``: scoring, engine and environment speed, with ratios against baselines
measured in the same run (the plain reference scorer, PettingZoo's Leduc Hold'em and
OpenSpiel's Cribbage through Shimmy).

Every number is measured on this machine in this run, so the ratios compare like with like;
the absolute rates depend on the machine and on whatever else it is doing. Baselines that are
not installed are skipped with a note (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SECTIONS = ("scoring", "engine", "env")
FULL_COMBOS = 12_994_800          # C(52, 4) hands x 48 starters
FULL_HAND_MEAN = 4.7692           # mean show score (RULES.md), a check on the enumeration
ROUNDS = 3   # engine and env rates are timed in interleaved slices: load changes hit all alike


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Measure hand scoring, the rules engine and the environments, and print each rate "
        "beside baselines measured in the same run: the plain reference scorer, PettingZoo's "
        "leduc_holdem_v4 and OpenSpiel's cribbage (through Shimmy).")
    parser.epilog = ("Example: cribenv bench --seconds 2 --json bench.json. Missing baselines "
                     "are skipped with a note (pip install -e '.[bench]').")
    parser.add_argument("--seconds", type=float, default=1.0, metavar="S",
                        help="time spent on each measurement (default 1.0)")
    parser.add_argument("--only", choices=SECTIONS, action="append", metavar="SECTION",
                        help="run only this section: scoring, engine or env (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE as JSON")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress lines on stderr")


# --------------------------------------------------------------------------------------------
# Timing helpers
# --------------------------------------------------------------------------------------------

def _timed(fn: Callable[[], int], seconds: float) -> tuple[float, int]:
    """Call ``fn`` (which does some work and returns how many units it did) until ``seconds``
    have passed; return (elapsed seconds, units)."""
    gc.collect()
    units = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        units += fn()
        now = time.perf_counter()
        if now >= deadline:
            return now - start, units


def _fmt_rate(x: float | None) -> str:
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:,.2f}"


def _fmt_ratio(x: float | None) -> str:
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    if x >= 0.1:
        return f"{x:.2f}x"
    return f"{x:.2g}x"


def _fmt_seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.2f} s"


class _Progress:
    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(f"  ... {text}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# (a) scoring
# --------------------------------------------------------------------------------------------

def _all_hands() -> np.ndarray:
    """All C(52, 4) = 270,725 four-card hands, (N, 4) int8 (as tests/test_scoring.py)."""
    flat = itertools.chain.from_iterable(itertools.combinations(range(52), 4))
    return np.fromiter(flat, dtype=np.int8).reshape(-1, 4)


def _full_enumeration(all_hands: np.ndarray) -> tuple[int, int]:
    """Score every (hand, starter) combination with ``score_hands``: (combinations, total)."""
    from cribenv.scoring import score_hands

    combos = 0
    total = 0
    for starter in range(52):        # one chunk of 249,900 hands per starter
        hands = all_hands[~(all_hands == starter).any(axis=1)]
        starters = np.full(len(hands), starter, dtype=np.int8)
        scores = score_hands(hands, starters, False, validate=False)
        combos += len(scores)
        total += int(scores.sum())
    return combos, total


def _random_deals(all_hands: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random hands with a starter not in the hand."""
    rng = np.random.default_rng(seed)
    hands = all_hands[rng.integers(len(all_hands), size=n)].astype(np.int64)
    starters = rng.integers(52, size=n)
    clash = (hands == starters[:, None]).any(axis=1)
    while clash.any():
        starters[clash] = (starters[clash] + 1) % 52
        clash = (hands == starters[:, None]).any(axis=1)
    return hands, starters


def bench_scoring(seconds: float, progress: _Progress) -> dict[str, Any]:
    from cribenv.reference_scoring import ref_score_hand
    from cribenv.scoring import score_hand_ids, score_hands

    progress("scoring: building the 270,725 four-card hands")
    all_hands = _all_hands()
    hands, starters = _random_deals(all_hands, 200_000, seed=0)
    pairs = list(zip(hands[:20_000].tolist(), starters[:20_000].tolist()))
    ref_pairs = pairs[:2_000]

    def run_ref() -> int:
        for h, s in ref_pairs:
            ref_score_hand(h, s)
        return len(ref_pairs)

    def run_ids() -> int:
        for h, s in pairs:
            score_hand_ids(h, s)
        return len(pairs)

    def run_vec() -> int:
        score_hands(hands, starters)
        return len(hands)

    def run_vec_trusted() -> int:
        score_hands(hands, starters, validate=False)
        return len(hands)

    # the same answers, or the speed means nothing
    sample = slice(0, 500)
    ref_scores = [ref_score_hand(h, s) for h, s in pairs[sample]]
    assert [score_hand_ids(h, s) for h, s in pairs[sample]] == ref_scores
    assert score_hands(hands[sample], starters[sample]).tolist() == ref_scores

    rates: dict[str, float] = {}
    for key, label, fn in (
        ("reference", "reference scorer (plain Python)", run_ref),
        ("score_hand_ids", "score_hand_ids (table-driven)", run_ids),
        ("score_hands", "score_hands (numpy, validated)", run_vec),
        ("score_hands_trusted", "score_hands (numpy, validate=False)", run_vec_trusted),
    ):
        progress(f"scoring: {label}")
        elapsed, n = _timed(fn, seconds)
        rates[key] = n / elapsed

    progress("scoring: full enumeration of 12,994,800 (hand, starter) combinations")
    gc.collect()
    t0 = time.perf_counter()
    combos, total = _full_enumeration(all_hands)
    full_s = time.perf_counter() - t0
    mean = total / combos
    return {
        "hands_per_s": rates,
        "full_enumeration": {
            "combinations": combos,
            "mean_score": round(mean, 4),
            "check_ok": combos == FULL_COMBOS and round(mean, 4) == FULL_HAND_MEAN,
            "score_hands_s": full_s,
            "reference_estimated_s": FULL_COMBOS / rates["reference"],
        },
    }


def print_scoring(res: dict[str, Any]) -> None:
    r = res["hands_per_s"]
    ref = r["reference"]
    rows = [
        ("reference scorer (plain Python)", r["reference"]),
        ("score_hand_ids (table-driven, one hand a call)", r["score_hand_ids"]),
        ("score_hands (numpy, validated)", r["score_hands"]),
        ("score_hands (numpy, validate=False)", r["score_hands_trusted"]),
    ]
    print("(a) scoring: show score of a 4-card hand + starter")
    print(f"  {'':<48}{'hands/s':>14}{'vs reference':>14}{'vs ids':>10}")
    for label, rate in rows:
        print(f"  {label:<48}{_fmt_rate(rate):>14}{_fmt_ratio(rate / ref):>14}"
              f"{_fmt_ratio(rate / r['score_hand_ids']):>10}")
    full = res["full_enumeration"]
    check = "ok" if full["check_ok"] else "MISMATCH"
    est = full["reference_estimated_s"]
    print(f"  full enumeration, {full['combinations']:,} (hand, starter) combinations "
          f"(mean {full['mean_score']:.4f}, check {check}):")
    print(f"  {'score_hands':<48}{_fmt_seconds(full['score_hands_s']):>14}")
    print(f"  {'reference scorer (estimated from its rate)':<48}{_fmt_seconds(est):>14}"
          f"{'estimated':>14}  ratio {_fmt_ratio(est / full['score_hands_s'])}")


# --------------------------------------------------------------------------------------------
# (b) engine
# --------------------------------------------------------------------------------------------

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


def bench_engine(seconds: float, progress: _Progress) -> dict[str, Any]:
    runners = {n: EngineRandomPlay(n) for n in (2, 3, 4)}
    totals = {n: [0.0, 0] for n in runners}
    for runner in runners.values():
        runner.game()              # warm up
        runner.games = 0
    for r in range(ROUNDS):        # interleaved slices, as for the envs
        progress(f"engine: round {r + 1}/{ROUNDS}: random play with 2, 3 and 4 players")
        for n, runner in runners.items():
            elapsed, decisions = _timed(runner.game, seconds / ROUNDS)
            totals[n][0] += elapsed
            totals[n][1] += decisions
    results: dict[str, Any] = {}
    for n, (elapsed, decisions) in totals.items():
        games = runners[n].games
        results[f"{n}p"] = {"decisions_per_s": decisions / elapsed, "games_per_s": games / elapsed,
                            "decisions_per_game": decisions / max(games, 1)}
    return results


def print_engine(res: dict[str, Any]) -> None:
    print("(b) engine: cribenv.game.Game, random legal play to 121 (legal_actions + step)")
    print(f"  {'':<48}{'decisions/s':>14}{'games/s':>14}{'decisions/game':>16}")
    for key, row in res.items():
        print(f"  {key[0] + ' players':<48}{_fmt_rate(row['decisions_per_s']):>14}"
              f"{_fmt_rate(row['games_per_s']):>14}{row['decisions_per_game']:>16.1f}")


# --------------------------------------------------------------------------------------------
# (c) environments
# --------------------------------------------------------------------------------------------

class AECRandomPlay:
    """The standard PettingZoo loop with a random legal action from the mask (in the
    observation dict, or in ``info["action_mask"]``), resumable in time slices.

    ``steps`` counts every ``env.step`` call, the final ``None`` steps included.
    """

    def __init__(self, env: Any, seed: int = 0) -> None:
        self.env = env
        self.seed = seed
        self.rng = random.Random(seed)
        self.episodes = 0
        self.steps = 0
        self.elapsed = 0.0
        self.episode()            # warm up (imports, caches); not counted
        self.episodes = 0

    def episode(self) -> int:
        env = self.env
        randrange = self.rng.randrange
        flatnonzero = np.flatnonzero
        env.reset(seed=self.seed + self.episodes)
        steps = 0
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                mask = obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]
                legal = flatnonzero(mask)
                action = int(legal[randrange(len(legal))])
            env.step(action)
            steps += 1
        self.episodes += 1
        return steps

    def run(self, seconds: float) -> None:
        elapsed, steps = _timed(self.episode, seconds)
        self.elapsed += elapsed
        self.steps += steps

    def result(self) -> dict[str, float]:
        return {"steps_per_s": self.steps / self.elapsed,
                "episodes_per_s": self.episodes / self.elapsed,
                "steps_per_episode": self.steps / max(self.episodes, 1)}


class GymRandomPlay(AECRandomPlay):
    """Random legal play of the single-agent Gymnasium env (steps are learner decisions)."""

    def episode(self) -> int:
        env = self.env
        randrange = self.rng.randrange
        env.reset(seed=self.seed + self.episodes)
        steps = 0
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _obs, _r, term, trunc, _info = env.step(int(legal[randrange(len(legal))]))
            done = term or trunc
            steps += 1
        self.episodes += 1
        return steps


def _make_leduc() -> Any:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pettingzoo

    # the registry (PettingZoo >= 1.25) avoids the old import path's DeprecationWarning;
    # the module needs rlcard (and pygame-ce, which PettingZoo's classic envs import)
    if hasattr(pettingzoo, "make"):
        return pettingzoo.make("aec", "classic/leduc_holdem-v4")
    from pettingzoo.classic import leduc_holdem_v4  # pragma: no cover - older PettingZoo

    return leduc_holdem_v4.env()  # pragma: no cover


def _make_openspiel_cribbage() -> Any:
    import shimmy  # needs shimmy[openspiel] and open_spiel

    return shimmy.OpenSpielCompatibilityV0(game_name="cribbage")


def _make_raw() -> Any:
    from cribenv.aec import CribbageEnv

    return CribbageEnv()


def _make_wrapped() -> Any:
    import cribenv

    return cribenv.env()


ENVS: list[tuple[str, str, Callable[[], Any], str]] = [
    # key, label, factory, kind
    ("cribenv_raw", "cribenv raw AEC (CribbageEnv)", _make_raw, "aec"),
    ("cribenv_wrapped", "cribenv wrapped AEC (cribenv.env())", _make_wrapped, "aec"),
    ("leduc_holdem_v4", "PettingZoo leduc_holdem_v4", _make_leduc, "aec"),
    ("openspiel_cribbage", "OpenSpiel cribbage (Shimmy AEC)", _make_openspiel_cribbage, "aec"),
]
PEERS = ("leduc_holdem_v4", "openspiel_cribbage")
PEER_HINT = {
    "leduc_holdem_v4": "pip install rlcard pygame-ce (pettingzoo[classic])",
    "openspiel_cribbage": "pip install 'shimmy[openspiel]' open_spiel",
}


def bench_env(seconds: float, progress: _Progress) -> dict[str, Any]:
    from cribenv.wrappers import SingleAgentCribbageEnv

    runners: dict[str, AECRandomPlay] = {}
    notes: list[str] = []
    for key, label, factory, _kind in ENVS:
        progress(f"env: setting up {label}")
        try:
            runners[key] = AECRandomPlay(factory())
        except Exception as exc:  # noqa: BLE001 - a missing or broken peer is a note, not a crash
            why = f"{type(exc).__name__}: {exc}"
            notes.append(f"skipped {label}: {why} ({PEER_HINT.get(key, 'not installed?')})")
    runners["cribenv_single_agent"] = GymRandomPlay(SingleAgentCribbageEnv(opponent=_random_card))
    for r in range(ROUNDS):
        progress(f"env: round {r + 1}/{ROUNDS}: " + ", ".join(runners))
        for key, runner in list(runners.items()):
            try:
                runner.run(seconds / ROUNDS)
            except Exception as exc:  # noqa: BLE001
                notes.append(f"skipped {key}: failed while playing: {type(exc).__name__}: {exc}")
                del runners[key]
    results: dict[str, Any] = {key: None for key, _, _, _ in ENVS}
    for key, runner in runners.items():
        results[key] = runner.result()
        try:
            runner.env.close()
        except Exception:  # noqa: BLE001, S110 - closing a benchmark env is best effort
            pass
    ratios: dict[str, dict[str, float | None]] = {}
    for key in ("cribenv_raw", "cribenv_wrapped"):
        ratios[key] = {}
        for peer in PEERS:
            mine, theirs = results.get(key), results.get(peer)
            ratios[key][peer] = (mine["steps_per_s"] / theirs["steps_per_s"]
                                 if mine and theirs else None)
    return {"envs": results, "ratios": ratios, "notes": notes}


_RNG = random.Random(0)


def _random_card(observation: dict[str, np.ndarray]) -> int:
    """The opponent of the single-agent row: a random legal card (a plain callable)."""
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[_RNG.randrange(len(legal))])


def print_env(res: dict[str, Any]) -> None:
    envs = res["envs"]
    print("(c) environments: random legal play, the standard agent_iter/last/step loop")
    print(f"  {'':<48}{'agent-steps/s':>14}{'steps/episode':>15}{'vs leduc':>11}"
          f"{'vs OpenSpiel':>14}")
    labels = {key: label for key, label, _, _ in ENVS}
    for key in ("cribenv_raw", "cribenv_wrapped", *PEERS):
        row = envs.get(key)
        if row is None:
            print(f"  {labels[key]:<48}{'skipped':>14}")
            continue
        ratio = res["ratios"].get(key)
        vs_leduc = _fmt_ratio(ratio["leduc_holdem_v4"]) if ratio else ""
        vs_openspiel = _fmt_ratio(ratio["openspiel_cribbage"]) if ratio else ""
        print(f"  {labels[key]:<48}{_fmt_rate(row['steps_per_s']):>14}"
              f"{row['steps_per_episode']:>15.1f}{vs_leduc:>11}{vs_openspiel:>14}")
    row = envs["cribenv_single_agent"]
    print(f"  {'cribenv single-agent Gymnasium (learner steps)':<48}"
          f"{_fmt_rate(row['steps_per_s']):>14}{row['steps_per_episode']:>15.1f}")
    print("  (agent-steps count every env.step() call, the final None steps included; a "
          "single-agent step also plays the opponent's turns)")
    for note in res["notes"]:
        print(f"  note: {note}")


# --------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------

def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
    }
    try:
        import cribenv

        info["cribenv"] = cribenv.__version__
    except Exception:  # noqa: BLE001 - version info is best effort
        pass
    return info


def run(args: argparse.Namespace) -> int:
    seconds = float(args.seconds)
    if not seconds > 0:
        raise ValueError(f"--seconds must be positive, got {args.seconds}")
    sections = args.only or list(SECTIONS)
    progress = _Progress(getattr(args, "quiet", False))
    machine = _machine()
    print(f"cribenv bench: Python {machine['python']}, numpy {machine['numpy']}, "
          f"{machine['platform']}, {machine['cpus']} CPUs; {seconds:g} s per measurement")
    print("(every rate and ratio below was measured in this run)")
    out: dict[str, Any] = {"machine": machine, "seconds": seconds}
    for section, bench, show in (("scoring", bench_scoring, print_scoring),
                                 ("engine", bench_engine, print_engine),
                                 ("env", bench_env, print_env)):
        if section not in sections:
            continue
        res = bench(seconds, progress)
        out[section] = res
        print()
        show(res)
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
        print(f"\nwrote {args.json}")
    return 0
