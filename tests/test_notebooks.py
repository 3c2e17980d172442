"""The notebooks are documentation: each one runs in a Jupyter kernel (nbclient, as ``jupyter
execute`` does) and what its cells print is checked, so a notebook that runs but teaches a wrong
number fails too.

A notebook whose extras are not installed is skipped, saying which; under ``CI`` (where every
extra is installed) a missing extra fails instead. The notebooks are stored without outputs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RUNNER = ("nbclient", "nbformat", "ipykernel")          # the 'docs' extra

# notebook -> (the modules it needs, the extra that brings them)
NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "quickstart.ipynb": (("scipy", "choix", "matplotlib"), "tournament"),
    "sb3_maskable_ppo.ipynb": (("torch", "sb3_contrib", "scipy", "matplotlib"), "train"),
    "selfplay.ipynb": (("torch", "numba", "safetensors", "matplotlib", "tqdm"), "train"),
    "tournament.ipynb": (("scipy", "choix", "matplotlib", "tqdm"), "tournament"),
    "rllib_cluster.ipynb": (("ray", "torch", "safetensors", "scipy"), "rllib"),
    "replay_render.ipynb": (("PIL",), "render"),
}

NUMBER = r"([0-9]*\.?[0-9]+)"


def require(modules: tuple[str, ...], extra: str) -> None:
    """Skip (fail under CI) when one of ``modules`` is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        reason = f"needs {', '.join(missing)} (the '{extra}' extra)"
        if os.environ.get("CI"):
            pytest.fail(f"CI installs every extra, but this test {reason}")
        pytest.skip(reason)


def execute(name: str, cwd: Path):
    """Run every cell of ``notebooks/name`` in a fresh kernel started in ``cwd``."""
    require(RUNNER, "docs")
    require(*NEEDS[name])
    import nbclient
    import nbformat

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def text(nb) -> str:
    """Everything the cells printed (streams and plain-text results), in order."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif "text/plain" in out.get("data", {}):
                parts.append(out["data"]["text/plain"] + "\n")
    return "".join(parts)


def images(nb) -> list[str]:
    return [out["data"]["image/png"] for cell in nb.cells for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})]


def estimate(pattern: str, out: str) -> tuple[float, float, float]:
    """The value and interval after ``pattern`` ("0.575 [0.425, 0.712]"), checked coherent."""
    m = re.search(pattern + rf" {NUMBER} \[{NUMBER}, {NUMBER}\]", out)
    assert m, f"no {pattern!r} estimate in the output:\n{out}"
    value, low, high = map(float, m.groups())
    assert 0.0 <= low <= value <= high <= 1.0, (value, low, high)
    return value, low, high


def test_every_notebook_is_tested_and_stored_without_outputs():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == sorted(NEEDS)
    for name in names:
        nb = json.loads((NOTEBOOKS / name).read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert code and all(not c["outputs"] and c["execution_count"] is None for c in code), (
            f"{name} is stored with outputs; clear them (jupyter nbconvert "
            f"--clear-output --inplace notebooks/{name})")
        assert any(c["cell_type"] == "markdown" for c in nb["cells"])


def test_quickstart(tmp_path):
    out = text(execute("quickstart.ipynb", tmp_path))
    assert "\ntotal 29\n" in out                          # 5C 5D 5S JH with the 5H starter
    total = re.search(r"\} sum (\S+)", out)
    assert total and abs(float(total.group(1))) < 1e-9    # "points" rewards are zero-sum
    for pair in ("random vs greedy", "random vs expert", "greedy vs expert"):
        assert re.search(rf"^{pair} +20 ", out, re.M), f"no row for {pair}"


def test_sb3_notebook(tmp_path):
    nb = execute("sb3_maskable_ppo.ipynb", tmp_path)
    out = text(nb)
    assert "observation (601,) float32 | actions Discrete(52)" in out
    curve = re.findall(rf"steps +(\d+) +win rate against random {NUMBER}", out)
    assert [int(s) for s, _ in curve] == [0, 1024, 2048, 3072]
    estimate("final win rate against random:", out)
    assert len(images(nb)) == 1                       # the learning curve


def test_selfplay_notebook(tmp_path):
    nb = execute("selfplay.ipynb", tmp_path)
    out = text(nb)
    rows = re.findall(rf"step +(\d+) +greedy {NUMBER} \[{NUMBER}, {NUMBER}\]", out)
    assert len(rows) >= 3 and int(rows[0][0]) == 0
    steps = [int(r[0]) for r in rows]
    assert steps == sorted(steps)
    for _, value, low, high in rows:
        assert 0.0 <= float(low) <= float(value) <= float(high) <= 1.0
    estimate("trained policy against random:", out)
    assert (tmp_path / "runs" / "selfplay" / "policy.safetensors").is_file()
    assert len(images(nb)) >= 1                       # the learning curve


def test_tournament_notebook(tmp_path):
    nb = execute("tournament.ipynb", tmp_path)
    out = text(nb)
    assert "deal 0 seating 1: seat 0 expert seat 1 greedy" in out     # the seats swapped
    for agent in ("greedy", "expert", "shipped"):
        assert re.search(rf"^{agent} +\d+  \[\d+, \d+\]  \d+/80 wins$", out, re.M), agent
    estimate("greedy against expert, win rate:", out)
    assert "over 20 duplicate units" in out            # 40 games = 20 deals x 2 seatings
    assert "resumed: 0 games played, the same report" in out
    assert len(images(nb)) == 1                       # the tournament plot
    assert (tmp_path / "tournament.sqlite").is_file()


@pytest.mark.slow
def test_rllib_notebook(tmp_path):
    out = text(execute("rllib_cluster.ipynb", tmp_path))
    assert "2 nodes, CPUs per node: [0, 1.0]" in out         # a head without CPUs, a worker
    assert "player_0 to act; keys ['action_mask', 'observations'] legal cards: 6" in out
    steps = re.findall(r"iteration (\d): (\d+) env steps", out)
    assert steps == [("1", "256"), ("2", "512")]
    assert "env runners on the worker node: True (1)" in out
    estimate("RLlib learner against random:", out)
    assert "cluster stopped" in out


def test_replay_notebook(tmp_path):
    nb = execute("replay_render.ipynb", tmp_path)
    out = text(nb)
    m = re.search(r"(\d+) decisions, (\d+) frames of shape \(576, 960, 3\) uint8", out)
    assert m and int(m.group(2)) == int(m.group(1)) + 1     # the deal, then one per decision
    frames = int(m.group(2))
    assert re.search(r"biggest pegging play: Played\(.*points=[1-9]", out)
    assert f"replayed: {frames} frames, identical: True" in out
    assert len(images(nb)) == 2                               # the deal, the big play
    from PIL import Image

    with Image.open(tmp_path / "game.gif") as gif:
        assert gif.n_frames == frames and gif.size == (480, 288)
