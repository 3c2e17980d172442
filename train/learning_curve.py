"""``learning_curve.png`` of a run: its evaluation history (``eval.csv``) as a plot."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


def numeric_rows(path: Path, keys=None) -> list[dict[str, str]]:
    """The rows of the CSV file ``path`` with a finite number in every column of ``keys``
    (default: the ``step`` and every win-rate column): a damaged line is left out, so a plot
    never fails a finished run."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    needed = list(keys) if keys is not None else ["step"] + [
        k for k in rows[0] if k.endswith(("_win_rate", "_win_lo", "_win_hi"))]

    def numeric(r: dict) -> bool:
        try:
            return all(np.isfinite(float(r[k])) for k in needed)
        except (KeyError, TypeError, ValueError):
            return False
    return [r for r in rows if numeric(r)]


def plot_learning_curve(run_dir: str | Path) -> Path | None:
    """learning_curve.png from eval.csv: win rate (95% CI) against each heuristic."""
    run_dir = Path(run_dir)
    path = run_dir / "eval.csv"
    if not path.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = numeric_rows(path)
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    plot_win_rates(ax, [int(r["step"]) for r in rows], rows)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title("Self-play PPO: evaluation against the heuristic bots")
    fig.tight_layout()
    out = run_dir / "learning_curve.png"
    from cribenv.files import save_figure

    save_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def plot_win_rates(ax, x, rows: list[dict[str, str]]) -> None:
    """Each bot's win rate in ``rows`` (eval.csv rows) against ``x``, with its 95% band, and
    the fair share (1/2, or the ``fair_share`` column of 3- and 4-player runs) dashed."""
    for spec in sorted(k[: -len("_win_rate")] for k in rows[0] if k.endswith("_win_rate")):
        p = np.array([float(r[f"{spec}_win_rate"]) for r in rows]) * 100
        lo = np.array([float(r[f"{spec}_win_lo"]) for r in rows]) * 100
        hi = np.array([float(r[f"{spec}_win_hi"]) for r in rows]) * 100
        ax.plot(x, p, marker="o", label=f"vs {spec}")
        ax.fill_between(x, lo, hi, alpha=0.2)
    fair = float(rows[0].get("fair_share", 0.5)) * 100
    ax.axhline(fair, color="grey", lw=0.8, ls="--", label=f"fair share ({fair:.0f}%)")
    ax.set_ylim(0, 100)   # the whole scale: the fair share's line is always in view
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0f}%")
    ax.legend()
