"""Environments: random legal play through the standard PettingZoo loop, the raw and wrapped
AEC env beside PettingZoo's ``leduc_holdem_v4`` and OpenSpiel's cribbage (through Shimmy), and
the single-agent Gymnasium wrapper.

Every env is measured as users run it: seeded once, then ``reset()`` without a seed between
episodes (reseeding costs a short game like leduc a large share of its time).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from train.benchmarks import Progress
from train.benchmarks._timing import ROUNDS, fmt_rate, fmt_ratio, timed

ORDER = 30


class AECRandomPlay:
    """The standard PettingZoo loop with a random legal action from the mask (in the
    observation dict, or in ``info["action_mask"]``), resumable in time slices.

    ``steps`` counts every ``env.step`` call, the final ``None`` steps included. The env is
    seeded once, at the first (warm-up) episode; later episodes ``reset()`` without a seed, as
    users run an env.
    """

    def __init__(self, env: Any, seed: int = 0) -> None:
        self.env = env
        self.seed = seed
        self.rng = random.Random(seed)
        self._seeded = False
        self.episodes = 0
        self.steps = 0
        self.elapsed = 0.0
        self.episode()            # warm up (imports, caches); not counted
        self.episodes = 0

    def episode(self) -> int:
        env = self.env
        randrange = self.rng.randrange
        flatnonzero = np.flatnonzero
        self.reset()
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

    def reset(self) -> None:
        """Start an episode: with the seed the first time, without one afterwards."""
        if self._seeded:
            self.env.reset()
        else:
            self.env.reset(seed=self.seed)
            self._seeded = True

    def run(self, seconds: float) -> None:
        elapsed, steps = timed(self.episode, seconds)
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
        self.reset()
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


def run(seconds: float, progress: Progress) -> dict[str, Any]:
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


def report(res: dict[str, Any]) -> None:
    envs = res["envs"]
    print("environments: random legal play, the standard agent_iter/last/step loop")
    print(f"  {'':<48}{'agent-steps/s':>14}{'steps/episode':>15}{'vs leduc':>11}"
          f"{'vs OpenSpiel':>14}")
    labels = {key: label for key, label, _, _ in ENVS}
    for key in ("cribenv_raw", "cribenv_wrapped", *PEERS):
        row = envs.get(key)
        if row is None:
            print(f"  {labels[key]:<48}{'skipped':>14}")
            continue
        ratio = res["ratios"].get(key)
        vs_leduc = fmt_ratio(ratio["leduc_holdem_v4"]) if ratio else ""
        vs_openspiel = fmt_ratio(ratio["openspiel_cribbage"]) if ratio else ""
        print(f"  {labels[key]:<48}{fmt_rate(row['steps_per_s']):>14}"
              f"{row['steps_per_episode']:>15.1f}{vs_leduc:>11}{vs_openspiel:>14}")
    row = envs["cribenv_single_agent"]
    print(f"  {'cribenv single-agent Gymnasium (learner steps)':<48}"
          f"{fmt_rate(row['steps_per_s']):>14}{row['steps_per_episode']:>15.1f}")
    print("  (agent-steps count every env.step() call, the final None steps included; a "
          "single-agent step also plays the opponent's turns)")
    for note in res["notes"]:
        print(f"  note: {note}")
