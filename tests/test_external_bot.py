"""``cmd:COMMAND`` bots (the Cribbage Bot Protocol): the reference client plays whole games, and
every way a bot can break (hang, crash, garbage, an illegal card, megabytes of output, a wrong
version, no greeting, an answer nobody asked for, a slow game) loses that game with its reason,
while the tournament goes on, resumes, and the next game starts a fresh process."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from agents import make_agent
from agents.arena import play_game
from agents.external import _IDLE, ExternalBot
from agents.protocol import ProtocolError, read_card, read_hello
from cribenv.cli import main
from cribenv.game import Rules
from tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
CLIENT = f"{sys.executable} {ROOT / 'examples' / 'cbp_bot.py'}"
BROKEN = ROOT / "tests" / "data" / "bots" / "broken_bot.py"


def broken(mode: str, **options) -> ExternalBot:
    return ExternalBot([sys.executable, str(BROKEN), mode], seed=0, **options)


def test_the_reference_client_plays_whole_games_the_same_every_time():
    results = []
    for _ in range(2):
        bot = make_agent(f"cmd:{CLIENT}", seed=1)
        games = [play_game([bot, make_agent("greedy")], seed=s, first_dealer=s % 2)
                 for s in range(6)]
        bot.close()
        results.append([g.to_dict() for g in games])
    assert results[0] == results[1]
    assert all(g["forfeit"] is None and max(g["scores"]) >= 121 for g in results[0])
    assert bot.bot_name == "cbp-greedy"


@pytest.mark.parametrize("players", [3, 4])
def test_the_reference_client_plays_larger_tables(players):
    bot = make_agent(f"cmd:{CLIENT}", seed=1)
    others = [make_agent("greedy") for _ in range(players - 1)]
    result = play_game([bot, *others], Rules(num_players=players), seed=4)
    bot.close()
    assert result.forfeit is None and result.winner is not None


@pytest.mark.parametrize("mode, kind, words", [
    ("hang", "timeout", "did not answer a decision within 0.5 s"),
    ("crash", "crash", "ended (exit status 3)"),
    ("garbage", "malformed", 'not a JSON object: "I think I\'ll play the five"'),
    ("illegal", "illegal", "illegal card"),
    ("flood", "output", "wrote a line over 65536 bytes"),
    ("extra", "output", "wrote a line nobody asked for"),
    ("version", "version", "speaks version 2"),
    ("silent", "timeout", "did not answer the greeting within 0.5 s"),
])
def test_a_broken_bot_loses_the_game_with_its_reason(mode, kind, words):
    bot = broken(mode, move_time=0.5, start_time=0.5)
    start = time.perf_counter()
    result = play_game([make_agent("random", seed=3), bot], seed=11)
    assert time.perf_counter() - start < 10
    forfeit = result.forfeit
    assert forfeit is not None and forfeit["seat"] == 1 and forfeit["kind"] == kind
    assert words in forfeit["detail"] and f"broken_bot.py {mode}" in forfeit["agent"]
    assert result.winner == 0 and result.game_points == 1 and max(result.scores) < 121
    assert sum(result.points(s) for s in (0, 1)) == sum(result.scores)   # as they stood
    assert bot._proc is None                                               # killed


def test_the_game_clock_runs_out():
    bot = broken("slow", game_time=0.5)
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert result.forfeit["kind"] == "timeout"
    assert "ran out of its 0.5 s a game" in result.forfeit["detail"]


def test_stderr_is_the_bots_log_and_costs_nothing():
    bot = broken("stderr")
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert result.forfeit is None and max(result.scores) >= 121
    assert len(bot._proc.stderr_tail() if bot._proc else "") <= 2000
    bot.close()


def test_the_next_game_starts_a_fresh_process_and_a_healthy_one_is_kept():
    bot = broken("crash")
    first = play_game([bot, make_agent("random", seed=3)], seed=11)
    second = play_game([bot, make_agent("random", seed=3)], seed=12)
    # the second game got to its third decision again: a new process, greeted anew
    assert first.forfeit["kind"] == second.forfeit["kind"] == "crash"

    ok = broken("ok")
    play_game([ok, make_agent("random")], seed=1)
    assert ok._proc is None                              # handed back between games
    (kept,) = _IDLE[ok._key()]
    again = broken("ok")                                 # the next agent of the command
    play_game([again, make_agent("random")], seed=2)
    assert _IDLE[ok._key()] == [kept] and kept.alive()   # took it, played, gave it back
    again.close()
    assert ok._key() not in _IDLE and not kept.alive()


def test_a_program_that_does_not_exist_forfeits_at_its_start():
    bot = ExternalBot(["/no/such/program"])
    result = play_game([bot, make_agent("random")], seed=1)
    assert result.forfeit["kind"] == "start" and "could not be started" in \
        result.forfeit["detail"]


def test_bad_specs_and_options_are_refused():
    with pytest.raises(ValueError, match="needs the command"):
        make_agent("cmd:")
    with pytest.raises(ValueError, match="move_time must be a positive number"):
        make_agent(f"cmd:{CLIENT}", move_time=0)
    with pytest.raises(ValueError, match="game_time must be a positive number"):
        make_agent(f"cmd:{CLIENT}", game_time=float("nan"))


def test_the_protocol_readers_name_what_is_wrong():
    with pytest.raises(ProtocolError, match="expected the hello answer"):
        read_hello('{"type": "play"}')
    with pytest.raises(ProtocolError, match="name must be a string of 1 to 100 characters"):
        read_hello('{"type": "hello", "version": 1, "name": ""}')
    with pytest.raises(ProtocolError, match=r'expected \{"type": "play"'):
        read_card('{"card": "5H"}', [17])
    with pytest.raises(ProtocolError, match="'ZZ' is not a card"):
        read_card('{"type": "play", "card": "ZZ"}', [17])
    assert read_card('{"type": "play", "card": "5d"}', [17]) == 17
    assert read_card('{"type": "play", "card": 17}', [17]) == 17


def test_the_bot_hears_the_game_it_plays(tmp_path):
    """The messages a bot receives: hello, new_game, events (another seat's discards hidden),
    decisions, game_over; recorded by a bot that writes its input to a file."""
    log = tmp_path / "in.jsonl"
    recorder = tmp_path / "recorder.py"
    recorder.write_text(
        "import json, sys\n"
        f"log = open({str(log)!r}, 'w')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'rec', 'version': 1}), flush=True)\n"
        "    elif msg['type'] == 'decide':\n"
        "        print(json.dumps({'type': 'play', 'card': msg['legal'][0]}), flush=True)\n")
    bot = ExternalBot([sys.executable, str(recorder)], seed=5)
    result = play_game([bot, make_agent("greedy")], seed=2, first_dealer=0)
    bot.close()
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = [m["type"] for m in messages]
    assert kinds[:2] == ["hello", "new_game"] and kinds[-2:] == ["game_over", "quit"]
    assert messages[1]["seat"] == 0 and messages[1]["seed"] == 5 and messages[1]["target"] == 121
    assert messages[-2]["scores"] == result.scores and messages[-2]["winner"] == result.winner
    events = [e for m in messages if m["type"] == "events" for e in m["events"]]
    theirs = [e for e in events if e["type"] == "Discarded" and e["seat"] == 1]
    mine = [e for e in events if e["type"] == "Discarded" and e["seat"] == 0]
    assert theirs and all(e["card"] is None for e in theirs)
    assert mine and all(e["card"] is not None for e in mine)
    decisions = [m for m in messages if m["type"] == "decide"]
    assert decisions and all(m["seat"] == 0 and m["legal"] for m in decisions)
    assert all(0 < m["time_left"] <= 600 for m in decisions)


def test_a_tournament_records_forfeits_goes_on_and_resumes(tmp_path):
    db = tmp_path / "t.sqlite"
    crash = f"crash=cmd:{sys.executable} {BROKEN} crash"
    report = run_tournament([crash, "random"], 4, db_path=db, progress=False, bootstrap=0)
    assert report.games == 4 and report.forfeits == {"crash": {"crash": 4}}
    assert report.pairs[0].win_rate_a.value == 0.0
    assert "Games forfeited (counted as losses): crash 4 (crash 4)" in report.format()
    again = run_tournament([crash, "random"], 4, db_path=db, progress=False, bootstrap=0)
    assert again.games_this_run == 0 and again.forfeits == report.forfeits


def test_the_cli_tournament_runs_a_program(tmp_path, capsys):
    status = main(["tournament", "--agents", f"bot=cmd:{CLIENT}", "random", "--games", "4",
                   "--db", str(tmp_path / "t.sqlite"), "--no-progress", "--bootstrap", "0",
                   "--workers", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "bot = cmd:" in out and "forfeited" not in out


def test_an_env_opponent_can_be_a_program():
    import numpy as np

    from cribenv.wrappers import SingleAgentCribbageEnv

    env = SingleAgentCribbageEnv(opponent=f"cmd:{CLIENT}", seed=0)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        obs, reward, terminated, truncated, info = env.step(
            int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done, steps = terminated or truncated, steps + 1
    assert steps > 20 and reward in (-1, 1)
    env.close()


if os.name != "posix":   # pragma: no cover
    pytest.skip("external bots use POSIX pipes", allow_module_level=True)


def test_time_controls_in_the_spec():
    bot = make_agent(f"cmd[move=0.5,game=30]:{sys.executable} {BROKEN} hang")
    assert (bot.move_time, bot.game_time, bot.start_time) == (0.5, 30.0, 10.0)
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert result.forfeit["kind"] == "timeout" and "within 0.5 s" in result.forfeit["detail"]
    for bad, words in [("cmd[move=0]:x", "positive number"), ("cmd[speed=2]:x", "move=S"),
                       ("cmd[move=fast]:x", "positive number")]:
        with pytest.raises(ValueError, match=words):
            make_agent(bad)


def test_cribenv_play_against_a_program():
    """A person plays a protocol bot in the terminal: its cards come over the pipe."""
    import argparse
    import io

    from agents import terminal as play

    asked = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        cards = [w for w in prompt.split("]")[-1].split() if len(w) == 2 and w[-1] in "CDHS"]
        if len(asked) == 1:
            return " ".join(cards[-2:])     # the throw, then the first card of the play
        return cards[0] if len(asked) < 4 and cards else "q"

    out = io.StringIO()
    args = argparse.Namespace(bot=f"cmd:{CLIENT}", players=2, target=121, seat=0, seed=4)
    assert play.run(args, input_fn=answer, out=out) == 0
    assert "cmd:" in out.getvalue() and len(asked) >= 2


# ---------------------------------------------------------------- misbehaviours (issue 35)
def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_bot_that_exits_leaving_a_child_on_its_output_crashes_and_the_child_dies(tmp_path):
    """The child holds the pipe open, so no end of file comes: the bot's exit is noticed by
    itself (a crash at once, not a timeout), and its whole process group is killed."""
    pidfile = tmp_path / "child.pid"
    bot = ExternalBot([sys.executable, str(BROKEN), "orphan", str(pidfile)], move_time=5)
    start = time.perf_counter()
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert time.perf_counter() - start < 4
    assert result.forfeit["kind"] == "crash"
    assert "ended (exit status 3) instead of having to answer a decision" in \
        result.forfeit["detail"]
    assert _gone(int(pidfile.read_text()))


def test_a_child_left_behind_at_quit_is_killed_too(tmp_path):
    pidfile = tmp_path / "child.pid"
    bot = ExternalBot([sys.executable, str(BROKEN), "quit_orphan", str(pidfile)])
    assert play_game([bot, make_agent("random", seed=3)], seed=11).forfeit is None
    bot.close()
    assert _gone(int(pidfile.read_text()))


class _Slow:
    """A bot that lays the first legal card after ``delay`` seconds."""
    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def choose(self, view, legal):
        time.sleep(self.delay)
        return legal[0]


def test_a_bot_that_ends_after_its_answer_forfeits_and_is_not_restarted_mid_game():
    """It used to be replaced by a fresh process, which was never told of the game."""
    bot = broken("answer_exit")
    result = play_game([bot, _Slow(0.3)], seed=11)
    assert result.forfeit["kind"] == "crash"
    assert "ended (exit status 0) in the middle of the game" in result.forfeit["detail"]


@pytest.mark.parametrize("mode, words", [
    ("ack", "'{\"type\": \"ok\"}'"),
    ("stale", "wrote a line nobody asked for"),
])
def test_a_line_written_after_new_game_or_events_is_an_output_forfeit(mode, words):
    """Not read as the answer to the next decision (a malformed or illegal answer before).
    Which message it is found before (the next events or the next decide) depends on when the
    line arrives (before or after an answer), so the words checked name the line, not the
    message."""
    bot = broken(mode)
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    detail = result.forfeit["detail"]
    assert result.forfeit["kind"] == "output" and words in detail
    assert "wrote a line nobody asked for (it came " in detail
    assert "standard error" in result.forfeit["detail"]


def test_a_line_written_after_game_over_forfeits_the_next_game():
    bot = broken("ack_over")
    first = play_game([bot, make_agent("random", seed=3)], seed=11)
    time.sleep(0.2)
    second = play_game([bot, make_agent("random", seed=3)], seed=12)
    bot.close()
    assert first.forfeit is None
    assert second.forfeit["kind"] == "output"
    assert "after its last game: '{\"type\": \"thanks\"}'" in second.forfeit["detail"]


def test_json_nested_too_deep_is_malformed_not_a_crash_of_cribenv():
    result = play_game([broken("nested"), make_agent("random", seed=3)], seed=11)
    assert result.forfeit["kind"] == "malformed"


def test_a_bot_that_closes_its_output_and_lives_on_crashes():
    bot = broken("close_stdout", move_time=5)
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert result.forfeit["kind"] == "crash"
    assert "closed its output instead of having to answer" in result.forfeit["detail"]


def test_the_failure_keeps_the_last_2000_characters_of_stderr():
    result = play_game([broken("tail"), make_agent("random", seed=3)], seed=11)
    tail = result.forfeit["detail"].split("its stderr ends: ", 1)[1]
    assert 2000 <= len(tail) <= 2004 and tail.rstrip("')").endswith("END")


def test_huge_clocks_wait_rather_than_blame_the_bot():
    """cmd[move=1e300]: the wait was an OverflowError, reported as a line too long."""
    bot = broken("slow", move_time=1e300, game_time=1e300)
    result = play_game([bot, make_agent("random", seed=3)], seed=11)
    assert result.forfeit is None
    bot.close()


def test_game_over_names_the_side_that_wins_by_a_forfeit(tmp_path):
    log = tmp_path / "in.jsonl"
    recorder = tmp_path / "recorder.py"
    recorder.write_text(
        "import json, sys\n"
        f"log = open({str(log)!r}, 'w')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    msg = json.loads(line)\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'rec', 'version': 1}), flush=True)\n"
        "    elif msg['type'] == 'decide':\n"
        "        print(json.dumps({'type': 'play', 'card': msg['legal'][0]}), flush=True)\n")
    bot = ExternalBot([sys.executable, str(recorder)])
    result = play_game([broken("crash"), bot], seed=11)
    bot.close()
    over = [json.loads(x) for x in log.read_text().splitlines()][-2]
    assert over["type"] == "game_over" and result.winner == 1
    assert over["winner"] == 1 and over["forfeit"]["seat"] == 0


def test_the_greeting_rules():
    ok = '{"type": "hello", "name": " my bot ", "version": 1, "author": "me"}\r'
    assert read_hello(ok) == "my bot"
    for bad, words in [('{"type": "hello", "name": "b", "version": true}', "the integer 1"),
                       ('{"type": "hello", "name": "b", "version": 1.0}', "the integer 1"),
                       ('{"type": "hello", "name": 7, "version": 1}', "name must be a string"),
                       ('{"type": "hello", "name": "a\\u001b[31m", "version": 1}',
                        "no control characters"),
                       ('{"type": "hello", "name": "' + "x" * 101 + '", "version": 1}',
                        "1 to 100 characters"),
                       ('\ufeff{"type": "hello", "name": "b", "version": 1}', "byte-order mark")]:
        with pytest.raises(ProtocolError, match=words):
            read_hello(bad)


def _play(card: str) -> str:
    return '{"type": "play", "card": ' + card + "}"


def test_card_spellings():
    legal = list(range(52))
    five_hearts = read_card('{"type": "play", "card": "5H"}', legal)
    for spelled in ('"5h"', '" 5H "', '"5♥"', str(five_hearts)):
        assert read_card(_play(spelled), legal) == five_hearts
    assert read_card('{"type": "play", "card": "10D"}', legal) == \
        read_card('{"type": "play", "card": "TD"}', legal) == 4 * 9 + 1
    for bad in ("true", "17.0", '["5H"]', "null", "52"):
        with pytest.raises(ProtocolError, match="is not a card"):
            read_card(_play(bad), legal)


def _quit_logger(tmp_path: Path) -> str:
    """A bot that plays the first legal card and notes, in a file named by its pid, each
    message type it was sent."""
    bot = tmp_path / "logger.py"
    bot.write_text(
        "import json, os, sys\n"
        f"log = open(os.path.join({str(tmp_path)!r}, f'{{os.getpid()}}.log'), 'w')\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    log.write(msg['type'] + '\\n'); log.flush()\n"
        "    if msg['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'name': 'log', 'version': 1}), flush=True)\n"
        "    elif msg['type'] == 'decide':\n"
        "        print(json.dumps({'type': 'play', 'card': msg['legal'][0]}), flush=True)\n"
        "    elif msg['type'] == 'quit':\n"
        "        break\n")
    return f"log=cmd:{sys.executable} {bot}"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_tournament_sends_quit_at_its_end_and_ends_its_bots(tmp_path, workers):
    run_tournament([_quit_logger(tmp_path), "random"], 4, workers=workers,
                   db_path=tmp_path / "t.sqlite", progress=False, bootstrap=0)
    logs = sorted(tmp_path.glob("*.log"))
    assert logs and all(p.read_text().splitlines()[-1] == "quit" for p in logs)
    assert all(_gone(int(p.stem), 2) for p in logs)
    assert not _IDLE


def test_the_cli_prints_why_games_were_forfeited(tmp_path, capsys):
    status = main(["tournament", "--agents", f"crash=cmd:{sys.executable} {BROKEN} crash",
                   "random", "--games", "2", "--db", str(tmp_path / "t.sqlite"),
                   "--no-progress", "--bootstrap", "0", "--workers", "1"])
    captured = capsys.readouterr()
    assert status == 0
    assert "Why games were forfeited" in captured.err
    assert "crash, crash, 2 games: bot 'cmd:" in captured.err
    assert "ended (exit status 3) instead of having to answer a decision" in captured.err
