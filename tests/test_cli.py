"""The cribenv command line: every command's help, outputs and errors."""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys

import pytest

from cribenv.cli import COMMANDS, main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cribenv.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_top_level_help_lists_every_command():
    out = run_cli("--help")
    assert out.returncode == 0
    for name in COMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert f"cribenv {name}" in capsys.readouterr().out


# What no command's --help may import: torch, numba, the frameworks and the plotting and web
# stacks (each costs 0.1-2 s; numpy, ~0.1 s, is the only heavy module a help may load).
HEAVY = ("torch", "numba", "ray", "matplotlib", "scipy", "fastapi", "uvicorn", "starlette",
         "gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "safetensors", "tqdm",
         "choix", "PIL", "tensorboard")


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_help_is_quick_and_imports_nothing_heavy(name):
    """``cribenv NAME --help`` in a fresh interpreter loads none of HEAVY and takes well under
    a second of CPU time (the goal is 0.5 s; the bound is generous for a slow CI machine, and
    CPU time, unlike the wall clock, does not grow when other tests load the cores)."""
    code = f"""
import contextlib, io, sys, time
start = time.process_time()
from cribenv.cli import main
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main({[name, "--help"] if name else ["--help"]!r})
except SystemExit:
    pass
print(time.process_time() - start)
print(" ".join(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    seconds, heavy = (out.stdout.splitlines() + [""])[:2]
    assert heavy == "", f"cribenv {name} --help imports {heavy}"
    assert float(seconds) < 2.0


def test_score_prints_total_and_breakdown(capsys):
    assert main(["score", "5H", "5S", "5C", "JD", "--starter", "5D"]) == 0
    out = capsys.readouterr().out
    assert "total 29" in out and out.count("fifteen 2") == 8 and "nobs 1: JD" in out
    assert main(["score", "TS", "8D", "KC", "8C", "-s", "5H", "--crib"]) == 0
    assert "total 6" in capsys.readouterr().out


@pytest.mark.parametrize("args,message", [
    (["score", "5H", "5S", "5C", "1X", "--starter", "5D"], "'1X' is not a card"),
    (["score", "5H", "5S", "5C", "5H", "--starter", "5D"], "duplicate card 5H"),
    (["score", "5H", "5S", "5C", "--starter", "5D"], "expected 4 cards, got 3"),
    (["score", "5H", "5S", "5C", "JD", "--starter", "5H"], "starter 5H is also in the hand"),
    (["discard", "5H", "5S", "JD", "6C", "4H", "--dealer"], "expected 6 cards, got 5"),
])
def test_bad_input_is_a_clear_error(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    assert message in out.stderr


def test_discard_ranks_all_fifteen(capsys):
    assert main(["discard", "5H", "5S", "JD", "6C", "4H", "KD", "--dealer"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if re.match(r"\s+\d+\s", ln)]
    assert len(lines) == 15
    evs = [float(ln.split()[-2]) for ln in lines]
    assert evs == sorted(evs, reverse=True)
    assert run_cli("discard", "5H", "5S", "JD", "6C", "4H", "KD").returncode == 2  # no role


def test_play_a_whole_game_from_scripted_input():
    from agents import terminal as play

    out = io.StringIO()
    typed = []

    def answer(prompt: str) -> str:
        cards = re.findall(r"\b(?:[A2-9TJQK][CDHS])\b", prompt.split("]")[-1])
        typed.append(prompt)
        if len(typed) == 1:
            return "hint"
        if len(typed) == 2:
            return "ZZ"           # a bad card is refused, the game goes on
        return cards[len(typed) % len(cards)]

    args = argparse.Namespace(bot="greedy", players=2, target=61, seat=0, seed=3)
    assert play.run(args, input_fn=answer, out=out) == 0
    text = out.getvalue()
    assert "'ZZ' is not a card" in text
    assert "Game over" in text


def test_demo_smoke(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    code = main(["demo", "--out", str(tmp_path), "--train-steps", "512", "--rollout-games", "4",
                 "--scratch-steps", "2048", "--games", "4", "--workers", "1", "--threads", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "total 29" in out and "Duplicate tournament" in out
    assert (tmp_path / "tournament.png").is_file()
    assert (tmp_path / "ppo" / "policy.safetensors").is_file()
    assert (tmp_path / "rollouts.safetensors").is_file()   # the card network PPO started from
    assert (tmp_path / "selfplay" / "policy.safetensors").is_file()   # from scratch
    assert "of games against greedy" in out


@pytest.mark.parametrize("reply", ["q", None])
def test_play_quits_on_q_and_end_of_input_is_an_error(reply, capsys):
    """``q`` leaves with status 0; the end of input before the game ends (``cribenv play <
    /dev/null``) is status 1 with a message on stderr, not a silent success."""
    from agents import terminal as play

    def answer(prompt: str) -> str:
        assert "Discard to" in prompt
        if reply is None:
            raise EOFError
        return reply

    out = io.StringIO()
    args = argparse.Namespace(bot="random", players=3, target=61, seat=1, seed=5)
    status = play.run(args, input_fn=answer, out=out)
    assert out.getvalue().startswith("Cribbage to 61: you are seat 1 against random.\n")
    if reply == "q":
        assert status == 0 and out.getvalue().endswith("bye\n")
    else:
        assert status == 1 and "end of input before the game ended" in capsys.readouterr().err


def test_play_asks_the_human_for_forced_cards_too():
    from agents import terminal as play

    held_at_prompt = []

    def first_fitting(prompt: str) -> str:
        held = re.findall(r"\b(?:[A2-9TJQK][CDHS])\b", prompt.split("]")[-1])
        held_at_prompt.append(len(held))
        count = int(re.search(r"count (\d+)", prompt).group(1)) if "count" in prompt else 0
        return next(c for c in held if min(10, "A23456789TJQK".index(c[0]) + 1) + count <= 31)

    out = io.StringIO()
    args = argparse.Namespace(bot="greedy", players=2, target=61, seat=0, seed=1)
    assert play.run(args, input_fn=first_fitting, out=out) == 0
    assert "Game over" in out.getvalue()
    assert 1 in held_at_prompt      # asked with a single card in hand


def test_a_missing_extra_names_the_extra_to_install(monkeypatch, capsys):
    import types

    from cribenv import cli

    fake = types.ModuleType("fake_command")
    fake.configure = lambda parser: None

    def run(args):
        raise ModuleNotFoundError("No module named 'choix'", name="choix")

    fake.run = run
    monkeypatch.setitem(sys.modules, "fake_command", fake)
    monkeypatch.setitem(cli.COMMANDS, "fake", ("fake_command", "a command needing choix"))
    assert main(["fake"]) == 2
    assert "needs choix, from the 'tournament' extra: pip install -e '.[tournament]'" in \
        capsys.readouterr().err

    def broken(args):
        raise ModuleNotFoundError("No module named 'nonexistent'", name="nonexistent")

    fake.run = broken                    # not an optional module: a bug, the traceback stays
    with pytest.raises(ModuleNotFoundError):
        main(["fake"])


def test_a_reader_that_leaves_gets_no_traceback(tmp_path):
    """``cribenv discard ... | head -1``: the pipe closes before the output is written; the
    command ends quietly (status 141, as a shell reports SIGPIPE), with no traceback."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "cribenv.cli", "discard", "5H", "5S", "JD",
                             "6C", "4H", "KD", "--dealer"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader leaves before reading anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
