"""Every plot a run or a tournament writes, rendered from made-up data and checked as a person
would read it: no tick labels overlapping, win rates in %, the 50% line inside the axes,
markers at 0% and 100% inside the frame."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def overlaps(fig) -> list[str]:
    """Pairs of visible tick labels of one axis whose drawn boxes overlap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            boxes = [(t.get_text(), t.get_window_extent(renderer))
                     for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            for (a, ba), (b, bb) in zip(boxes, boxes[1:]):
                if ba.overlaps(bb):
                    bad.append(f"{ax.get_title()!r}: {a!r} and {b!r}")
    return bad


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def eval_rows(n=6):
    return [{"step": 2_000_000 * (i + 1), "wall_s": 600.0 * (i + 1), "greedy_win_rate": 0.3,
             "greedy_win_lo": 0.25, "greedy_win_hi": 0.35, "greedy_net_points": -0.5,
             "expert_win_rate": 0.2, "expert_win_lo": 0.15, "expert_win_hi": 0.25}
            for i in range(n)]


def figure_of(monkeypatch, call):
    """The figure ``call()`` saves (captured at ``save_figure``), and the saved path."""
    import cribenv.files

    seen = {}
    real = cribenv.files.save_figure

    def keep(fig, path, **kwargs):
        seen["fig"] = fig
        return real(fig, path, **kwargs)

    monkeypatch.setattr(cribenv.files, "save_figure", keep)
    for module in list(sys.modules.values()):   # the modules that imported it by name
        if getattr(module, "__dict__", {}).get("save_figure") is real:
            monkeypatch.setattr(module, "save_figure", keep)
    out = call()
    return seen["fig"], out


def write_progress(run_dir: Path, n: int = 200) -> None:
    write_csv(run_dir / "logs" / "progress.csv", [
        {"step": 1_536 * (i + 1), "entropy": 1.0, "approx_kl": 0.01, "value_loss": 0.3,
         "steps_per_s": 2500.0} for i in range(n)])


def test_training_png_has_readable_ticks(tmp_path, monkeypatch):
    from train.learning_curve import plot_training

    write_progress(tmp_path)
    write_csv(tmp_path / "eval.csv", eval_rows())
    fig, out = figure_of(monkeypatch, lambda: plot_training(tmp_path))
    assert out.is_file() and not overlaps(fig), overlaps(fig)


def test_training_png_titles_are_words_and_show_every_evaluation(tmp_path, monkeypatch):
    """The panels were titled ``approx_kl``, ``value_loss``, ``steps_per_s``; the win rates'
    panel names the bots it was evaluated against and ends at the last evaluation."""
    from train.learning_curve import plot_training

    write_progress(tmp_path)
    rows = eval_rows(3)
    rows[-1]["wall_s"] = 1234.5   # the final policy's evaluation, off the regular schedule
    write_csv(tmp_path / "eval.csv", rows)
    fig, _ = figure_of(monkeypatch, lambda: plot_training(tmp_path))
    titles = [ax.get_title() for ax in fig.axes]
    assert not [t for t in titles if "_" in t or not t], titles
    assert "expert and greedy" in titles[0]
    curves = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("vs ")]
    assert [line.get_xdata()[-1] for line in curves] == [1234.5 / 60] * 2
    assert not outside(fig), outside(fig)


def test_learning_curve_is_in_percent_with_the_fair_line(tmp_path, monkeypatch):
    from train.learning_curve import plot_learning_curve

    write_csv(tmp_path / "eval.csv", eval_rows())
    fig, out = figure_of(monkeypatch, lambda: plot_learning_curve(tmp_path))
    ax = fig.axes[0]
    assert out.is_file() and not overlaps(fig)
    low, high = ax.get_ylim()
    assert low <= 50 <= high and high == 100
    assert all(t.get_text().endswith("%") for t in ax.get_yticklabels() if t.get_text())
    assert any(line.get_ydata()[0] == 50 for line in ax.get_lines())


def test_learning_curve_title_names_the_bots_it_shows(tmp_path, monkeypatch):
    """A run evaluated against greedy only was titled "against the heuristic bots"."""
    from train.learning_curve import plot_learning_curve

    rows = [{k: v for k, v in r.items() if not k.startswith("expert")} for r in eval_rows()]
    write_csv(tmp_path / "eval.csv", rows)
    fig, _ = figure_of(monkeypatch, lambda: plot_learning_curve(tmp_path))
    assert fig.axes[0].get_title() == "Self-play PPO: evaluation against greedy"


