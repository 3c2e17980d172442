"""A passing run of the README's test command (pytest-xdist, ``-n 2``) prints nothing after
its last line. A worker that reports it has finished gets 5 s (execnet's grace) before it is
sent SIGINT; pytest's last garbage collections ran in that time and traversed the whole heap,
which after a full run on a loaded machine took longer: the KeyboardInterrupt surfaced in
hypothesis' gc callback, a traceback after the 100% line. ``conftest.py`` collects and freezes
the heap before the worker reports, so those collections have nothing left to traverse.

The heap is measured as the worker reports it has finished (its last ``pytest_sessionfinish``,
after the freeze) and sent with that report (``workeroutput``); the controller writes it before
it exits. Measured later in the worker, after the report, the file came after the controller
had exited, or never (the worker is sent SIGINT after the grace): on a loaded machine the test
failed with no file to read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RECORDER = """
import gc, json, os
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    # in the worker, after conftest.py's: what its report carries to the controller
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session.config.workeroutput["heap"] = {"tracked": len(gc.get_objects()),
                                               "frozen": gc.get_freeze_count()}

def pytest_testnodedown(node, error):
    # in the controller, once the worker's report is in: before the run ends
    with open(os.environ["HEAP_REPORT"], "w") as f:
        json.dump({"error": repr(error) if error else None,
                   **getattr(node, "workeroutput", {}).get("heap", {})}, f)
"""


def test_a_worker_leaves_its_last_collections_nothing_to_traverse(tmp_path):
    pytest.importorskip("xdist")
    (tmp_path / "heap_recorder.py").write_text(textwrap.dedent(RECORDER))
    report = tmp_path / "heap.json"
    env = {**os.environ, "HEAP_REPORT": str(report),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTEST_XDIST_WORKER", None)
    test = "tests/test_plots.py::test_learning_curve_title_names_the_bots_it_shows"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "1", "-p", "heap_recorder",
                          "-p", "no:cacheprovider", test],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    heap = json.loads(report.read_text())   # written by the controller before it exited
    assert heap["error"] is None, heap
    # the heap of the run (matplotlib, numpy, the test) is frozen; what a collection would still
    # traverse is what the worker makes after it (its report and summary)
    assert heap["frozen"] > 50_000 and heap["tracked"] < 20_000, heap
