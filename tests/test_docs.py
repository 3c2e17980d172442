"""The documentation site builds with warnings as errors (``mkdocs build --strict``) and holds
what it promises: the rules page is RULES.md, the env card and observation table are there, the
API pages are generated from the docstrings.

Skipped, saying why, without the 'docs' extra; under ``CI`` (which installs it) that fails.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def page(site: Path, name: str) -> str:
    """The visible text of a built page."""
    html = (site / name / "index.html").read_text(encoding="utf-8")
    return unescape(re.sub(r"<[^>]+>", "", html))


def require_docs() -> None:
    """Skip (fail under CI) without the 'docs' extra."""
    missing = [m for m in ("mkdocs", "material", "mkdocstrings_handlers")
               if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the 'docs' extra, but {', '.join(missing)} is missing")
        pytest.skip(f"the docs site needs {', '.join(missing)} (the 'docs' extra)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    require_docs()
    rules = ROOT / "docs" / "rules.md"
    out = tmp_path_factory.mktemp("docs") / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, rules


def load(name: str):
    """A module of docs/ (the MkDocs hook, the griffe extension) by its file name."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rules_page_is_rules_md(site):
    out, rules = site
    text = page(out, "rules")
    headings = re.findall(r"^#+ (.+)$", rules.read_text(encoding="utf-8"), re.M)
    assert len(headings) >= 5
    for heading in headings:
        assert heading in text


def test_the_rules_page_is_the_projects_rules_reference():
    """docs/rules.md is the project's rules reference (``shared/RULES.md``, kept outside the
    repository) word for word, so a clone holds the rules; compared wherever that file is found
    beside this checkout."""
    found = [folder / "shared" / "RULES.md" for folder in (ROOT, *ROOT.parents)
             if (folder / "shared" / "RULES.md").is_file()]
    if not found:
        pytest.skip("no shared/RULES.md beside this checkout to compare docs/rules.md with")
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == \
        found[0].read_text(encoding="utf-8")


def test_the_env_card_and_observation_table_are_on_their_pages(site):
    site, _ = site
    env = page(site, "env")
    assert "observe(agent) works for any agent at any time" in env
    assert "action_masks()" in env                                   # the Gymnasium wrapper
    obs = page(site, "observation")
    for row in ("0-51", "hand", "562-600", "series_tail"):
        assert row in obs
    assert "--8<--" not in env + obs                                 # every include resolved


def test_the_api_pages_come_from_the_docstrings(site):
    site, _ = site
    assert "score_hand_breakdown" in page(site, "api/cribenv")
    assert "IllegalActionError" in page(site, "api/game")
    assert "make_agent" in page(site, "api/agents")
    assert "run_tournament" in page(site, "api/tournament")
    aec = page(site, "api/aec")
    assert "Parallel API" in aec and ":class:" not in aec and "=====" not in aec


def test_rest_habits_read_as_markdown():
    require_docs()
    rest = load("griffe_rest")
    assert doctest.testmod(rest).failed == 0
    text = ("Sizes:\n\n=====  ======\nname   value\n=====  ======\n"
            "a      1 | 2\n=====  ======\n\n>>> 1 + 1\n2\n\nafter :meth:`A.b`")
    assert rest.to_markdown(text).splitlines() == [
        "Sizes:", "", "| name | value |", "|---|---|", "| a | 1 \\| 2 |", "",
        "```pycon", ">>> 1 + 1", "2", "```", "", "after `A.b`"]
    indented = "Usage::\n\n    >>> x = 1\n"                 # already a code block: kept
    assert rest.to_markdown(indented) == "Usage:\n\n    >>> x = 1"


def test_every_link_within_a_page_has_its_anchor(site):
    """Every ``#anchor`` link of a page names a heading of that page (links to another page's
    section name the page)."""
    site, _ = site
    broken = []
    for html_path in site.rglob("*.html"):
        html = html_path.read_text(encoding="utf-8")
        ids = set(re.findall(r'id="([^"]+)"', html))
        broken += [f"{html_path.relative_to(site)}: #{a}"
                   for a in set(re.findall(r'href="#([^"]+)"', html)) - ids]
    assert not broken, broken


def test_every_mkdocs_command_of_the_readme_says_to_install_the_docs_extra():
    """The README said `.venv/bin/mkdocs serve` after an install without the 'docs' extra:
    "command not found". Each line that runs MkDocs installs the extra first, or the set-up
    command takes it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = next(line for line in readme.splitlines() if "pip install" in line)
    setup_has_docs = re.search(r'"\.\[[^"\]]*\bdocs\b', setup) is not None
    runs = [line for line in readme.splitlines() if re.search(r"\bmkdocs (serve|build)", line)]
    assert runs
    for line in runs:
        assert setup_has_docs or '-e ".[docs]"' in line, line
