"""The figures of a training run: ``learning_curve.png`` (its evaluations, ``eval.csv``) and
``training.png`` (the evaluations over minutes beside the update statistics of
``logs/progress.csv``)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from cribenv.files import save_figure


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
    """learning_curve.png from eval.csv: win rate (95% CI) against each bot it evaluated
    against (the title names them)."""
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
    from matplotlib.ticker import EngFormatter

    ax.xaxis.set_major_formatter(EngFormatter(sep=""))   # "10M", not 1.0 and a "1e7" apart
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(f"Self-play PPO: evaluation against {bots_named(rows)}")
    fig.tight_layout()
    out = run_dir / "learning_curve.png"
    save_figure(fig, out, dpi=120)
    plt.close(fig)
    return out


def bots_named(rows: list[dict[str, str]]) -> str:
    """The bots of eval.csv's columns in words.

    >>> bots_named([{"step": "0", "greedy_win_rate": "0.1"}])
    'greedy'
    >>> bots_named([{"expert_win_rate": "0.2", "greedy_win_rate": "0.1", "random_win_rate": "1"}])
    'expert, greedy and random'
    """
    bots = sorted(k[: -len("_win_rate")] for k in rows[0] if k.endswith("_win_rate"))
    return " and ".join([", ".join(bots[:-1]), bots[-1]] if len(bots) > 1 else bots)


# logs/progress.csv's columns drawn by training.png, with each panel's title
TRAINING_PANELS = {
    "entropy": "policy entropy (nats)",
    "approx_kl": "approximate KL of each update",
    "value_loss": "value loss",
    "steps_per_s": "learner steps per second",
}


def plot_training(run_dir: str | Path) -> Path | None:
    """``training.png``: the win rate against each bot (95% intervals) over the minutes of
    training, every evaluation of ``eval.csv`` to the last, and the policy's entropy, the KL of
    each update, the value loss and the speed over learner steps (``logs/progress.csv``)."""
    run_dir = Path(run_dir)
    progress = run_dir / "logs" / "progress.csv"
    if not progress.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter, MaxNLocator

    with progress.open(newline="") as f:
        header = next(csv.reader(f), [])
    panels = {k: v for k, v in TRAINING_PANELS.items() if k in header}  # dmc: no entropy, KL
    keys = ("step", *panels)
    train_rows = numeric_rows(progress, keys)
    col = {k: np.array([float(r[k]) for r in train_rows]) for k in keys}
    evals = (numeric_rows(run_dir / "eval.csv")
             if (run_dir / "eval.csv").exists() else [])
    evals = [r for r in evals if finite_number(r.get("wall_s"))]
    fig, axes = plt.subplots(1, 1 + len(panels), figsize=(5 * (1 + len(panels)), 3.6),
                             squeeze=False)
    axes = axes[0]   # one panel, or several
    ax = axes[0]
    if evals:
        plot_win_rates(ax, np.array([float(r["wall_s"]) for r in evals]) / 60, evals)
        ax.set_title(f"win rate against {bots_named(evals)} (95% CI)")
    else:
        ax.set_title("win rate (no evaluation yet)")
    ax.set_xlabel("minutes of training")
    for ax, (key, title) in zip(axes[1:], panels.items()):
        ax.plot(col["step"], col[key], lw=0.8)
        ax.set_xlabel("learner steps")
        ax.set_title(title)
        ax.xaxis.set_major_locator(MaxNLocator(4))   # "2M", not 2000000: labels that fit
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    fig.tight_layout()
    out = run_dir / "training.png"
    save_figure(fig, out, dpi=100)
    plt.close(fig)
    return out


def finite_number(text: str | None) -> bool:
    """``text`` (a CSV cell) reads as a finite number."""
    try:
        return bool(np.isfinite(float(text)))
    except (TypeError, ValueError):
        return False


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