def test_the_demo_curve_shows_the_50_percent_line_it_names(tmp_path, monkeypatch):
    from train.demo import plot_demo_curve

    rows = [{k: str(v) for k, v in r.items()} for r in eval_rows()]
    fig, out = figure_of(monkeypatch, lambda: plot_demo_curve(rows, tmp_path / "c.png"))
    left = fig.axes[0]
    assert "50%" in left.get_title() and left.get_ylim()[1] >= 50 and not overlaps(fig)


def test_tournament_markers_at_0_and_100_percent_stay_inside(tmp_path):
    from tournament import run_tournament
    from tournament.plots import plot_report

    report = run_tournament(["random", "expert"], 4, db_path=tmp_path / "t.sqlite",
                            progress=False, bootstrap=0)
    from matplotlib.figure import Figure

    import tournament.plots as plots
    captured = {}
    real = plots.save_figure

    def keep(fig, path, **kwargs):
        captured["fig"] = fig
        return real(fig, path, **kwargs)

    plots.save_figure = keep
    try:
        plot_report(report, tmp_path / "t.png")
    finally:
        plots.save_figure = real
    fig: Figure = captured["fig"]
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert low < 0 and high > 100 and not overlaps(fig) and not outside(fig)


def test_tournament_png_says_what_a_given_name_stands_for(tmp_path, monkeypatch):
    """The demo's "scratch" agent (``scratch=ppo:PATH``) was explained nowhere in the figure:
    a footnote names each agent's spec, clear of the axes."""
    from agents.ppo import SHIPPED_POLICY
    from tournament import run_tournament
    from tournament.plots import plot_report

    report = run_tournament([f"scratch=ppo:{SHIPPED_POLICY}", "greedy"], 2,
                            db_path=tmp_path / "t.sqlite", progress=False, bootstrap=0)
    import tournament.plots as plots

    seen = {}
    real = plots.save_figure

    def keep(fig, path, **kwargs):
        seen["fig"] = fig
        return real(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", keep)
    plot_report(report, tmp_path / "t.png")
    fig = seen["fig"]
    notes = [t for t in fig.texts if "scratch = ppo:" in t.get_text()]
    assert len(notes) == 1 and "cribbage_ppo.safetensors" in notes[0].get_text()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    note = notes[0].get_window_extent(renderer)
    for ax in fig.axes:
        assert not note.overlaps(ax.get_tightbbox(renderer)), "the footnote overlaps an axis"
    assert not overlaps(fig)


def outside(fig) -> list[str]:
    """What of ``fig`` is drawn beyond its edges: an axes with its title, labels and tick
    labels (as drawn), or a text of the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    frame = fig.bbox.padded(1)   # a pixel of rounding
    boxes = [(f"axes {ax.get_title()!r}", ax.get_tightbbox(renderer)) for ax in fig.axes]
    boxes += [(repr(t.get_text()), t.get_window_extent(renderer)) for t in fig.texts
              if t.get_visible() and t.get_text()]
    return [name for name, box in boxes
            if box.x0 < frame.x0 or box.x1 > frame.x1 or box.y0 < frame.y0 or box.y1 > frame.y1]


def test_tournament_png_keeps_a_60_character_name_and_the_labels_inside(tmp_path, monkeypatch):
    """A 60-character agent name pushed the ratings' x label off the right of the image."""
    from tournament import run_tournament
    from tournament.plots import plot_report

    name = "sweep-lr3e-4-entropy0.01-clip0.2-gamma0.995-batch4096-seed-07"[:60]
    assert len(name) == 60
    report = run_tournament([f"{name}=greedy", "random", "expert"], 2,
                            db_path=tmp_path / "t.sqlite", progress=False, bootstrap=0)
    import tournament.plots as plots

    seen = {}
    real = plots.save_figure

    def keep(fig, path, **kwargs):
        seen["fig"] = fig
        return real(fig, path, **kwargs)

    monkeypatch.setattr(plots, "save_figure", keep)
    plot_report(report, tmp_path / "t.png")
    fig = seen["fig"]
    assert not outside(fig), outside(fig)
    assert not overlaps(fig), overlaps(fig)
    for ax in fig.axes:   # the axes keep a readable width
        assert ax.get_position().width > 0.2
