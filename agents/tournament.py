"""Round-robin tournaments between agents with duplicate deals, confidence intervals and ratings.

    cribenv tournament --agents random greedy expert --games 200 --workers 4 \\
        --db results.sqlite --out results/

API: :func:`run_tournament` plays (or resumes) a tournament and returns a
:class:`TournamentReport`; :func:`load_report` recomputes the report of a results database.

Design
------
**Duplicate deals.** Every pair of agents (A, B) plays ``games_per_pair`` (even) games: the
deal sequences ``deal = 0 .. N/2 - 1``, each played twice, once per *seating* (seating 0: A in
seat 0, B in seat 1; seating 1: swapped). The game seed of a deal,
``deal_seed(seed, deal)``, fixes every card of the game (each hand's shuffle and starter) and
is the same for every pair, so all pairs meet the same card sequences (common random numbers).
Both seatings of a deal use the same first-dealer *seat*, ``deal % 2``, so the cards a seat
receives are the same in both: each agent plays each card sequence of the deal once in each
role, and each agent deals first in exactly one of the two games (dealer advantage cancels
within the unit, and the first-dealer seat alternates over deals). Agents are built per game
with ``make_agent(spec, seed=agent_seed(game_seed, seat))``, so a game's result depends on its
seed and seating alone, never on worker scheduling.

**Statistics (per pair).** The two games of a deal are correlated by design (same cards), so
the *duplicate unit* (a deal: both seatings) is the independent sampling unit, and every
interval is computed over units (a cluster / paired analysis), never over games as if they
were independent:

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

Net match points: a win scores +game_points for the winner (1, skunk 2, double skunk 3) and the
same negative for the loser. Point splits follow :mod:`agents.arena` (his heels count as
pegging; the crib is credited to the dealer, and its per-hand rate is over all hands dealt, so
pegging + hand + crib = total points per hand).

**Ratings.** A Bradley-Terry model is fitted to all decisive games with
``choix.ilsr_pairwise_dense`` (iterative Luce spectral ranking, regularisation
``alpha = 0.01``, which keeps an all-wins pair finite) and converted to an Elo-like scale,
``rating = 400 / ln(10) * theta``: a difference of D points means an expected win rate of
``1 / (1 + 10^(-D / 400))``. Anchor: ``random`` is 0 when it takes part, else the mean rating is
1500 (``anchor=`` chooses another agent, or ``"mean"``). The 95% interval per agent is a
percentile bootstrap (``bootstrap`` resamples, default 500, seeded from the tournament seed):
duplicate units are resampled with replacement within each pair (so each pair keeps its size
and the pairing is respected) and the model is refitted, anchored the same way.

**Storage and resume.** The parent process is the only SQLite writer. Each game is one row of
``games`` with the UNIQUE key (agent_a, agent_b, deal, seating); rows arrive from the workers in
small chunks, each inserted (``ON CONFLICT DO NOTHING``) and committed in one transaction, in
WAL mode. The ``meta`` table holds the tournament's configuration (agents, games per pair, seed,
rules). Re-running with the same database resumes: games already stored are skipped, so a
killed run loses at most the chunks in flight and never counts a game twice; a different
configuration is refused with a clear error.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import functools
import itertools
import json
import math
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.arena import play_game
from agents.base import make_agent
from cribenv.game import Rules

__all__ = [
    "AgentSpec", "Estimate", "PairStats", "Rating", "TournamentReport", "GameTask",
    "run_tournament", "load_report", "schedule", "deal_seed", "agent_seed", "parse_spec",
    "wilson_interval", "proportion_estimate", "ratio_estimate", "fit_ratings",
    "configure", "run",
]

FORMAT = "cribenv-tournament/1"
RATING_ALPHA = 0.01
ELO_SCALE = 400.0 / math.log(10.0)
MEAN_RATING = 1500.0
BUCKETS = ("pegging", "hand", "crib", "total")


# --------------------------------------------------------------------------------------------
# Interval estimates
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval (``nan`` bounds: not estimable)."""

    value: float
    low: float
    high: float
    units: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {k: _json_num(v) for k, v in asdict(self).items()}

    def fmt(self, digits: int = 2, scale: float = 1.0) -> str:
        v, lo, hi = (x * scale for x in (self.value, self.low, self.high))
        if math.isnan(v):
            return "n/a"
        if math.isnan(lo) or math.isnan(hi):
            return f"{v:.{digits}f} [n/a]"
        return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _json_num(x: Any) -> Any:
    """JSON has no nan/inf: nan (not estimable) -> null, +-inf (an open bound) -> "inf"."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


@functools.lru_cache(maxsize=1024)
def _crit(confidence: float, df: float | None = None) -> float:
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
    z = _crit(confidence) if crit is None else crit
    p = min(max(successes / n, 0.0), 1.0)
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    # the interval always holds p; at p = 0 or 1 rounding could leave it a hair outside
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def _ratio_se(y: np.ndarray, x: np.ndarray) -> tuple[float, float]:
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
    r, se = _ratio_se(y, x)
    if math.isnan(se):
        return Estimate(r, math.nan, math.nan, int(y.size))
    t = _crit(confidence, y.size - 1)
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
    p, se = _ratio_se(y, x)
    if y.size >= 2 and se > 0 and 0.0 < p < 1.0:
        n_eff = p * (1.0 - p) / (se * se)
        lo, hi = wilson_interval(p * n_eff, n_eff, confidence, _crit(confidence, y.size - 1))
    else:
        lo, hi = wilson_interval(float(y.sum()), total, confidence)
    return Estimate(p, lo, hi, int(y.size))


# --------------------------------------------------------------------------------------------
# Agents, seeds and the schedule
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentSpec:
    """A tournament entrant: ``label`` (its name in results) and the ``make_agent`` spec.

    Written ``LABEL=SPEC`` on the command line (``strong=ppo:runs/a.pt``, or ``random2=random``
    to enter the same bot twice), or just ``SPEC`` (the label is the spec).
    """

    label: str
    spec: str

    def __str__(self) -> str:
        return self.spec if self.label == self.spec else f"{self.label}={self.spec}"


def parse_spec(text: str) -> AgentSpec:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {text!r}")
    text = text.strip()
    label, sep, spec = text.partition("=")
    if sep and label and spec and ":" not in label:
        return AgentSpec(label.strip(), spec.strip())
    return AgentSpec(text, text)


def _seed_from(*entropy: int) -> int:
    """A 63-bit seed mixed from non-negative ints (numpy's SeedSequence)."""
    state = np.random.SeedSequence([int(e) for e in entropy]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])


