"""The README's install prints what a newcomer needs, not a wall of warnings: setuptools
deprecated the license as a TOML table (``{ text = "MIT" }``) and printed a boxed warning at
every build of the package; an SPDX string needs setuptools 77."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_license_is_an_spdx_string_with_a_setuptools_that_reads_it():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["license"] == "MIT"
    (setuptools,) = [r for r in config["build-system"]["requires"] if r.startswith("setuptools")]
    assert int(re.fullmatch(r"setuptools>=(\d+)", setuptools).group(1)) >= 77
    assert not [c for c in config["project"]["classifiers"] if c.startswith("License ::")]


def test_the_web_tables_templates_and_jinja2_ship_with_the_web_extra():
    """The pages are Jinja2 templates (``webtable/templates``): they ship as package data, as
    the static files do, and the extra that installs the server installs Jinja2."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert {"static/*", "templates/*"} <= set(
        config["tool"]["setuptools"]["package-data"]["webtable"])
    web = config["project"]["optional-dependencies"]["web"]
    assert any(r.startswith("fastapi") for r in web) and any(r.startswith("jinja2") for r in web)
    templates = list((ROOT / "webtable" / "templates").iterdir())
    assert {"page.html", "table.html", "lobby.html", "replay.html", "review.html"} <= {
        p.name for p in templates}
    assert all(p.is_file() for p in templates)   # "templates/*" ships no sub-folder


def test_the_installed_top_level_names_are_the_projects_own(tmp_path):
    """What ``pyproject.toml``'s package list installs: the five packages by their exact names
    (a pattern such as ``tournament*`` also took a ``tournaments`` output folder), and no
    generic ``benchmarks`` beside them (torchrl installs one; ours is ``train.benchmarks``)."""
    from setuptools import find_packages

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = found["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = find_packages(str(ROOT), include=include)
    projects = {"cribenv", "agents", "tournament", "webtable", "train"}
    assert {p.split(".")[0] for p in packages} == projects
    assert "train.benchmarks" in packages
    for name in [*projects, "tournaments", "trainer", "benchmarks"]:   # look-alikes too
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    assert set(find_packages(str(tmp_path), include=include)) == projects
