"""Every Python snippet of the README runs as printed (the SB3 one with fewer steps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)
SHORTER = {"model.learn(20_000)": "model.learn(256)"}   # the same call, a test-sized budget


def test_the_readme_has_snippets():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("code", BLOCKS, ids=[b.splitlines()[0][:40] for b in BLOCKS])
def test_readme_snippet_runs(code, capsys):
    for long, short in SHORTER.items():
        code = code.replace(long, short)
    if "sb3_contrib" in code:
        pytest.importorskip("sb3_contrib")
    if "cribenv.vector" in code:
        pytest.importorskip("numba")
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
