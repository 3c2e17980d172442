"""The ladder's entries, checked before any game: a program that cannot answer the greeting is
refused rather than forfeiting every game, and a label names one entry of a leaderboard (another
line of it is replaced only with ``--replace``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cribenv.cli import main
from tournament.ladder import update_leaderboard

ROOT = Path(__file__).resolve().parents[1]


def a_line(agent: str, spec: str = "greedy", deals: int = 2) -> dict:
    """A small ladder line of the leaderboard's shape."""
    return {"ladder": "cribenv-ladder-v1", "deals": deals, "agent": agent, "spec": spec,
            "rating": 1500, "rating_low": 1400, "rating_high": 1600,
            "anchors": [{"anchor": "expert", "win": 50.0}], "discard": None, "endgames": None,
            "ms_per_decision": 0.5}


@pytest.mark.parametrize("command, words", [
    (f"{sys.executable} {ROOT / 'examples' / 'nope_bot.py'}", "ended (exit status 2)"),
    ("cribenv-no-such-program", "could not be started"),
    (f"{sys.executable} -c pass", "ended (exit status 0) instead of having to answer the greeting"),
])
def test_a_program_that_cannot_say_hello_is_refused_before_any_game(tmp_path, capsys,
                                                                     command, words):
    assert not (ROOT / "examples" / "nope_bot.py").exists()
    board = tmp_path / "board.jsonl"
    argv = ["ladder", f"mine=cmd:{command}", "--deals", "1", "--folder",
            str(tmp_path / "games"), "--leaderboard", str(board), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "agent 'mine' cannot play, no game was played" in err and words in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "games").exists() and not board.exists()


def test_a_label_on_the_leaderboard_is_refused_unless_replaced(tmp_path, capsys):
    board = tmp_path / "board.jsonl"
    board.write_text(json.dumps(a_line("mine", "greedy")) + "\n"
                     + json.dumps(a_line("other")) + "\n")
    argv = ["ladder", "mine=random", "--deals", "1", "--quality-deals", "1", "--folder",
            str(tmp_path / "games"), "--leaderboard", str(board), "--no-progress"]
    before = board.read_text()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"the label 'mine' is on the leaderboard {board} already (spec 'greedy', 2 deals)" \
        in err and "--replace" in err
    assert board.read_text() == before and not (tmp_path / "games").exists()

    assert main(argv + ["--replace"]) == 0
    assert f"leaderboard {board}: replaced" in capsys.readouterr().out
    lines = [json.loads(x) for x in board.read_text().splitlines()]
    assert [(x["agent"], x["spec"], x["deals"]) for x in lines] == [
        ("mine", "random", 1), ("other", "greedy", 2)]
    assert main(argv) == 0                                  # its own line: run again
    assert f"leaderboard {board}: same" in capsys.readouterr().out
    assert len(board.read_text().splitlines()) == 2


def test_one_label_twice_in_a_command_is_refused(tmp_path, capsys):
    argv = ["ladder", "a=greedy", "a=random", "--deals", "1", "--folder",
            str(tmp_path / "games"), "--leaderboard", str(tmp_path / "b.jsonl")]
    assert main(argv) == 2
    assert "the label 'a' is given twice" in capsys.readouterr().err
    assert not (tmp_path / "games").exists()


def test_update_leaderboard_keeps_one_line_a_label(tmp_path):
    board = tmp_path / "board.jsonl"
    assert update_leaderboard(board, a_line("mine", "greedy")) == "added"
    with pytest.raises(ValueError, match="the label 'mine' is on the leaderboard"):
        update_leaderboard(board, a_line("mine", "expert"))
    with pytest.raises(ValueError, match="the label 'mine' is on the leaderboard"):
        update_leaderboard(board, a_line("mine", "greedy", deals=3))
    assert update_leaderboard(board, {**a_line("mine", "greedy"), "rating": 1490}) == "replaced"
    assert update_leaderboard(board, a_line("mine", "expert"), replace=True) == "replaced"
    assert update_leaderboard(board, a_line("mine", "expert")) == "same"
    assert [json.loads(x)["spec"] for x in board.read_text().splitlines()] == ["expert"]
    other = {**a_line("mine", "greedy"), "ladder": "another-set"}   # another ladder's label
    assert update_leaderboard(board, other) == "added"
