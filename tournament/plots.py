"""The picture of a tournament: each pair's win rate and the ratings, with their intervals.

The report draws itself with :func:`plot_report` (``TournamentReport.plot``, ``.save``); this
module reads only what :class:`Drawable` names, so it does not import the report back."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from cribenv.files import save_figure
from tournament.ratings import Rating
from tournament.statistics import PairStats


class Drawable(Protocol):
    """What the picture reads of a tournament's report
    (:class:`tournament.report.TournamentReport`)."""

    pairs: Sequence[PairStats]
    ratings: Sequence[Rating]
    confidence: float
    anchor: str
    games: int
    games_per_pair: int
    seed: int
    rules: Mapping[str, Any]

    def agent_legend(self) -> str: ...


def plot_report(report: Drawable, path: str | os.PathLike[str]) -> None:
    """A PNG (matplotlib, Agg): A's win rate per pair with its interval, and the ratings
    with theirs (open intervals run to the edge of the axis, with an arrow head)."""
    from matplotlib.figure import Figure  # no pyplot: no global backend, no GUI

    labels = [_pair_label(p.agent_a, p.agent_b) for p in report.pairs]
    names = {r.agent: _wrapped(r.agent) for r in report.ratings}
    # a row's height grows with the lines of its label (a long name wraps)
    label_lines = max([label.count("\n") + 1 for label in [*labels, *names.values()]] or [1])
    rows = max(1, len(report.pairs), len(report.ratings))
    height = max(3.0, (0.3 + 0.15 * label_lines) * rows + 1.6)
    fig = Figure(figsize=(12, height))
    ax1, ax2 = fig.subplots(1, 2)
    ys = np.arange(len(report.pairs))
    vals = np.array([p.win_rate_a.value for p in report.pairs], float) * 100
    lows = np.array([p.win_rate_a.low for p in report.pairs], float) * 100
    highs = np.array([p.win_rate_a.high for p in report.pairs], float) * 100
    # clipped: a rate of exactly 0 or 1 can sit a rounding error outside its interval
    err = np.clip(np.nan_to_num(np.vstack([vals - lows, highs - vals])), 0, None)
    ax1.errorbar(vals, ys, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax1.axvline(50, color="grey", lw=1, ls="--")
    ax1.set_yticks(ys, labels)
    ax1.invert_yaxis()
    ax1.set_xlim(-3, 103)   # a marker at 0% or 100% stays inside the frame
    ax1.set_xlabel(f"win % of the first agent ({report.confidence:.0%} CI)")
    ax1.set_title("Pairs (duplicate deals)")
    ratings = sorted(report.ratings, key=lambda r: -r.rating)
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
    ax2.set_yticks(ry, [names[r.agent] for r in ratings])
    ax2.invert_yaxis()
    ax2.set_xlabel(textwrap.fill(f"Bradley-Terry rating, Elo scale ({report.anchor}; "
                                 f"{report.confidence:.0%} bootstrap CI)", 45))
    ax2.set_title("Ratings")
    ax2.grid(axis="x", alpha=0.3)
    fig.suptitle(f"cribenv tournament: {report.games} games, {report.games_per_pair} per pair, "
                 f"seed {report.seed}, target {report.rules.get('target')}")
    legend = report.agent_legend()
    if legend:   # what a name given on the command line ("scratch=ppo:PATH") stands for
        fig.text(0.01, 0.01, legend, fontsize=8, color="dimgrey", va="bottom")
    lines = legend.count("\n") + 1 if legend else 0
    fig.tight_layout(rect=(0, (0.15 * lines + 0.05) / height if lines else 0, 1, 1))
    save_figure(fig, path, dpi=120)


def _wrapped(name: str, width: int = 30) -> str:
    """``name`` on lines of at most ``width`` characters (broken at hyphens and spaces, or
    inside a long word), so a long agent name cannot push the axes off the figure."""
    return textwrap.fill(name, width) if len(name) > width else name


def _pair_label(a: str, b: str) -> str:
    """``"a vs b"`` on one line, or on several when it is long."""
    label = f"{a} vs {b}"
    return label if len(label) <= 45 else f"{_wrapped(a)}\nvs {_wrapped(b)}"
