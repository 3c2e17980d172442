"""The report of a tournament: per-pair statistics and ratings, as text, JSON, CSV and PNG.

:func:`compute_report` turns stored games into a :class:`TournamentReport` (see
:mod:`tournament.statistics` and :mod:`tournament.ratings` for the methods);
:func:`load_report` does it for a results database.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cribenv.files import atomic_path, write_text
from tournament.ratings import RATING_ALPHA, Rating, UnitWins, rate, resolve_anchor
from tournament.schedule import parse_spec
from tournament.statistics import BUCKETS, PairStats, json_number, pair_units
from tournament.storage import FORMAT, read_results


@dataclass
class TournamentReport:
    """Everything a tournament measured (methods: :mod:`tournament.statistics`,
    :mod:`tournament.ratings`)."""

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
    games_per_node: dict[str, int] = field(default_factory=dict)   # with Ray: games by node id
    notes: list[str] = field(default_factory=list)   # warnings, e.g. unidentified ratings
    # ms per decision asked, per agent, over the games timed (machine-dependent: shown in the
    # text report, never in tournament.csv)
    think_ms: dict[str, float] = field(default_factory=dict)
    # the games each agent forfeited (a bot that timed out, crashed or broke the protocol:
    # agents.arena.BotFailure), by kind; they count as its losses
    forfeits: dict[str, dict[str, int]] = field(default_factory=dict)

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
            "games_per_s": json_number(self.games_per_s),
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
            "think_ms_per_decision": {a: round(ms, 4) for a, ms in self.think_ms.items()},
            "forfeits": self.forfeits,
        }

    def write_json(self, path: str | os.PathLike[str]) -> None:
        write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")

    def write_csv(self, path: str | os.PathLike[str]) -> None:
        """One row per pair: counts, and value/low/high of every estimate."""
        header = ["agent_a", "agent_b", "games", "units", "wins_a", "wins_b", "skunks_a",
                  "skunks_b", "mean_hands"]
        est_names = ["win_rate_a", "net_points_a"] + [
            f"{who}_{b}_per_hand" for who in ("a", "b") for b in BUCKETS]
        for name in est_names:
            header += [name, f"{name}_low", f"{name}_high"]
        with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
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
        """A PNG of the pairs' win rates and the ratings (see :func:`plots.plot_report`)."""
        from tournament.plots import plot_report

        plot_report(self, path)

    def agent_legend(self) -> str:
        """A line per agent whose name is not its spec: ``scratch = ppo:runs/x/policy.safetensors``
        (a long path shortened to its last two parts).

        >>> from types import SimpleNamespace
        >>> report = SimpleNamespace(agents=["scratch", "greedy"],
        ...                          specs=["ppo:/tmp/demo/selfplay/policy.safetensors", "greedy"])
        >>> print(TournamentReport.agent_legend(report))
        scratch = ppo:.../selfplay/policy.safetensors
        """
        lines = []
        for name, spec in zip(self.agents, self.specs):
            if name != spec:
                kind, _, path = spec.partition(":")
                parts = path.replace("\\", "/").split("/")
                if len(parts) > 2:
                    spec = f"{kind}:.../{'/'.join(parts[-2:])}"
                lines.append(f"{name} = {spec}")
        return "\n".join(lines)

    def format(self) -> str:
        """The results as text tables."""
        conf = f"{self.confidence:.0%}"
        lines = []
        status = "" if self.complete else f" (incomplete: {self.games}/{self.games_expected})"
        lines.append(f"Tournament: {len(self.agents)} agents, {self.games_per_pair} games per "
                     f"pair (duplicate deals), seed {self.seed}, target "
                     f"{self.rules.get('target')}, {self.games} games{status}")
        legend = self.agent_legend()
        if legend:
            lines += ["  " + line for line in legend.splitlines()]
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
        if self.think_ms:
            lines.append("")
            lines.append("Time to decide, ms per decision asked (this machine; forced cards are "
                         "not asked): " + ", ".join(f"{a} {self.think_ms[a]:.2f}"
                                                   for a in self.agents if a in self.think_ms))
        if self.forfeits:
            lines.append("")
            lines.append("Games forfeited (counted as losses): " + "; ".join(
                f"{agent} {sum(kinds.values())} ("
                + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + ")"
                for agent, kinds in sorted(self.forfeits.items())))
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


def compute_report(rows: list[tuple], config: dict[str, Any], *, confidence: float,
                   bootstrap: int, anchor: str | None, db_path: str,
                   think: dict[str, tuple[float, int]] | None = None,
                   forfeits: dict[str, dict[str, int]] | None = None) -> TournamentReport:
    """The report of the games ``rows`` (tuples of ``ROW_FIELDS``) of tournament ``config``;
    ``think``: each agent's seconds deciding and decisions asked
    (:func:`tournament.storage.think_times`); ``forfeits``:
    :func:`tournament.storage.forfeits`."""
    entrants = [parse_spec(s) for s in config["agents"]]
    labels = [e.label for e in entrants]
    anchor_idx, anchor_text = resolve_anchor(labels, anchor)
    by_pair: dict[tuple[str, str], list[tuple]] = {}
    for r in rows:
        by_pair.setdefault((r[0], r[1]), []).append(r)
    n = len(labels)
    pairs_out: list[PairStats] = []
    unit_wins: list[UnitWins] = []
    for i, j in itertools.combinations(range(n), 2):
        a, b = labels[i], labels[j]
        stats, wins_a_u, wins_b_u = pair_units(a, b, by_pair.get((a, b), []), confidence)
        pairs_out.append(stats)
        unit_wins.append((i, j, wins_a_u, wins_b_u))
    ratings, notes = rate(labels, pairs_out, unit_wins, anchor_idx, seed=int(config["seed"]),
                          confidence=confidence, bootstrap=bootstrap)
    gpp = int(config["games_per_pair"])
    return TournamentReport(
        agents=labels, specs=[e.spec for e in entrants], games_per_pair=gpp,
        seed=int(config["seed"]), rules=dict(config["rules"]), confidence=confidence,
        pairs=pairs_out, ratings=ratings, anchor=anchor_text, bootstrap=bootstrap,
        games=len(rows), games_expected=gpp * n * (n - 1) // 2, db_path=db_path, notes=notes,
        think_ms={a: 1000 * sec / asked for a, (sec, asked) in (think or {}).items() if asked},
        forfeits=dict(forfeits or {}))


def load_report(db_path: str | os.PathLike[str], *, confidence: float = 0.95,
                bootstrap: int = 500, anchor: str | None = None) -> TournamentReport:
    """The report of the games stored in ``db_path`` (complete or not)."""
    config, rows, think, lost = read_results(db_path)
    return compute_report(rows, config, confidence=confidence, bootstrap=bootstrap,
                          anchor=anchor, db_path=str(db_path), think=think, forfeits=lost)
