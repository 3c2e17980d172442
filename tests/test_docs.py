"""The documentation site builds with warnings as errors (``mkdocs build --strict``) and holds
what it promises: the rules page is RULES.md, the env card and observation table are there, the
API pages are generated from the docstrings, the navigation shows the four kinds of page, the
generated settings page says what ``cribenv train --help`` says, every ``cribenv`` command of
the pages parses, no page is long without a reason and the results page indexes every run.

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


# -- the four kinds of page, the generated settings reference, the commands of the pages --

def test_the_navigation_shows_the_four_kinds():
    """Tutorials, how-to guides, reference and explanation (Diataxis), each a section of the
    site's navigation; the generated settings page is in the reference."""
    yaml = pytest.importorskip("yaml")
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    sections = {title: pages for entry in nav for title, pages in entry.items()}
    for kind in ("Tutorials", "How-to guides", "Reference", "Explanation"):
        assert isinstance(sections.get(kind), list) and len(sections[kind]) >= 3, kind
    reference = [page for entry in sections["Reference"] for page in entry.values()]
    assert "settings.md" in reference


# A page longer than this says why here; the rest are split by kind or by task.
LONG_PAGES: dict[str, str] = {}


def test_no_page_is_long_without_a_reason():
    long = {page.name: len(page.read_text(encoding="utf-8").splitlines())
            for page in (ROOT / "docs").glob("*.md")}
    long = {name: n for name, n in long.items() if n > 210 and name not in LONG_PAGES}
    assert not long, f"split these pages (or say why in LONG_PAGES): {long}"


def _cell_count(row: str) -> int:
    """The cells of a Markdown table row: pipes outside code spans, not escaped."""
    return re.sub(r"`[^`]*`", "", row).replace("\\|", "").count("|") - 1


def test_every_table_row_has_its_headers_cells():
    """A ladder rating once went in as ``| |`` -> ``|| 1438 |``: one cell too many shifted the
    row's last column under the wrong heading, and the site still built. Every row of every
    table in the docs, the README and the results logs has as many cells as its header."""
    files = [*(ROOT / "docs").glob("*.md"), ROOT / "README.md",
             *(ROOT / "results").rglob("README.md")]
    assert _cell_count("| a `x | y` | b \\| c |") == 2
    bad = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines[:-1]):
            if (line.startswith("|") and re.fullmatch(r"\|[-:| ]+\|", lines[i + 1])
                    and (i == 0 or not lines[i - 1].startswith("|"))):
                width = _cell_count(line)
                for j in range(i + 2, len(lines)):
                    if not lines[j].startswith("|"):
                        break
                    if _cell_count(lines[j]) != width:
                        bad.append(f"{path.relative_to(ROOT)}:{j + 1}")
    assert not bad, bad


