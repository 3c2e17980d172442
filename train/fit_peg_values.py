"""Learn the pegging value of kept hands from expert self-play (see :mod:`agents.peg_values`).

    cribenv peg-values --hands 400000 --workers 2 --out runs/peg_values.json

Each sample is the first hand of a fresh game, expert against expert, where the observed seat
keeps one of its ``top_k`` best throws by the expert's show value, uniformly at random, so the
regression sees the alternatives the expert weighs. Only the play is measured: the points each
seat makes laying cards (fifteens, pairs, runs, 31s and gos) until the show.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import time
from dataclasses import dataclass

import numpy as np

from agents.arena import run_game
from agents.expert import ExpertAgent
from agents.peg_values import NUM_KEEP_FEATURES, PegValues, keep_features
from cribenv.checks import int_arg, writable_file
from cribenv.game import Game, Phase, Played, PlayerView, Rules, SeriesEnd
from train.flags import add_flag, settings_from_flags
from train.settings import Settings, described, setting


class _ObservedSeat:
    """The observed seat of a sample hand: lays away one of the expert's ``top_k`` best throws
    (by the expert's show value), drawn at random, and plays its cards as the expert."""

    name = "observed"

    def __init__(self, expert: ExpertAgent, rng: np.random.Generator, top_k: int) -> None:
        self.expert, self.rng, self.top_k = expert, rng, top_k
        self.throw: tuple[int, ...] = ()
        self.keep: tuple[int, ...] = ()
        self.dealer = False

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if view.phase is not Phase.DISCARD:
            return self.expert.play(view, legal)
        if not self.throw:
            self.dealer = view.is_dealer
            ranked = self.expert.rank_throws(view)
            _, _, self.throw, self.keep = ranked[int(self.rng.integers(min(self.top_k,
                                                                            len(ranked))))]
        return next(c for c in self.throw if c in view.hand)


def simulate(hands: int, seed: int, top_k: int = 6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features [N, F], dealer [N], pegging differential [N])`` of ``hands`` hands."""
    rng = np.random.default_rng(seed)
    expert = ExpertAgent()
    xs = np.zeros((hands, NUM_KEEP_FEATURES))
    dealer = np.zeros(hands, bool)
    diff = np.zeros(hands)
    for i in range(hands):
        game = Game(Rules(), seed=seed * 1_000_003 + i, first_dealer=i % 2)
        me = int(rng.integers(2))
        observed = _ObservedSeat(expert, rng, top_k)
        players = [observed if s == me else expert for s in (0, 1)]
        run_game(game, players, until=lambda g: g.hand_number > 0)   # to the first show
        pegged = [0, 0]
        for e in game.events:
            if isinstance(e, Played | SeriesEnd):
                pegged[e.seat] += e.points
        dealer[i] = observed.dealer
        xs[i] = keep_features([c >> 2 for c in observed.keep])
        diff[i] = pegged[me] - pegged[1 - me]
    return xs, dealer, diff


def _work(args: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return simulate(*args)


def fit(xs: np.ndarray, dealer: np.ndarray, diff: np.ndarray, ridge: float = 1.0
        ) -> tuple[np.ndarray, list[float]]:
    """Ridge coefficients per role (0: pone, 1: dealer) and the residual standard deviations."""
    coef = np.zeros((2, xs.shape[1]))
    resid = []
    for role in (0, 1):
        sel = dealer == bool(role)
        x, y = xs[sel], diff[sel]
        a = x.T @ x + ridge * np.eye(x.shape[1])
        coef[role] = np.linalg.solve(a, x.T @ y)
        resid.append(float(np.std(y - x @ coef[role])))
    return coef, resid


@dataclass
class PegValueSettings(Settings):
    """What ``cribenv peg-values`` measures (on the settings base of every command that
    trains; the flags are made from them)."""

    hands: int = setting(400_000, "hands to play")
    top_k: int = setting(6, "the observed seat keeps one of its k best throws at random")
    seed: int = setting(0)

    KIND = "peg-values"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Measure the pegging value of kept hands by expert self-play and fit "
                          "the table the expert-prior policy reads "
                          "(agents/trained/peg_values.json).")
    parser.epilog = ("The table the bots read ships as agents/trained/peg_values.json; write "
                     "a new one elsewhere and compare its held-out R^2 before replacing it.")
    for s in described(PegValueSettings):
        add_flag(parser, s)
    parser.add_argument("--workers", type=int_arg(1), default=2, metavar="N",
                        help="processes (2)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the JSON table to write (required, so that the shipped table "
                             "is never replaced by accident)")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    settings = settings_from_flags(PegValueSettings, args)
    writable_file(args.out, "--out")   # before the hands are played

    chunk = 2_000
    jobs = [(min(chunk, settings.hands - s), settings.seed * 10_000 + s // chunk, settings.top_k)
            for s in range(0, settings.hands, chunk)]
    parts = []
    started = time.perf_counter()
    with cf.ProcessPoolExecutor(args.workers) as ex, tqdm(total=settings.hands, unit="hand") as bar:
        for part in ex.map(_work, jobs):
            parts.append(part)
            bar.update(len(part[2]))
    xs = np.concatenate([p[0] for p in parts])
    dealer = np.concatenate([p[1] for p in parts])
    diff = np.concatenate([p[2] for p in parts])
    n = len(diff)
    half = n // 2
    coef_half, _ = fit(xs[:half], dealer[:half], diff[:half])
    pred = np.einsum("ij,ij->i", xs[half:], coef_half[dealer[half:].astype(int)])
    held_out_r2 = 1 - np.var(diff[half:] - pred) / np.var(diff[half:])
    coef, resid = fit(xs, dealer, diff)
    meta = {"hands": n, "seed": settings.seed, "top_k": settings.top_k,
            "mean_diff_pone": float(diff[~dealer].mean()),
            "mean_diff_dealer": float(diff[dealer].mean()),
            "residual_sd": resid, "held_out_r2": float(held_out_r2),
            "seconds": round(time.perf_counter() - started, 1)}
    PegValues(coef, meta).save(args.out)
    print(f"{n:,} hands in {meta['seconds']} s; pegging differential: pone "
          f"{meta['mean_diff_pone']:+.3f}, dealer {meta['mean_diff_dealer']:+.3f}; "
          f"held-out R^2 {held_out_r2:.3f}; wrote {args.out}")
    return 0


if __name__ == "__main__":   # the same as ``cribenv peg-values``
    import sys

    from cribenv.cli import main

    raise SystemExit(main(["peg-values", *sys.argv[1:]]))
