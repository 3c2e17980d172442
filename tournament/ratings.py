"""Ratings of a tournament's agents: Bradley-Terry on the Elo scale, with bootstrap intervals.

A Bradley-Terry model is fitted to all decisive games with ``choix.ilsr_pairwise_dense``
(iterative Luce spectral ranking, regularisation ``alpha = 0.01``, which keeps an all-wins pair
finite) and converted to an Elo-like scale, ``rating = 400 / ln(10) * theta``: a difference of D
points means an expected win rate of ``1 / (1 + 10^(-D / 400))``. Anchor: ``random`` is 0 when
it takes part, else the mean rating is 1500 (``anchor=`` chooses another agent, or ``"mean"``).
The 95% interval per agent is a percentile bootstrap (``bootstrap`` resamples, default 500,
seeded from the tournament seed): duplicate units are resampled with replacement within each
pair (so each pair keeps its size and the pairing is respected) and the model is refitted,
anchored the same way. Ratings that the games cannot identify (a pair or group without a single
loss) get open (infinite) bounds on the unbounded side and a note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tournament.statistics import PairStats, json_number

RATING_ALPHA = 0.01
ELO_SCALE = 400.0 / math.log(10.0)
MEAN_RATING = 1500.0

#: One pair's duplicate units: (index of A, index of B, A's wins per unit, B's wins per unit).
UnitWins = tuple[int, int, np.ndarray, np.ndarray]


@dataclass
class Rating:
    """A Bradley-Terry rating on the Elo scale with its bootstrap interval."""

    agent: str
    rating: float
    low: float
    high: float
    games: int
    wins: int

    def to_dict(self) -> dict[str, Any]:
        return {k: json_number(v) for k, v in asdict(self).items()}


def fit_ratings(wins: np.ndarray, alpha: float = RATING_ALPHA) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from ``wins[i, j]`` = games i won against j."""
    import choix

    wins = np.asarray(wins, dtype=float)
    theta = choix.ilsr_pairwise_dense(wins, alpha=alpha, max_iter=10_000, tol=1e-10)
    return ELO_SCALE * (theta - theta.mean())


def resolve_anchor(labels: Sequence[str], anchor: str | None) -> tuple[int | None, str]:
    """The index of the agent rated 0 (None: the mean is 1500) and its description.

    ``anchor=None`` means ``random`` if it takes part, else the mean.

    >>> resolve_anchor(["greedy", "random"], None)
    (1, 'random = 0')
    >>> resolve_anchor(["greedy", "expert"], None)
    (None, 'mean rating = 1500')
    """
    index = {a: i for i, a in enumerate(labels)}
    if anchor is None:
        anchor = "random" if "random" in index else "mean"
    if anchor != "mean" and anchor not in index:
        raise ValueError(f"rating anchor {anchor!r} is not an agent of this tournament "
                         f"({', '.join(labels)}) nor 'mean'")
    anchor_idx = None if anchor == "mean" else index[anchor]
    anchor_text = (f"mean rating = {MEAN_RATING:.0f}" if anchor_idx is None
                   else f"{anchor} = 0")
    return anchor_idx, anchor_text


def _anchor(ratings: np.ndarray, anchor_idx: int | None) -> np.ndarray:
    if anchor_idx is None:
        return ratings - ratings.mean(axis=-1, keepdims=True) + MEAN_RATING
    return ratings - ratings[..., anchor_idx:anchor_idx + 1]


def rate(labels: Sequence[str], pairs: Sequence[PairStats], unit_wins: Sequence[UnitWins],
         anchor_idx: int | None, *, seed: int, confidence: float,
         bootstrap: int) -> tuple[list[Rating], list[str]]:
    """The ratings of ``labels`` from each pair's wins per duplicate unit, and notes (e.g.
    ratings the games do not identify). ``pairs[k]`` and ``unit_wins[k]`` are the same pair."""
    n = len(labels)
    games_played = np.zeros(n, int)
    wins_total = np.zeros(n, int)
    for p, (i, j, wins_a_u, wins_b_u) in zip(pairs, unit_wins):
        games_played[[i, j]] += p.games
        wins_total[i] += int(wins_a_u.sum())
        wins_total[j] += int(wins_b_u.sum())

    def matrix(sums: list[tuple[float, float]]) -> np.ndarray:
        mat = np.zeros((n, n))
        for (i, j, _, _), (wa, wb) in zip(unit_wins, sums):
            mat[i, j] += wa
            mat[j, i] += wb
        return mat

    wins_mat = matrix([(wa.sum(), wb.sum()) for _, _, wa, wb in unit_wins])
    point = _anchor(fit_ratings(wins_mat), anchor_idx)
    low = np.full(n, math.nan)
    high = np.full(n, math.nan)
    if bootstrap > 0 and n >= 2 and all(wa.size for _, _, wa, _ in unit_wins):
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xB007]))
        # per pair: (bootstrap,) resampled win totals of each side, units drawn with replacement
        draws = []
        for _, _, wa, wb in unit_wins:
            idx = rng.integers(0, wa.size, size=(bootstrap, wa.size))
            draws.append((wa[idx].sum(axis=1), wb[idx].sum(axis=1)))
        reps = np.empty((bootstrap, n))
        for k in range(bootstrap):
            reps[k] = fit_ratings(matrix([(da[k], db[k]) for da, db in draws]))
        reps = _anchor(reps, anchor_idx)
        q = (1.0 - confidence) / 2.0 * 100.0
        low, high = np.percentile(reps, [q, 100.0 - q], axis=0)
    notes = []
    open_low, open_high = unidentified(wins_mat, anchor_idx)
    if open_low.any() or open_high.any():
        low = np.where(open_low, -math.inf, low)
        high = np.where(open_high, math.inf, high)
        one_sided = [f"{p.agent_a if p.wins_b == 0 else p.agent_b} won all {p.games} games "
                     f"against {p.agent_b if p.wins_b == 0 else p.agent_a}"
                     for p in pairs if p.games and (p.wins_a == 0 or p.wins_b == 0)]
        notes.append(
            "ratings not fully identified: " + "; ".join(one_sided or ["no wins between groups"])
            + f". Without a single loss the gap has no finite maximum-likelihood value (the "
            f"alpha={RATING_ALPHA} regularisation keeps it finite); intervals are open (inf) on "
            "the unbounded side, and the bootstrap bound on the other side is not reliable. "
            "Play more games, or add opponents of intermediate strength.")
    ratings = [Rating(labels[k], float(point[k]), float(low[k]), float(high[k]),
                      int(games_played[k]), int(wins_total[k])) for k in range(n)]
    return ratings, notes


def unidentified(wins: np.ndarray, anchor_idx: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Which ratings are unbounded below / above relative to the anchor.

    With ``beat[i, j]`` meaning i won at least one game against j, ``r_x - r_y`` has a finite
    maximum-likelihood upper bound iff a chain of wins leads from y to x (y beat ... beat x).
    """
    n = wins.shape[0]
    reach = (wins > 0) | np.eye(n, dtype=bool)
    for k in range(n):   # transitive closure (Floyd-Warshall)
        reach = reach | (reach[:, k:k + 1] & reach[k:k + 1, :])
    if anchor_idx is None:   # relative to the mean of all ratings
        return ~reach.all(axis=1), ~reach.all(axis=0)
    return ~reach[:, anchor_idx], ~reach[anchor_idx, :]