def deal_seed(seed: int, deal: int) -> int:
    """The game seed of duplicate deal ``deal`` of a tournament with seed ``seed``."""
    return _seed_from(seed, deal, 0xC1B)


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent in ``seat`` of the game with seed ``game_seed``."""
    return _seed_from(game_seed, seat, 0xA6E)


@dataclass(frozen=True)
class GameTask:
    """One game of the schedule."""

    pair: int
    agent_a: AgentSpec
    agent_b: AgentSpec
    deal: int
    seating: int
    game_seed: int
    first_dealer: int

    @property
    def seats(self) -> tuple[AgentSpec, AgentSpec]:
        """The entrants by seat: seating 0 puts A in seat 0, seating 1 swaps them."""
        return (self.agent_a, self.agent_b) if self.seating == 0 else (self.agent_b, self.agent_a)

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.agent_a.label, self.agent_b.label, self.deal, self.seating)


def schedule(specs: Sequence[AgentSpec | str], games_per_pair: int, seed: int) -> list[GameTask]:
    """Every game of the round robin, deal-major (a partial run covers all pairs evenly)."""
    entrants = [s if isinstance(s, AgentSpec) else parse_spec(s) for s in specs]
    _check_games(games_per_pair)
    pairs = list(itertools.combinations(range(len(entrants)), 2))
    tasks = []
    for deal in range(games_per_pair // 2):
        gseed = deal_seed(seed, deal)
        for p, (i, j) in enumerate(pairs):
            for seating in (0, 1):
                tasks.append(GameTask(p, entrants[i], entrants[j], deal, seating, gseed,
                                      deal % 2))
    return tasks


def _check_games(games_per_pair: int) -> None:
    if not isinstance(games_per_pair, int) or games_per_pair < 2 or games_per_pair % 2:
        raise ValueError("games per pair must be an even number >= 2 (each deal is played "
                         f"twice, seats swapped), got {games_per_pair!r}")


def play_task(task: GameTask, rules: Rules,
              make: Callable[[AgentSpec, int], Any] | None = None) -> dict[str, Any]:
    """Play one game of the schedule; the row the results database stores for it.

    ``make(entrant, seed)`` builds a seat's agent (default: ``make_agent(entrant.spec,
    seed=seed)``); the seed is :func:`agent_seed` of the game and seat.
    """
    seats = task.seats
    if make is None:
        make = _make_entrant
    bots = [make(s, agent_seed(task.game_seed, seat)) for seat, s in enumerate(seats)]
    result = play_game(bots, rules, seed=task.game_seed, first_dealer=task.first_dealer,
                       names=[s.label for s in seats])
    winner_seat = result.winner
    return {
        "agent_a": task.agent_a.label, "agent_b": task.agent_b.label, "deal": task.deal,
        "seating": task.seating, "game_seed": task.game_seed,
        "first_dealer": result.first_dealer, "seat0": seats[0].label, "seat1": seats[1].label,
        "winner_seat": winner_seat,
        "winner": None if winner_seat is None else seats[winner_seat].label,
        "score0": result.scores[0], "score1": result.scores[1],
        "game_points": result.game_points, "hands": result.hands,
        "peg0": result.pegging[0], "peg1": result.pegging[1],
        "hand0": result.hand[0], "hand1": result.hand[1],
        "crib0": result.crib[0], "crib1": result.crib[1],
        "dealer0": result.hands_as_dealer[0], "dealer1": result.hands_as_dealer[1],
        "decisions": result.decisions, "result": result.to_json(),
    }


def _make_entrant(entrant: AgentSpec, seed: int) -> Any:
    return make_agent(entrant.spec, seed=seed)


def _play_chunk(tasks: list[GameTask], rules_dict: dict[str, Any]) -> list[dict[str, Any]]:
    rules = Rules(**rules_dict)
    return [play_task(t, rules) for t in tasks]


def _init_worker() -> None:
    # Ctrl-C goes to the parent, which stops the pool; workers must not print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# --------------------------------------------------------------------------------------------
# The results database
# --------------------------------------------------------------------------------------------

COLUMNS = ("agent_a", "agent_b", "deal", "seating", "game_seed", "first_dealer", "seat0",
           "seat1", "winner_seat", "winner", "score0", "score1", "game_points", "hands",
           "peg0", "peg1", "hand0", "hand1", "crib0", "crib1", "dealer0", "dealer1",
           "decisions", "result")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    agent_a TEXT NOT NULL,        -- the pair (A, B), in the order the agents were given
    agent_b TEXT NOT NULL,
    deal INTEGER NOT NULL,        -- duplicate deal index 0 .. games_per_pair/2 - 1
    seating INTEGER NOT NULL,     -- 0: A in seat 0; 1: B in seat 0
    game_seed INTEGER NOT NULL,
    first_dealer INTEGER NOT NULL,
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    winner_seat INTEGER,
    winner TEXT,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    game_points INTEGER NOT NULL, -- 1, 2 (skunk), 3 (double skunk)
    hands INTEGER NOT NULL,       -- hands dealt (the last one usually cut short)
    peg0 INTEGER NOT NULL, peg1 INTEGER NOT NULL,     -- pegging (incl. his heels) per seat
    hand0 INTEGER NOT NULL, hand1 INTEGER NOT NULL,   -- own hand in the show per seat
    crib0 INTEGER NOT NULL, crib1 INTEGER NOT NULL,   -- crib per seat
    dealer0 INTEGER NOT NULL, dealer1 INTEGER NOT NULL,  -- hands dealt as dealer per seat
    decisions INTEGER NOT NULL,
    result TEXT NOT NULL,         -- the full GameResult as JSON
    UNIQUE (agent_a, agent_b, deal, seating)
);
"""