def _table_rows(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the first table under ``heading``, each as its cells (unescaped)."""
    section = markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [[re.sub(r"\\(.)", r"\1", c).strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
            for row in rows]


def _shown_as_the_flag_says(value) -> str:
    """A default as ``cribenv train --help`` prints it."""
    if isinstance(value, list):
        return " ".join(map(str, value))
    return "''" if value == "" else str(value)


def test_the_settings_page_says_what_train_help_says():
    """Every setting of every backend is on the generated page with the default, help and
    choices of its ``cribenv train --backend X --help`` flag, and nothing else is; the
    command's own flags are named on it too."""
    import argparse
    import json

    from train.command import BACKENDS, add_settings, configure

    page = load("settings_page").markdown()
    shared = {row[0].strip("`"): row for row in _table_rows(page, "Settings every backend has")}
    for column, backend in enumerate(BACKENDS, start=1):
        own = {row[0].strip("`"): row for row in _table_rows(page, f"The {backend} backend's own")}
        assert not set(own) & set(shared)
        parser = argparse.ArgumentParser(prog="cribenv train")
        configure(parser)
        add_settings(parser, backend)
        flags = [a for a in parser._actions if a.help != argparse.SUPPRESS and a.dest != "help"]
        settings = {}
        for action in flags:
            match = re.fullmatch(r"(.*) \(default (.*)\)", action.help or "", re.S)
            if match and action.dest != "backend":
                settings[action.dest] = (match.group(1), match.group(2), action.choices)
            else:   # the command's own flags: --run-dir, --config, --backend, --resume, ...
                assert f"`{action.option_strings[0]}" in page, action.option_strings
        assert set(settings) == set(shared) | set(own), backend
        for name, (help_text, default, choices) in settings.items():
            if name in shared:
                row = shared[name]
                value, allowed, what = row[column], row[-2], row[-1]
                said = {line.split(": ", 1)[0].strip("*"): line.split(": ", 1)[1]
                        for line in what.split("<br>")[1:]}
                ok = {line.split(": ", 1)[0].strip("*"): line.split(": ", 1)[1]
                      for line in allowed.split("<br>")[1:]}
                what, allowed = said.get(backend, what.split("<br>")[0]), \
                    ok.get(backend, allowed.split("<br>")[0])
            else:
                _, value, allowed, what = own[name]
            assert what == help_text, (backend, name)
            assert _shown_as_the_flag_says(json.loads(value.strip("`"))) == default, \
                (backend, name)
            for choice in choices or ():
                assert repr(choice) in allowed, (backend, name, choice)


def test_the_settings_page_is_built(site):
    site, _ = site
    text = " ".join(page(site, "settings").split())
    assert "Settings every backend has" in text and "`" not in text
    assert "num_env_runners" in text and "n_envs is n_games" in text


def test_the_settings_file_is_what_the_settings_classes_write():
    """``docs/settings.md`` is a file (its links, and the links to it, work on a checkout and
    on a forge), written by ``python docs/settings_page.py`` from the settings classes: it is
    exactly what that writes now."""
    written = load("settings_page").markdown()
    kept = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert kept == written, ("docs/settings.md is not what the settings classes say: "
                             "run .venv/bin/python docs/settings_page.py")


def _links(text: str) -> list[str]:
    """The targets of a Markdown text's inline links and images and its link definitions,
    outside code blocks."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return (re.findall(r"\]\(\s*([^)\s]+)", text)
            + re.findall(r"^\[[^\]]+\]:\s*(\S+)", text, re.M))


def test_every_link_of_the_pages_works_on_a_checkout():
    """55 links of the pages pointed at ``results/...`` or ``settings.md``, which were there
    only in the built site: on a checkout or a forge they led nowhere. Every relative link of
    every page (and the README's) names a file or folder of the tree; the site gets the
    results' ones rewritten by ``docs/hooks.py`` (the build with warnings as errors, above,
    checks they work there)."""
    pages = [*(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    broken = []
    for path in pages:
        for target in _links(path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:|#", target):   # an address, or a place on the same page
                continue
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert broken == []
    links = [t for p in pages if p.parent.name == "docs" for t in _links(p.read_text())]
    assert sum(t.startswith("../results/") for t in links) >= 40
    assert "settings.md" in links


def test_the_hook_makes_the_trees_results_links_the_sites():
    require_docs()
    assert doctest.testmod(load("hooks")).failed == 0


def test_settings_page_doctests():
    assert doctest.testmod(load("settings_page")).failed == 0


def _commands(text: str):
    """Each ``$ cribenv ...`` line of the console blocks of ``text`` (continued lines joined)."""
    for block in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            match = re.match(r"^\S*\$\s+cribenv (.*)", line)
            if match:
                yield match.group(1)


def test_every_cribenv_command_of_the_pages_parses():
    """The tutorial's and the how-to pages' commands (every page's, and the README's) are ones
    ``cribenv`` accepts: each is parsed by its command's own parser, without running it."""
    import argparse
    import shlex

    from cribenv.cli import COMMANDS, load_command

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    seen = []
    for path in pages:
        for command in _commands(path.read_text(encoding="utf-8")):
            args = shlex.split(command, comments=True)
            assert args[0] in COMMANDS, f"{path.name}: cribenv {command}"
            parser = argparse.ArgumentParser(prog=f"cribenv {args[0]}", exit_on_error=False)
            load_command(COMMANDS[args[0]][0]).configure(parser)
            try:
                parser.parse_args(args[1:])
            except (argparse.ArgumentError, SystemExit) as exc:
                pytest.fail(f"{path.name}: cribenv {command}: {exc}")
            seen.append(path.name)
    assert seen.count("tutorial.md") == 3


def test_the_results_page_links_every_results_readme(site):
    """The results page is an index of the runs' READMEs, each a page of the site."""
    site, _ = site
    index = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    for readme in sorted((ROOT / "results").glob("*/README.md")):
        name = readme.parent.name
        assert f"results/{name}/README.md" in index, name
        assert (site / "results" / name / "index.html").is_file(), name


def test_every_shipped_network_is_named_where_agents_are_listed():
    """`ppo:scratch` and `ppo:scratch-exit` shipped, but `cribenv play --help`,
    `tournament --help` and the bots page named only `ppo:shipped`: the help of every command
    that lists the agent specs is made from the one list of shipped networks
    (:func:`agents.ppo.shipped_specs`), and the bots page names each."""
    import argparse

    from agents.ppo import TRAINED_POLICIES, shipped_specs
    from cribenv.cli import COMMANDS, load_command

    assert shipped_specs() == [f"ppo:{name}" for name in TRAINED_POLICIES]
    for name in ("play", "tournament", "ladder"):
        parser = argparse.ArgumentParser(prog=f"cribenv {name}")
        load_command(COMMANDS[name][0]).configure(parser)
        helps = " ".join(action.help or "" for action in parser._actions)   # unwrapped
        assert ", ".join(shipped_specs()) in helps, name
    bots = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    assert [spec for spec in shipped_specs() if f"`{spec}`" not in bots] == []


def test_the_command_line_page_lists_every_command():
    """`ladder` was missing from the command table: each command of `cribenv --help` (the one
    table, :data:`cribenv.cli.COMMANDS`) has a row, and every row is one of them."""
    from cribenv.cli import COMMANDS

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text.split("| command | what it does |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `cribenv ([\w-]+)", table, re.M)
    assert set(rows) == set(COMMANDS), set(COMMANDS) ^ set(rows)


def test_from_scratch_opens_with_the_two_strongest():
    """The page opened with dense prose, and gave four figures for `ppo:scratch-exit` against
    expert: it opens with a box (a quote) naming the strongest network alone and the strongest
    agent with search, one figure and one command each; each figure is a measured one of
    ``results/from-rules/``, and each command parses."""
    import argparse
    import shlex

    from cribenv.cli import COMMANDS, load_command

    text = (ROOT / "docs" / "from-scratch.md").read_text(encoding="utf-8")
    lines = text.split("\n\n", 1)[1].splitlines()
    box = " ".join(line[1:].strip() for line in lines[:lines.index("")] if line.startswith(">"))
    parts = re.split(r"\*\*The strongest ", box)[1:]
    assert [p.split("**")[0] for p in parts] == ["network alone", "agent with search"]
    measured = " ".join((ROOT / "results" / "from-rules" / "README.md").read_text().split())
    for part in parts:
        figures = re.findall(r"\*\*(\d+\.\d+)% \[(\d+\.\d+), (\d+\.\d+)\]\*\*", part)
        assert len(figures) == 1, part
        assert "{} [{}, {}]".format(*figures[0]) in measured.replace("%", ""), figures
        commands = re.findall(r"`cribenv ([^`]+)`", part)
        assert len(commands) == 1, part
        args = shlex.split(commands[0])
        parser = argparse.ArgumentParser(prog=f"cribenv {args[0]}", exit_on_error=False)
        load_command(COMMANDS[args[0]][0]).configure(parser)
        parser.parse_args(args[1:])


def test_the_changelog_keeps_a_changelog():
    """``CHANGELOG.md`` (keep-a-changelog): the unreleased changes, then 0.1.0; the old names
    kept for compatibility are under Deprecated with the release that removes them."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions[:2] == ["Unreleased", "0.1.0"]
    unreleased = text.split("## [0.1.0]")[0]
    deprecated = unreleased.split("### Deprecated", 1)[1].split("\n### ", 1)[0]
    assert "0.3.0" in deprecated
    for old in ("agents.tournament", "agents.ladder", "agents.web", "n_envs", "parse_spec"):
        assert old in deprecated, old
    assert "../CHANGELOG.md" in (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
