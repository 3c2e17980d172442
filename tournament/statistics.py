"""Statistics of a tournament: interval estimates over duplicate units, and a pair's results.

The two games of a duplicate deal are correlated by design (same cards), so the *duplicate
unit* (a deal: both seatings) is the independent sampling unit, and every interval is computed
over units (a cluster / paired analysis), never over games as if they were independent:

* points per hand (pegging, hand, crib and their total, for each agent) and net match points
  per game for A are ratio estimators ``R = sum(y_u) / sum(x_u)`` over units u (y: points,
  x: hands dealt, or games). The standard error is the linearised (delta-method) one,
  ``se = sqrt(sum((y_u - R x_u)^2) / (n (n - 1))) / mean(x)``, and the interval is
  ``R +- t(n-1) se`` with n the number of units (Cochran, *Sampling Techniques*, ch. 6). With
  two games per unit this is exactly the paired mean's t interval.
* The win rate of A is a proportion, for which a Wald/t interval behaves badly near 0 and 1, so
  it uses the Wilson score interval with the *effective sample size* of the clustered design
  (Kish): ``n_eff = p (1 - p) / se^2`` with ``se`` the unit-based standard error above, and
  the t(n-1) critical value in place of z (Korn & Graubard 1998). Duplicate pairing usually
  makes ``n_eff`` larger than the number of games (the card luck cancels within a unit). When
  the units carry no usable variance estimate (one unit, zero variance, or p = 0 or 1) it falls
  back to the plain Wilson interval over the games.

:func:`wilson_interval` is the project's one Wilson interval (training's evaluation uses it
through :func:`pair_stats`).

Net match points: a win scores +game_points for the winner (1, skunk 2, double skunk 3) and the
same negative for the loser. Point splits follow :mod:`agents.arena` (his heels count as
pegging; the crib is credited to the dealer, and its per-hand rate is over all hands dealt, so
pegging + hand + crib = total points per hand).

>>> lo, hi = wilson_interval(50, 100)
>>> round(lo, 3), round(hi, 3)
(0.404, 0.596)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

BUCKETS = ("pegging", "hand", "crib", "total")
#: The columns of a stored game that the statistics read, in this order (one tuple per game).
ROW_FIELDS = ("agent_a", "agent_b", "deal", "seating", "winner_seat", "game_points", "hands",
              "peg0", "peg1", "hand0", "hand1", "crib0", "crib1")


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval (``nan`` bounds: not estimable)."""

    value: float
    low: float
    high: float
    units: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {k: json_number(v) for k, v in asdict(self).items()}

    def fmt(self, digits: int = 2, scale: float = 1.0) -> str:
        v, lo, hi = (x * scale for x in (self.value, self.low, self.high))
        if math.isnan(v):
            return "n/a"
        if math.isnan(lo) or math.isnan(hi):
            return f"{v:.{digits}f} [n/a]"
        return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def json_number(x: Any) -> Any:
    """JSON has no nan/inf: nan (not estimable) -> null, +-inf (an open bound) -> "inf"."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


@functools.lru_cache(maxsize=1024)
def critical_value(confidence: float, df: float | None = None) -> float:
    """The two-sided critical value: normal, or Student t with ``df`` degrees of freedom."""
    from scipy import stats

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    q = 0.5 + confidence / 2.0
    return float(stats.norm.ppf(q) if df is None else stats.t.ppf(q, df))


def wilson_interval(successes: float, n: float, confidence: float = 0.95,
                    crit: float | None = None) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n``.

    ``n`` may be an effective (non-integer) sample size; ``crit`` overrides the normal critical
    value (e.g. a t quantile). Returns ``(nan, nan)`` for ``n <= 0``.
    """
    if n <= 0:
        return (math.nan, math.nan)
    z = critical_value(confidence) if crit is None else crit
    p = min(max(successes / n, 0.0), 1.0)
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    # the interval always holds p; at p = 0 or 1 rounding could leave it a hair outside
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def ratio_se(y: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Ratio ``sum(y)/sum(x)`` and its linearised standard error over units."""
    n = y.size
    total = float(x.sum())
    r = float(y.sum()) / total if total > 0 else math.nan
    if n < 2 or not total > 0:
        return r, math.nan
    resid = y - r * x
    se = math.sqrt(float(resid @ resid) / (n * (n - 1))) / (total / n)
    return r, se


def ratio_estimate(y: Iterable[float], x: Iterable[float] | None = None,
                   confidence: float = 0.95) -> Estimate:
    """``sum(y) / sum(x)`` over independent units with a t(n-1) interval.

    ``y[u]`` is unit u's total (e.g. points over both games of a duplicate deal) and ``x[u]``
    its size (hands, or games); ``x=None`` means 1 each, i.e. the mean of ``y`` with the usual
    t interval. The standard error is the linearised ratio-estimator one.
    """
    y = np.asarray(list(y) if not isinstance(y, np.ndarray) else y, dtype=float)
    x = np.ones_like(y) if x is None else np.asarray(
        list(x) if not isinstance(x, np.ndarray) else x, dtype=float)
    if y.shape != x.shape:
        raise ValueError(f"y and x need one value per unit, got {y.shape} and {x.shape}")
    r, se = ratio_se(y, x)
    if math.isnan(se):
        return Estimate(r, math.nan, math.nan, int(y.size))
    t = critical_value(confidence, y.size - 1)
    return Estimate(r, r - t * se, r + t * se, int(y.size))


def proportion_estimate(successes: Iterable[float], trials: Iterable[float],
                        confidence: float = 0.95) -> Estimate:
    """A proportion over clustered trials: Wilson interval with the effective sample size.

    ``successes[u]`` of ``trials[u]`` in unit u (e.g. A's wins in the 2 games of a duplicate
    deal). ``n_eff = p (1 - p) / se^2`` from the unit-based standard error, with the t(n-1)
    critical value; falls back to the plain Wilson interval over all trials when the units
    give no usable variance (one unit, zero variance, or p = 0 or 1). With one trial per unit
    this is (nearly) the plain Wilson interval.
    """
    y = np.asarray(list(successes) if not isinstance(successes, np.ndarray) else successes,
                   dtype=float)
    x = np.asarray(list(trials) if not isinstance(trials, np.ndarray) else trials, dtype=float)
    if y.shape != x.shape:
        raise ValueError(f"successes and trials need one value per unit, got {y.shape} and "
                         f"{x.shape}")
    total = float(x.sum())
    if not total > 0:
        return Estimate(math.nan, math.nan, math.nan, int(y.size))
    p, se = ratio_se(y, x)
    if y.size >= 2 and se > 0 and 0.0 < p < 1.0:
        n_eff = p * (1.0 - p) / (se * se)
        t = critical_value(confidence, y.size - 1)
        lo, hi = wilson_interval(p * n_eff, n_eff, confidence, t)
    else:
        lo, hi = wilson_interval(float(y.sum()), total, confidence)
    return Estimate(p, lo, hi, int(y.size))



@dataclass
class PairStats:
    """Results of one pair (A, B); estimates are for A unless named by agent."""

    agent_a: str
    agent_b: str
    games: int
    units: int
    wins_a: int
    wins_b: int
    skunks_a: int          # wins of A worth 2 or 3 game points
    skunks_b: int
    mean_hands: float      # hands dealt per game
    win_rate_a: Estimate
    net_points_a: Estimate  # match points per game for A (+/- game points)
    per_hand: dict[str, dict[str, Estimate]] = field(default_factory=dict)
    # per_hand[agent][bucket], bucket in pegging, hand, crib, total: points per hand dealt

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in (
            "win_rate_a", "net_points_a", "per_hand")}
        out["mean_hands"] = json_number(self.mean_hands)
        out["win_rate_a"] = self.win_rate_a.to_dict()
        out["net_points_a"] = self.net_points_a.to_dict()
        out["per_hand"] = {a: {b: e.to_dict() for b, e in d.items()}
                           for a, d in self.per_hand.items()}
        return out




def pair_stats(agent_a: str, agent_b: str, rows: Sequence[tuple],
               confidence: float = 0.95) -> PairStats:
    """The statistics of pair (A, B) from its games, over duplicate units.

    ``rows``: the pair's games as tuples of :data:`ROW_FIELDS` (the columns of the rows that
    :func:`tournament.games.play_task` returns).
    """
    return pair_units(agent_a, agent_b, rows, confidence)[0]


def pair_units(a: str, b: str, prow: Sequence[tuple], confidence: float
                ) -> tuple[PairStats, np.ndarray, np.ndarray]:
    """:func:`pair_stats`, and A's and B's wins per duplicate unit (for the ratings)."""
    deals = sorted({r[2] for r in prow})
    uidx = {d: k for k, d in enumerate(deals)}
    m = len(deals)
    games_u = np.zeros(m)
    hands_u = np.zeros(m)
    wins_a_u = np.zeros(m)
    wins_b_u = np.zeros(m)
    net_u = np.zeros(m)
    pts = {who: {bk: np.zeros(m) for bk in BUCKETS} for who in (a, b)}
    skunks = {a: 0, b: 0}
    for r in prow:
        (_, _, deal, seating, wseat, gp, hands, p0, p1, h0, h1, c0, c1) = r
        u = uidx[deal]
        a_seat = seating            # seating 0: A in seat 0; seating 1: A in seat 1
        games_u[u] += 1
        hands_u[u] += hands
        split = {0: (p0, h0, c0), 1: (p1, h1, c1)}
        for who, seat in ((a, a_seat), (b, 1 - a_seat)):
            peg, hnd, crb = split[seat]
            d = pts[who]
            d["pegging"][u] += peg
            d["hand"][u] += hnd
            d["crib"][u] += crb
            d["total"][u] += peg + hnd + crb
        if wseat is not None:
            winner = a if wseat == a_seat else b
            if winner == a:
                wins_a_u[u] += 1
                net_u[u] += gp
            else:
                wins_b_u[u] += 1
                net_u[u] -= gp
            if gp >= 2:
                skunks[winner] += 1
    games = int(games_u.sum())
    per_hand = {who: {bk: ratio_estimate(pts[who][bk], hands_u, confidence)
                      for bk in BUCKETS} for who in (a, b)}
    stats = PairStats(
        agent_a=a, agent_b=b, games=games, units=m, wins_a=int(wins_a_u.sum()),
        wins_b=int(wins_b_u.sum()), skunks_a=skunks[a], skunks_b=skunks[b],
        mean_hands=float(hands_u.sum() / games) if games else math.nan,
        win_rate_a=proportion_estimate(wins_a_u, games_u, confidence),
        net_points_a=ratio_estimate(net_u, games_u, confidence), per_hand=per_hand)
    return stats, wins_a_u, wins_b_u