def _connect(db_path: str | os.PathLike[str]) -> sqlite3.Connection:
    path = Path(db_path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(str(path), timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{path} is not a usable results database: {exc}") from None
    return conn


def _config(entrants: Sequence[AgentSpec], games_per_pair: int, seed: int,
            rules: Rules) -> dict[str, Any]:
    return {"format": FORMAT, "agents": [str(e) for e in entrants],
            "games_per_pair": games_per_pair, "seed": seed, "rules": rules.to_dict()}


def _stored_config(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
    return None if row is None else json.loads(row[0])


def _check_or_store_config(conn: sqlite3.Connection, config: dict[str, Any],
                           db_path: Any) -> None:
    stored = _stored_config(conn)
    if stored is None:
        if conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]:
            raise ValueError(f"{db_path} holds games but no tournament configuration; "
                             "use a new --db")
        with conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('config', ?)",
                         (json.dumps(config, sort_keys=True),))
        return
    if stored == config:
        return
    diffs = []
    for key in sorted(set(stored) | set(config)):
        if stored.get(key) != config.get(key):
            diffs.append(f"{key}: stored {stored.get(key)!r}, requested {config.get(key)!r}")
    raise ValueError(
        f"{db_path} holds a tournament with different settings, so it cannot be resumed "
        f"({'; '.join(diffs)}). Re-run with the stored settings to resume it, or choose "
        "another --db for a new tournament.")


def _done_keys(conn: sqlite3.Connection) -> set[tuple[str, str, int, int]]:
    return {tuple(r) for r in conn.execute(
        "SELECT agent_a, agent_b, deal, seating FROM games")}  # type: ignore[misc]


def _insert(conn: sqlite3.Connection, rows: list[dict[str, Any]]) -> None:
    sql = (f"INSERT INTO games ({', '.join(COLUMNS)}) VALUES "
           f"({', '.join('?' for _ in COLUMNS)}) "
           "ON CONFLICT (agent_a, agent_b, deal, seating) DO NOTHING")
    with conn:   # one transaction per chunk
        conn.executemany(sql, [tuple(r[c] for c in COLUMNS) for r in rows])


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------

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
        out["mean_hands"] = _json_num(self.mean_hands)
        out["win_rate_a"] = self.win_rate_a.to_dict()
        out["net_points_a"] = self.net_points_a.to_dict()
        out["per_hand"] = {a: {b: e.to_dict() for b, e in d.items()}
                           for a, d in self.per_hand.items()}
        return out


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
        return {k: _json_num(v) for k, v in asdict(self).items()}


@dataclass
class TournamentReport:
    """Everything a tournament measured (see the module docstring for the methods)."""

    agents: list[str]
    specs: list[str]
    games_per_pair: int
    seed: int
    rules: dict[str, Any]
    confidence: float
    pairs: list[PairStats]
    ratings: list[Rating]
    anchor: str
    bootstrap: int
    games: int                      # games in the database
    games_expected: int
    db_path: str = ""
    games_this_run: int = 0
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)   # warnings, e.g. unidentified ratings

    @property
    def games_per_s(self) -> float:
        return self.games_this_run / self.elapsed_s if self.elapsed_s > 0 else math.nan

    @property
    def complete(self) -> bool:
        return self.games >= self.games_expected

    def pair(self, a: str, b: str) -> PairStats:
        for p in self.pairs:
            if (p.agent_a, p.agent_b) == (a, b):
                return p
        raise KeyError(f"no pair ({a!r}, {b!r}); pairs: "
                       f"{[(p.agent_a, p.agent_b) for p in self.pairs]}")

    def rating(self, agent: str) -> Rating:
        for r in self.ratings:
            if r.agent == agent:
                return r
        raise KeyError(f"no rating for {agent!r}; agents: {self.agents}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "agents": self.agents, "specs": self.specs,
            "games_per_pair": self.games_per_pair, "seed": self.seed, "rules": self.rules,
            "confidence": self.confidence, "games": self.games,
            "games_expected": self.games_expected, "db_path": self.db_path,
            "games_this_run": self.games_this_run, "elapsed_s": self.elapsed_s,
            "games_per_s": _json_num(self.games_per_s),
            "methods": {
                "unit": "duplicate deal (both seatings of one game seed)",
                "win_rate": "Wilson score interval with the Kish effective sample size from "
                            "the unit-based standard error, t(units-1) critical value",
                "means": "ratio estimator over units, linearised standard error, t(units-1)",
                "ratings": f"Bradley-Terry (choix.ilsr_pairwise_dense, alpha={RATING_ALPHA}), "
                           f"Elo scale 400/ln(10)*theta, percentile bootstrap over units "
                           f"within pairs ({self.bootstrap} resamples)",
                "anchor": self.anchor,
            },
            "pairs": [p.to_dict() for p in self.pairs],
            "ratings": [r.to_dict() for r in self.ratings],
            "notes": list(self.notes),
        }

    def write_json(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    def write_csv(self, path: str | os.PathLike[str]) -> None:
        """One row per pair: counts, and value/low/high of every estimate."""
        header = ["agent_a", "agent_b", "games", "units", "wins_a", "wins_b", "skunks_a",
                  "skunks_b", "mean_hands"]
        est_names = ["win_rate_a", "net_points_a"] + [
            f"{who}_{b}_per_hand" for who in ("a", "b") for b in BUCKETS]
        for name in est_names:
            header += [name, f"{name}_low", f"{name}_high"]
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            for p in self.pairs:
                row: list[Any] = [p.agent_a, p.agent_b, p.games, p.units, p.wins_a, p.wins_b,
                                  p.skunks_a, p.skunks_b, _fmt_num(p.mean_hands)]
                ests = [p.win_rate_a, p.net_points_a] + [
                    p.per_hand[who][b] for who in (p.agent_a, p.agent_b) for b in BUCKETS]
                for e in ests:
                    row += [_fmt_num(e.value), _fmt_num(e.low), _fmt_num(e.high)]
                w.writerow(row)

    def plot(self, path: str | os.PathLike[str]) -> None:
        """A PNG (matplotlib, Agg): A's win rate per pair with its interval, and the ratings
        with theirs (open intervals run to the edge of the axis, with an arrow head)."""
        from matplotlib.figure import Figure  # no pyplot: no global backend, no GUI

        n_pairs = max(1, len(self.pairs))
        height = max(3.0, 0.45 * max(n_pairs, len(self.ratings)) + 1.6)
        fig = Figure(figsize=(12, height))
        ax1, ax2 = fig.subplots(1, 2)
        labels = [f"{p.agent_a} vs {p.agent_b}" for p in self.pairs]
        ys = np.arange(len(self.pairs))
        vals = np.array([p.win_rate_a.value for p in self.pairs], float) * 100
        lows = np.array([p.win_rate_a.low for p in self.pairs], float) * 100
        highs = np.array([p.win_rate_a.high for p in self.pairs], float) * 100
        # clipped: a rate of exactly 0 or 1 can sit a rounding error outside its interval
        err = np.clip(np.nan_to_num(np.vstack([vals - lows, highs - vals])), 0, None)
        ax1.errorbar(vals, ys, xerr=err, fmt="o", capsize=4, color="tab:blue")
        ax1.axvline(50, color="grey", lw=1, ls="--")
        ax1.set_yticks(ys, labels)
        ax1.invert_yaxis()
        ax1.set_xlim(0, 100)
        ax1.set_xlabel(f"win % of the first agent ({self.confidence:.0%} CI)")
        ax1.set_title("Pairs (duplicate deals)")
        ratings = sorted(self.ratings, key=lambda r: -r.rating)
        ry = np.arange(len(ratings))
        rv = np.array([r.rating for r in ratings], float)
        rlo = np.array([r.low for r in ratings], float)
        rhi = np.array([r.high for r in ratings], float)
        finite = np.concatenate([rv, rlo[np.isfinite(rlo)], rhi[np.isfinite(rhi)]])
        span = max(float(finite.max() - finite.min()), 200.0)
        left, right = finite.min() - 0.15 * span, finite.max() + 0.15 * span
        # open bounds (unidentified ratings) run to the edge, marked with an arrow head
        plo = np.where(np.isneginf(rlo), left, np.nan_to_num(rlo, nan=0.0, posinf=right))
        phi = np.where(np.isposinf(rhi), right, np.nan_to_num(rhi, nan=0.0, neginf=left))
        plo = np.where(np.isnan(rlo), rv, plo)
        phi = np.where(np.isnan(rhi), rv, phi)
        ax2.errorbar(rv, ry, xerr=np.clip(np.vstack([rv - plo, phi - rv]), 0, None), fmt="s",
                     capsize=4, color="tab:red")
        for y, lo_open, hi_open in zip(ry, np.isneginf(rlo), np.isposinf(rhi)):
            if lo_open:
                ax2.plot([left], [y], marker="<", color="tab:red")
            if hi_open:
                ax2.plot([right], [y], marker=">", color="tab:red")
        ax2.set_xlim(left - 0.02 * span, right + 0.02 * span)
        ax2.set_yticks(ry, [r.agent for r in ratings])
        ax2.invert_yaxis()
        ax2.set_xlabel(f"Bradley-Terry rating, Elo scale ({self.anchor}; "
                       f"{self.confidence:.0%} bootstrap CI)")
        ax2.set_title("Ratings")
        ax2.grid(axis="x", alpha=0.3)
        fig.suptitle(f"cribenv tournament: {self.games} games, {self.games_per_pair} per pair, "
                     f"seed {self.seed}, target {self.rules.get('target')}")
        fig.tight_layout()
        fig.savefig(path, dpi=120)

    def format(self) -> str:
        """The results as text tables."""
        conf = f"{self.confidence:.0%}"
        lines = []
        status = "" if self.complete else f" (incomplete: {self.games}/{self.games_expected})"
        lines.append(f"Tournament: {len(self.agents)} agents, {self.games_per_pair} games per "
                     f"pair (duplicate deals), seed {self.seed}, target "
                     f"{self.rules.get('target')}, {self.games} games{status}")
        lines.append("")
        w = max([len(f"{p.agent_a} vs {p.agent_b}") for p in self.pairs] + [4])
        lines.append(f"{'pair (A vs B)':<{w}}  {'games':>5}  {'A win % [' + conf + ' CI]':<24}"
                     f"{'A net pts/game [CI]':<26}{'skunks A-B':>10}")
        for p in self.pairs:
            lines.append(f"{p.agent_a + ' vs ' + p.agent_b:<{w}}  {p.games:>5}  "
                         f"{p.win_rate_a.fmt(1, 100):<24}{p.net_points_a.fmt(3):<26}"
                         f"{f'{p.skunks_a}-{p.skunks_b}':>10}")
        lines.append("")
        lines.append(f"Points per hand dealt [{conf} CI] (pegging includes his heels; "
                     "crib per hand dealt, so the three add up to the total)")
        aw = max([len(a) for a in self.agents] + [5])
        for p in self.pairs:
            lines.append(f"  {p.agent_a} vs {p.agent_b} ({p.mean_hands:.1f} hands/game)")
            lines.append(f"    {'agent':<{aw}}  " + "".join(f"{b:<22}" for b in BUCKETS))
            for who in (p.agent_a, p.agent_b):
                cells = "".join(f"{p.per_hand[who][b].fmt(2):<22}" for b in BUCKETS)
                lines.append(f"    {who:<{aw}}  {cells}")
        lines.append("")
        lines.append(f"Ratings: Bradley-Terry on the Elo scale ({self.anchor}), {conf} bootstrap "
                     f"interval over duplicate units ({self.bootstrap} resamples)")
        lines.append(f"  {'rank':>4}  {'agent':<{aw}}  {'rating':>7}  {conf + ' CI':<20}"
                     f"{'games':>6}  {'wins':>6}")
        for k, r in enumerate(sorted(self.ratings, key=lambda r: -r.rating), 1):
            ci = ("n/a" if math.isnan(r.low) or math.isnan(r.high)
                  else f"[{_bound(r.low)}, {_bound(r.high)}]")
            lines.append(f"  {k:>4}  {r.agent:<{aw}}  {r.rating:>7.0f}  {ci:<20}"
                         f"{r.games:>6}  {r.wins:>6}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(lines)

    def save(self, out_dir: str | os.PathLike[str], stem: str = "tournament") -> list[Path]:
        """Write ``stem``.png, .json and .csv into ``out_dir``; returns the paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / f"{stem}.png", out / f"{stem}.json", out / f"{stem}.csv"]
        self.plot(paths[0])
        self.write_json(paths[1])
        self.write_csv(paths[2])
        return paths


def _bound(x: float) -> str:
    return f"{x:.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _fmt_num(x: float) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6g}"


def fit_ratings(wins: np.ndarray, alpha: float = RATING_ALPHA) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from ``wins[i, j]`` = games i won against j."""
    import choix

    wins = np.asarray(wins, dtype=float)
    theta = choix.ilsr_pairwise_dense(wins, alpha=alpha, max_iter=10_000, tol=1e-10)
    return ELO_SCALE * (theta - theta.mean())


def _anchor(ratings: np.ndarray, anchor_idx: int | None) -> np.ndarray:
    if anchor_idx is None:
        return ratings - ratings.mean(axis=-1, keepdims=True) + MEAN_RATING
    return ratings - ratings[..., anchor_idx:anchor_idx + 1]


ROW_FIELDS = ("agent_a", "agent_b", "deal", "seating", "winner_seat", "game_points", "hands",
               "peg0", "peg1", "hand0", "hand1", "crib0", "crib1")


def pair_stats(agent_a: str, agent_b: str, rows: Sequence[tuple],
               confidence: float = 0.95) -> PairStats:
    """The statistics of pair (A, B) from its games, over duplicate units.

    ``rows``: the pair's games as tuples of :data:`ROW_FIELDS` (see :func:`play_task`).
    """
    return _pair_units(agent_a, agent_b, rows, confidence)[0]


def _pair_units(a: str, b: str, prow: Sequence[tuple], confidence: float
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


def _compute_report(rows: list[tuple], config: dict[str, Any], *, confidence: float,
                    bootstrap: int, anchor: str | None, db_path: str) -> TournamentReport:
    entrants = [parse_spec(s) for s in config["agents"]]
    labels = [e.label for e in entrants]
    index = {a: i for i, a in enumerate(labels)}
    if anchor is None:
        anchor = "random" if "random" in index else "mean"
    if anchor != "mean" and anchor not in index:
        raise ValueError(f"rating anchor {anchor!r} is not an agent of this tournament "
                         f"({', '.join(labels)}) nor 'mean'")
    anchor_idx = None if anchor == "mean" else index[anchor]
    anchor_text = (f"mean rating = {MEAN_RATING:.0f}" if anchor_idx is None
                   else f"{anchor} = 0")
    by_pair: dict[tuple[str, str], list[tuple]] = {}
    for r in rows:
        by_pair.setdefault((r[0], r[1]), []).append(r)
    n = len(labels)
    pairs_out: list[PairStats] = []
    unit_wins: list[tuple[int, int, np.ndarray, np.ndarray]] = []
    games_played = np.zeros(n, int)
    wins_total = np.zeros(n, int)
    for i, j in itertools.combinations(range(n), 2):
        a, b = labels[i], labels[j]
        stats, wins_a_u, wins_b_u = _pair_units(a, b, by_pair.get((a, b), []), confidence)
        pairs_out.append(stats)
        games = stats.games
        unit_wins.append((i, j, wins_a_u, wins_b_u))
        games_played[[i, j]] += games
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
        rng = np.random.default_rng(np.random.SeedSequence([int(config["seed"]), 0xB007]))
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
    open_low, open_high = _unidentified(wins_mat, anchor_idx)
    if open_low.any() or open_high.any():
        low = np.where(open_low, -math.inf, low)
        high = np.where(open_high, math.inf, high)
        one_sided = [f"{p.agent_a if p.wins_b == 0 else p.agent_b} won all {p.games} games "
                     f"against {p.agent_b if p.wins_b == 0 else p.agent_a}"
                     for p in pairs_out if p.games and (p.wins_a == 0 or p.wins_b == 0)]
        notes.append(
            "ratings not fully identified: " + "; ".join(one_sided or ["no wins between groups"])
            + f". Without a single loss the gap has no finite maximum-likelihood value (the "
            f"alpha={RATING_ALPHA} regularisation keeps it finite); intervals are open (inf) on "
            "the unbounded side, and the bootstrap bound on the other side is not reliable. "
            "Play more games, or add opponents of intermediate strength.")
    ratings = [Rating(labels[k], float(point[k]), float(low[k]), float(high[k]),
                      int(games_played[k]), int(wins_total[k])) for k in range(n)]
    gpp = int(config["games_per_pair"])
    return TournamentReport(
        agents=labels, specs=[e.spec for e in entrants], games_per_pair=gpp,
        seed=int(config["seed"]), rules=dict(config["rules"]), confidence=confidence,
        pairs=pairs_out, ratings=ratings, anchor=anchor_text, bootstrap=bootstrap,
        games=len(rows), games_expected=gpp * n * (n - 1) // 2, db_path=db_path, notes=notes)


def _unidentified(wins: np.ndarray, anchor_idx: int | None) -> tuple[np.ndarray, np.ndarray]:
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


def load_report(db_path: str | os.PathLike[str], *, confidence: float = 0.95,
                bootstrap: int = 500, anchor: str | None = None) -> TournamentReport:
    """The report of the games stored in ``db_path`` (complete or not)."""
    if not Path(db_path).exists():
        raise ValueError(f"no results database at {db_path}")
    conn = _connect(db_path)
    try:
        config = _stored_config(conn)
        if config is None:
            raise ValueError(f"{db_path} holds no tournament")
        rows = conn.execute(f"SELECT {', '.join(ROW_FIELDS)} FROM games "
                            "ORDER BY agent_a, agent_b, deal, seating").fetchall()
    finally:
        conn.close()
    return _compute_report(rows, config, confidence=confidence, bootstrap=bootstrap,
                           anchor=anchor, db_path=str(db_path))


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

def _chunks(tasks: list[GameTask], size: int) -> Iterator[list[GameTask]]:
    for k in range(0, len(tasks), size):
        yield tasks[k:k + size]


def run_tournament(agent_specs: Sequence[str], games_per_pair: int, workers: int = 1,
                   db_path: str | os.PathLike[str] = "results.sqlite", seed: int = 0,
                   rules: Rules | None = None, progress: bool = True, *,
                   bootstrap: int = 500, confidence: float = 0.95, anchor: str | None = None,
                   chunk_size: int | None = None) -> TournamentReport:
    """Play (or resume) a round robin of 2-player duplicate games and report on it.

    ``agent_specs``: ``make_agent`` specs, optionally labelled ``LABEL=SPEC``; every pair plays
    ``games_per_pair`` (even) games. ``workers`` processes play chunks of games (``1``: in this
    process); results go to the SQLite database ``db_path`` as they arrive, and a database
    that already holds some of this tournament's games is resumed. Raises ``ValueError`` for a
    bad spec, an odd game count, or a database that holds a different tournament.
    """
    rules = rules if rules is not None else Rules()
    if rules.num_players != 2:
        raise ValueError(f"tournaments are 2-player, got rules for {rules.num_players} players")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    _check_games(games_per_pair)
    entrants = [parse_spec(s) for s in agent_specs]
    if len(entrants) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {len(entrants)}")
    labels = [e.label for e in entrants]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"agent {dup[0]!r} is entered twice; label a second copy, e.g. "
                         f"{dup[0]}2={entrants[labels.index(dup[0])].spec}")
    for e in entrants:   # fail fast on unknown specs, in this process
        make_agent(e.spec, seed=0)
    workers = max(1, int(workers))
    config = _config(entrants, games_per_pair, seed, rules)
    tasks = schedule(entrants, games_per_pair, seed)
    conn = _connect(db_path)
    played = 0
    t0 = time.perf_counter()
    try:
        _check_or_store_config(conn, config, db_path)
        done = _done_keys(conn)
        todo = [t for t in tasks if t.key not in done]
        if chunk_size is None:
            chunk_size = max(1, min(32, math.ceil(len(todo) / (workers * 8)))) if todo else 1
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), unit="game",
                   desc="tournament", disable=not progress, dynamic_ncols=True,
                   smoothing=0.1)
        rules_dict = rules.to_dict()
        try:
            if workers == 1:
                for chunk in _chunks(todo, chunk_size):
                    rows = _play_chunk(chunk, rules_dict)
                    _insert(conn, rows)
                    played += len(rows)
                    bar.update(len(rows))
            elif todo:
                played = _run_pool(conn, todo, chunk_size, workers, rules_dict, bar)
        finally:
            bar.close()
        elapsed = time.perf_counter() - t0
        rows = conn.execute(f"SELECT {', '.join(ROW_FIELDS)} FROM games "
                            "ORDER BY agent_a, agent_b, deal, seating").fetchall()
    finally:
        conn.close()
    report = _compute_report(rows, config, confidence=confidence, bootstrap=bootstrap,
                             anchor=anchor, db_path=str(db_path))
    report.games_this_run = played
    report.elapsed_s = elapsed
    return report


def _run_pool(conn: sqlite3.Connection, todo: list[GameTask], chunk_size: int, workers: int,
              rules_dict: dict[str, Any], bar: Any) -> int:
    played = 0
    chunks = _chunks(todo, chunk_size)
    ex = cf.ProcessPoolExecutor(max_workers=workers, initializer=_init_worker)
    try:
        pending: set[cf.Future] = set()

        def submit_next() -> bool:
            chunk = next(chunks, None)
            if chunk is None:
                return False
            pending.add(ex.submit(_play_chunk, chunk, rules_dict))
            return True

        for _ in range(workers * 2):
            if not submit_next():
                break
        while pending:
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                pending.discard(fut)
                rows = fut.result()
                _insert(conn, rows)
                played += len(rows)
                bar.update(len(rows))
                submit_next()
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return played


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Round robin between agents with duplicate deals (each deal played twice, seats "
        "swapped), confidence intervals per pair and Bradley-Terry ratings. Results are "
        "stored in SQLite as games finish; re-running with the same --db resumes.")
    parser.epilog = ("Example: cribenv tournament --agents random greedy expert --games 200 "
                     "--workers 4 --db results.sqlite --out results/")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="agent specs (random, greedy, expert, ppo:PATH), optionally "
                             "labelled LABEL=SPEC (e.g. random2=random)")
    parser.add_argument("--games", type=int, default=200, metavar="N",
                        help="games per pair, even: N/2 deals x 2 seatings (default 200)")
    parser.add_argument("--workers", type=int, default=_cores(),
                        help="worker processes (default: all cores, here %(default)s)")
    parser.add_argument("--db", default="results.sqlite",
                        help="SQLite results database; an existing one is resumed "
                             "(default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    parser.add_argument("--target", type=int, default=121, choices=(61, 121),
                        help="game target (default 121; skunk lines follow the target)")
    parser.add_argument("--out", metavar="DIR",
                        help="write tournament.png, tournament.json and tournament.csv here")
    parser.add_argument("--bootstrap", type=int, default=500,
                        help="bootstrap resamples for the rating intervals (default 500)")
    parser.add_argument("--anchor", default=None,
                        help="agent rated 0, or 'mean' (mean rating 1500); default: random "
                             "if it plays, else mean")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    rules = Rules(target=args.target)
    db = Path(args.db)
    if db.exists():
        print(f"resuming from {db} (games already stored are skipped)", file=sys.stderr)
    report = run_tournament(args.agents, args.games, workers=args.workers, db_path=db,
                            seed=args.seed, rules=rules, progress=not args.no_progress,
                            bootstrap=args.bootstrap, anchor=args.anchor)
    print(report.format())
    if report.games_this_run:
        print(f"\n{report.games_this_run} games in {report.elapsed_s:.1f} s "
              f"({report.games_per_s:.1f} games/s, {args.workers} workers); results in {db}")
    else:
        print(f"\nall {report.games} games were already in {db}")
    if args.out:
        paths = report.save(args.out)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0
