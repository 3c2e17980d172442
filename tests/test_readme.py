"""Every Python snippet of the README and of the documentation pages runs as printed (the SB3
ones with fewer steps)."""

from __future__ import annotations

import ast
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
    threads = _torch_threads() if "torch" in code else None
    try:
        exec(compile(code, str(page), "exec"), {"__name__": "readme"})
    finally:   # a snippet's torch.set_num_threads(1) stays in its page, not in later tests
        if threads is not None:
            import torch

            torch.set_num_threads(threads)


def _torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.get_num_threads()


def readme_snippet(word: str) -> str:
    return next(code for page, code in BLOCKS if page.name == "README.md" and word in code)


def test_the_first_env_snippet_prints_each_agents_result(capsys):
    """It printed ``env.rewards`` after the game: ``{}``, the agents being gone by then."""
    exec(compile(readme_snippet("agent_iter"), "README.md", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.strip()
    returns = ast.literal_eval(printed)   # the dict it printed
    assert sorted(returns) == ["player_0", "player_1"]
    assert sorted(returns.values()) == [-1.0, 1.0], printed


def test_the_sb3_snippet_says_its_time_shows_progress_and_sets_threads():
    """It ran 11 minutes silent under torch's default threads on a busy 2-core machine."""
    code = readme_snippet("MaskablePPO")
    assert "torch.set_num_threads(1)" in code and "verbose=1" in code
    assert re.search(r"model\.learn\(20_000\).*about \d+ s", code)


def test_every_file_a_readme_command_runs_exists():
    """The ladder's line ran `python my_bot.py`, a file the tree does not have."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if line.startswith("$ ")]
    scripts = [m for line in commands for m in re.findall(r"python3? ([\w./-]+\.py)", line)]
    assert scripts
    assert [s for s in scripts if not (ROOT / s).is_file()] == []


def test_the_demos_duration_is_said_alike_everywhere():
    """The tour said "about 3 minutes" in four places after it had come to take under one;
    the README, the install and command-line pages and `cribenv demo` itself now say one
    measured duration."""
    from train.demo_command import DURATION

    for name in ("README.md", "docs/install.md", "docs/cli.md"):
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        assert DURATION in text, name
        assert "about 3 minutes" not in text, name


def test_demo_help_says_each_duration_once():
    """`cribenv demo --help` said the tour's self-play took 30-50 s, then that its default
    steps took "about 2 minutes": every duration it gives is the tour's, its training's or the
    first compile's, each from one constant."""
    import argparse

    from train import demo_command

    parser = argparse.ArgumentParser(prog="cribenv demo")
    demo_command.configure(parser)
    text = " ".join(parser.format_help().split())
    said = re.findall(r"about (?:a|an|\d+) (?:minute|hour)s?|\d+(?:-\d+)? ?(?:s|min)\b", text)
    assert said and set(said) <= {"about a minute", demo_command.TRAINING, "15-60 s"}, said
    assert demo_command.DURATION in text and text.count(demo_command.TRAINING) == 2


def test_the_readme_commands_write_where_git_ignores():
    """The tournament's line wrote into results/ (the measured runs, kept in git): a newcomer's
    `git status` filled with untracked files."""
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a checkout")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    folders = [m for line in text.splitlines() if line.startswith("$ ")
               for m in re.findall(r"--(?:out|run-dir) (\S+)", line)]
    assert len(folders) >= 3
    for folder in folders:
        ignored = subprocess.run(["git", "check-ignore", "-q", f"{folder}/x"], cwd=ROOT)
        assert ignored.returncode == 0, f"{folder} is not ignored by git"


def test_the_readme_says_how_bare_cribenv_runs():
    """After the set-up command every README command said bare `cribenv`, which is not on
    PATH until the environment is activated: the README says so once, before the first."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = min(text.index(line) for line in text.splitlines() if line.startswith("$ cribenv"))
    said = " ".join(text[:first].split())
    assert "`. .venv/bin/activate`" in said and "`.venv/bin/cribenv`" in said
