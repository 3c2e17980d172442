"""Learning curves of several runs in one figure, from their ``eval.csv`` files: the win rate
against each bot (95% bands) and the throw regret, against learner decisions (top row) and
against minutes of training (bottom row)::

    python -m train.compare_runs recipe=runs/scratch-tv plain=runs/scratch-plain \\
        --out results/scratch/curves.png

A run is ``LABEL=RUN_DIR`` (or ``RUN_DIR``, labelled by its folder's name); rows without
``wall_s`` (older runs) are drawn against decisions only; a run without the throw columns
leaves that panel without it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from cribenv.files import save_figure
from train.learning_curve import finite_number, numeric_rows

#: The throw diagnostic's column (train.evaluation) and its axis label.
REGRET = ("throw_regret", "throw regret (points of hand and crib)")


def read_runs(specs: list[str]) -> dict[str, list[dict[str, str]]]:
    """``LABEL=RUN_DIR`` specs -> each run's readable ``eval.csv`` rows; ValueError names a
    folder without an ``eval.csv`` or with no readable row, or a label given twice."""
    runs: dict[str, list[dict[str, str]]] = {}
    for spec in specs:
        label, _, folder = spec.rpartition("=")
        path = Path(folder) / "eval.csv"
        label = label or Path(folder).name
        if label in runs:
            raise ValueError(f"the label {label!r} is given twice")
        if not path.is_file():
            raise ValueError(f"{path} does not exist (is {folder!r} a training run's folder?)")
        rows = numeric_rows(path)
        if not rows:
            raise ValueError(f"{path} holds no readable evaluation row")
        runs[label] = rows
    return runs


def bots(runs: dict[str, list[dict[str, str]]]) -> list[str]:
    """The bots any run was evaluated against, in order of first appearance."""
    seen: list[str] = []
    for rows in runs.values():
        for key in rows[0]:
            name = key[: -len("_win_rate")] if key.endswith("_win_rate") else None
            if name and name not in seen:
                seen.append(name)
    return seen


def plot_runs(runs: dict[str, list[dict[str, str]]], out: str | Path) -> Path:
    """Draw the figure of the module docstring to ``out`` (PNG); returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    names = bots(runs)
    columns = [(f"{b}_win_rate", f"win rate against {b} (95% CI)") for b in names] + [REGRET]
    fig, axes = plt.subplots(2, len(columns), figsize=(5 * len(columns), 7.5), squeeze=False)
    for label, rows in runs.items():
        step = np.array([float(r["step"]) for r in rows])
        wall = np.array([float(r["wall_s"]) / 60 if finite_number(r.get("wall_s")) else np.nan
                         for r in rows])
        for j, (key, _) in enumerate(columns):
            if key not in rows[0]:
                continue
            y, lo, hi = _series(rows, key)
            for i, x in enumerate((step, wall)):
                ax = axes[i, j]
                keep = np.isfinite(x) & np.isfinite(y)
                if not keep.any():
                    continue
                line, = ax.plot(x[keep], y[keep], marker="o", ms=3, label=label)
                if lo is not None:
                    ax.fill_between(x[keep], lo[keep], hi[keep], alpha=0.15,
                                    color=line.get_color())
    for j, (key, title) in enumerate(columns):
        for i, xlabel in enumerate(("learner decisions", "minutes of training")):
            ax = axes[i, j]
            ax.set_title(title)
            ax.set_xlabel(xlabel)
            if i == 0:
                ax.xaxis.set_major_formatter(EngFormatter(sep=""))
            if key != REGRET[0]:
                ax.axhline(50, color="grey", lw=0.8, ls="--")
                ax.set_ylim(0, 100)
                ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0f}%")
            else:
                ax.set_ylim(bottom=0)
            if ax.lines:
                ax.legend(fontsize=8)
    fig.tight_layout()
    path = save_figure(fig, out, dpi=100)
    plt.close(fig)
    return path


def _series(rows, key):
    """The column ``key`` of ``rows`` (win rates as %), with its band for a win rate."""
    def col(k):
        return np.array([float(r[k]) if finite_number(r.get(k)) else np.nan for r in rows])

    if key.endswith("_win_rate"):
        stem = key[: -len("_win_rate")]
        return col(key) * 100, col(f"{stem}_win_lo") * 100, col(f"{stem}_win_hi") * 100
    return col(key), None, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m train.compare_runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="[LABEL=]RUN_DIR",
                        help="training runs' folders (each with an eval.csv)")
    parser.add_argument("--out", required=True, help="the figure to write (PNG)")
    args = parser.parse_args(argv)
    try:
        path = plot_runs(read_runs(args.runs), args.out)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
