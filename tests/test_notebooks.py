"""The notebooks are documentation: every code cell must run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_cells_run(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    nb = json.loads(path.read_text())
    namespace: dict = {}
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)


def test_there_is_a_notebook():
    assert NOTEBOOKS
