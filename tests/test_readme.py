"""Every Python snippet of the README and of the documentation pages runs as printed (the SB3
ones with fewer steps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [(page, block) for page in PAGES
          for block in re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"),
                                  re.S | re.M)]
SHORTER = {"model.learn(20_000)": "model.learn(256)"}   # the same call, a test-sized budget


def test_the_front_page_and_the_docs_have_snippets():
    assert sum(page.name == "README.md" for page, _ in BLOCKS) >= 2
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("page, code", BLOCKS,
                         ids=[f"{p.name}:{b.splitlines()[0][:40]}" for p, b in BLOCKS])
def test_snippet_runs(page, code, capsys):
    for long, short in SHORTER.items():
        code = code.replace(long, short)
    if "sb3_contrib" in code:
        pytest.importorskip("sb3_contrib")
    if "cribenv.vector" in code:
        pytest.importorskip("numba")
    exec(compile(code, str(page), "exec"), {"__name__": "readme"})
