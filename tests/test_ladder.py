"""The ladder: the frozen deal set is the one promised (seeds, cards), the rating on the fixed
scale is computed right (hand-checked cases), a line is reproduced exactly on a second run and
lands once on the leaderboard, a protocol bot takes part, and bad input is refused before any
game."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import pytest

from agents import make_agent
from agents.base import ViewAgent
from cribenv import cards as C
from cribenv.cli import main
from cribenv.discard import analyse_discards
from cribenv.game import Game
from tournament.ladder import ladder_line, leaderboard_table, update_leaderboard
from tournament.ladder.deals import _deal_cards, load
from tournament.ladder.quality import discard_quality
from tournament.ladder.rating import fixed_anchor_rating, win_probability

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_deal_set_is_the_one_it_promises():
    deal_set = load()
    assert deal_set.name == "cribenv-ladder-v1" and deal_set.deals == 1000
    deal_set.check(1000)                      # the seeds derive; the cards match the checksum
    assert [a.label for a in deal_set.anchors][:3] == ["random", "greedy", "expert"]
    assert dict((a.label, a.rating) for a in deal_set.anchors)["expert"] == 1500.0
    ratings = [a.rating for a in deal_set.anchors]
    assert ratings[0] < ratings[1] < ratings[2]          # random < greedy < expert
    tampered = dataclasses.replace(deal_set, sha256="0" * 64)
    with pytest.raises(ValueError, match="deals other cards"):
        tampered.check(10)
    shuffled = dataclasses.replace(deal_set, game_seeds=deal_set.game_seeds[::-1])
    with pytest.raises(ValueError, match="no longer derive"):
        shuffled.check(10)
    with pytest.raises(ValueError, match="--deals must be from 1 to 1000"):
        deal_set.check(1001)


def test_the_cards_of_a_deal_do_not_depend_on_the_play():
    """The fingerprint's premise: other players see the same hands and starters."""
    for d, seed in enumerate(load().game_seeds[:4]):
        cards = _deal_cards(seed, d % 2)
        game = Game(seed=seed, first_dealer=d % 2, max_hands=len(cards))
        bots = [make_agent("random", seed=1), make_agent("expert")]
        seen = []
        while game.current_player is not None:
            if game.phase.name == "DISCARD" and len(seen) == game.hand_number:
                seen.append([game.dealer, [sorted(h) for h in game.hands]])
            if game.phase.name == "PLAY" and len(seen[-1]) == 2:
                seen[-1].append(game.starter)
            seat = game.current_player
            game.step(bots[seat].choose(game.view(seat), game.legal_actions()))
        assert seen == cards[:len(seen)] and len(seen) >= 3


def test_the_rating_against_fixed_anchors_by_hand():
    # 3 wins in 4 games against one anchor at 1500: 1500 + 400 log10(3)
    r, low, high = fixed_anchor_rating({"a": 1500.0}, {"a": [(2, 2), (1, 2)]})
    assert r == pytest.approx(1500 + 400 * math.log10(3), abs=1e-6)
    assert low < r < high
    # even against two anchors 200 either side with as many games: the middle
    r, _, _ = fixed_anchor_rating({"lo": 1300.0, "hi": 1700.0},
                                  {"lo": [(1, 2)] * 5, "hi": [(1, 2)] * 5})
    assert r == pytest.approx(1500.0, abs=1e-6)
    # the likelihood's slope is 0 at the estimate
    anchors = {"x": 1400.0, "y": 1650.0}
    units = {"x": [(2, 2), (1, 2), (2, 2)], "y": [(0, 2), (1, 2), (1, 2)]}
    r, _, _ = fixed_anchor_rating(anchors, units)
    slope = sum(w - n * win_probability(r, anchors[a]) for a, u in units.items() for w, n in u)
    assert slope == pytest.approx(0.0, abs=1e-9)
    # no loss: unbounded above, bounded below by the best anchor beaten
    assert fixed_anchor_rating(anchors, {"x": [(2, 2)], "y": [(2, 2)]}) == \
        (math.inf, 1650.0, math.inf)
    with pytest.raises(ValueError, match="no games"):
        fixed_anchor_rating(anchors, {"x": []})


class BestThrow(ViewAgent):
    """Lays away the throw of the best exact expected value (regret 0 by construction)."""

    name = "best-throw"

    def choose(self, view, legal):
        best = analyse_discards(view.own_cards, is_dealer=view.is_dealer)[0]
        return next(c for c in best.throw if c in legal)


def test_discard_regret_is_zero_for_the_best_throw_and_positive_for_others():
    best = discard_quality(BestThrow(), deals=6)
    assert all(best[r]["regret"] == 0.0 and best[r]["best_share"] == 1.0
               for r in ("dealer", "pone"))
    rough = discard_quality(make_agent("random", seed=0), deals=6)
    assert rough["dealer"]["regret"] > 0 and rough["pone"]["regret"] > 0


def test_a_ladder_line_is_reproduced_exactly_and_lands_once(tmp_path):
    args = dict(workers=1, folder=tmp_path / "games", progress=False, quality_deals=2)
    first = ladder_line("greedy", 2, **args)
    assert [a["anchor"] for a in first["anchors"]] == [a.label for a in load().anchors]
    assert all(a["games"] == 4 for a in first["anchors"])
    board = tmp_path / "board.jsonl"
    assert update_leaderboard(board, first) == "added"
    again = ladder_line("greedy", 2, **{**args, "folder": tmp_path / "fresh"})  # replayed
    strip = ("ms_per_decision",)
    assert {k: v for k, v in again.items() if k not in strip} == \
        {k: v for k, v in first.items() if k not in strip}
    assert update_leaderboard(board, again) == "same"
    assert len(board.read_text().splitlines()) == 1
    table = leaderboard_table([json.loads(x) for x in board.read_text().splitlines()])
    assert "| 1 | greedy |" in table


def test_the_cli_ladder_with_a_protocol_bot(tmp_path, capsys):
    client = f"bot=cmd:{sys.executable} {ROOT / 'examples' / 'cbp_bot.py'}"
    board = tmp_path / "board.jsonl"
    status = main(["ladder", client, "--deals", "2", "--quality-deals", "2", "--folder",
                   str(tmp_path / "games"), "--leaderboard", str(board), "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "bot on cribenv-ladder-v1, 2 deals" in out and "leaderboard" in out
    line = json.loads(board.read_text())
    assert line["agent"] == "bot" and all(a["forfeits"] == 0 for a in line["anchors"])
    assert main(["ladder", "--table", "--leaderboard", str(board)]) == 0
    assert "| 1 | bot |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["ladder", "gredy", "--deals", "2"], "did you mean 'greedy'"),
    (["ladder", "greedy", "--deals", "1001"], "--deals must be from 1 to 1000"),
    (["ladder"], "name at least one AGENT"),
    (["ladder", "--table", "--leaderboard", "nope.jsonl"], "no leaderboard file"),
])
def test_bad_input_is_refused_before_any_game(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--folder", "games"]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "games").exists()


def endgame_position() -> Game:
    """Seat 0 deals; both sides on 119. The play: AC (pone), KS, 2C, 9D: 22, and the pone,
    holding only QH JD, cannot go on. The dealer holds 5H 9C: 9C makes 31 and a pair of nines,
    4 points, and wins at once; 5H (27) leaves the pone a way to win (its two tens paired score
    2 in its show, which counts first)."""
    from cribenv.cards import parse

    game = Game(deals=[{"dealer": 0, "hands": ["KS 9D 9C 5H 2D 3D", "AC 2C QH JD 4S 6S"],
                        "starter": "7H"}])
    for card in ["4S", "6S", "2D", "3D"]:
        game.step(parse(card))
    game.scores[0] = game.scores[1] = 119
    for card in ["AC", "KS", "2C", "9D"]:
        game.step(parse(card))
    return game


def test_an_endgame_proof_by_hand():
    from cribenv.cards import parse
    from tournament.ladder.endgames import winning_cards

    game = endgame_position()
    assert game.current_player == 0 and game.legal_actions() == [parse("5H"), parse("9C")]
    wins, holdings = winning_cards(game)
    # the pone said Go at 22: it holds two of the 15 unseen cards worth 10 (KS is the dealer's)
    assert wins == [parse("9C")] and holdings == 15 * 14 // 2


def test_the_endgame_suite_is_proven_and_scores_a_bot():
    from cribenv.cards import parse
    from tournament.ladder.endgames import (
        endgame_score,
        load_positions,
        position_game,
        winning_cards,
    )

    positions = load_positions()
    assert len(positions) >= 20
    for position in positions[:5]:             # the stored proofs hold on this engine
        game = position_game(position)
        wins, holdings = winning_cards(game)
        assert [C.to_str(c) for c in wins] == position["winning"]
        assert holdings == position["holdings"] and game.current_player == position["seat"]
    best = endgame_score(make_agent("expert"))
    assert best["positions"] == len(positions) and 0 <= best["won"] <= len(positions)
    assert parse(positions[0]["winning"][0]) in position_game(positions[0]).legal_actions()



def test_the_published_leaderboard_is_on_the_front_page_and_the_docs():
    """README shows the top five lines of results/ladder/leaderboard.jsonl, the ladder page all
    of them, as leaderboard_table makes them (cribenv ladder --table prints it)."""
    board = ROOT / "results" / "ladder" / "leaderboard.jsonl"
    lines = [json.loads(x) for x in board.read_text().splitlines() if x.strip()]
    assert lines and all(x["deals"] == 1000 and x["ladder"] == "cribenv-ladder-v1"
                         for x in lines)
    for page, top in ((ROOT / "README.md", 5), (ROOT / "docs" / "ladder.md", None)):
        text = page.read_text(encoding="utf-8")
        shown = text.split("<!-- leaderboard:start -->\n")[1].split("<!-- leaderboard:end -->")[0]
        assert shown.strip() == leaderboard_table(lines, top=top), page.name


# ---------------------------------------------------------------------------- under damage


def a_line(agent: str, rating: float | None = 1500) -> dict:
    """A small ladder line of the leaderboard's shape."""
    return {"ladder": "cribenv-ladder-v1", "deals": 2, "agent": agent, "spec": "greedy",
            "rating": rating, "rating_low": 1400, "rating_high": 1600,
            "anchors": [{"anchor": "expert", "win": 50.0}],
            "discard": {"dealer": {"regret": 0.1}, "pone": {"regret": 0.2}},
            "endgames": {"won": 30, "positions": 52}, "ms_per_decision": 0.5}


def strict_json(text: str):
    """``text`` parsed as strict JSON (NaN and Infinity refused)."""
    def refuse(word):
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_ladder_help_says_win_percent_once(capsys):
    with pytest.raises(SystemExit):
        main(["ladder", "--help"])
    out = capsys.readouterr().out
    assert "win % and net" in out and "%%" not in out


def test_table_prints_the_file_it_is_given(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    board = tmp_path / "mine.jsonl"
    board.write_text(json.dumps(a_line("bot")) + "\n")
    assert main(["ladder", "--table", str(board)]) == 0
    assert "| 1 | bot |" in capsys.readouterr().out
    assert main(["ladder", "--table", str(board), "greedy"]) == 2     # plays nothing
    assert "name no AGENT" in capsys.readouterr().err


DAMAGED_BOARDS = {
    "a list": b"[1]\n",
    "an empty object": b"{}\n",
    "not JSON": b'{"agent": \n',
    "not UTF-8": b"\xff\xfe\n",
    "a rating of words": json.dumps({**a_line("x"), "rating": "high"}).encode() + b"\n",
    "anchors not a list": json.dumps({**a_line("x"), "anchors": 3}).encode() + b"\n",
    "a second line damaged": json.dumps(a_line("x")).encode() + b"\n[]\n",
}


@pytest.mark.parametrize("case", list(DAMAGED_BOARDS))
def test_a_damaged_leaderboard_is_named_before_any_game(tmp_path, capsys, monkeypatch, case):
    monkeypatch.chdir(tmp_path)
    board = tmp_path / "board.jsonl"
    board.write_bytes(DAMAGED_BOARDS[case])
    assert main(["ladder", "--table", str(board)]) == 2
    assert main(["ladder", "greedy", "--deals", "1", "--leaderboard", str(board),
                 "--folder", "games", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count(str(board)) == 2 and "Traceback" not in err, err
    assert not (tmp_path / "games").exists()
    assert board.read_bytes() == DAMAGED_BOARDS[case]


def test_an_entry_labelled_as_an_anchor_is_refused_before_any_game(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["ladder", "anchor-greedy=expert", "--deals", "1", "--folder", "games"]) == 2
    assert "is an anchor's" in capsys.readouterr().err
    assert not (tmp_path / "games").exists()


def test_a_damaged_database_of_a_later_entry_is_named_before_any_game(tmp_path, capsys):
    from tournament.ladder import _tournament
    from tournament.schedule import parse_spec

    deal_set = load()
    _, _, db = _tournament(parse_spec("greedy"), deal_set.anchors[2], deal_set, 1,
                           tmp_path / "games")
    db.parent.mkdir()
    db.write_text("not a database")
    assert main(["ladder", "expert", "greedy", "--deals", "1", "--folder",
                 str(tmp_path / "games"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{db} is not a usable results database" in err and "Traceback" not in err
    assert sorted(db.parent.iterdir()) == [db.parent / ".ladder.lock", db]   # expert played none


def test_one_deal_makes_a_strict_json_line_saying_why_figures_are_null(tmp_path, capsys):
    board = tmp_path / "board.jsonl"
    assert main(["ladder", "greedy", "--deals", "1", "--quality-deals", "1", "--folder",
                 str(tmp_path / "games"), "--leaderboard", str(board), "--no-progress"]) == 0
    out = capsys.readouterr().out
    line = strict_json(board.read_text())
    assert strict_json(out.split("  line: ")[1]) == line
    assert line["anchors"][0]["net_low"] is None and line["discard"]["pone"]["regret_low"] is None
    assert any("net_low" in note and "two deals" in note for note in line["notes"])
    assert "note: net_high, net_low" in out


def test_a_failing_protocol_bot_forfeits_and_its_measures_are_null(tmp_path, capsys):
    board = tmp_path / "board.jsonl"
    bot = tmp_path / "dead.py"          # answers the greeting, then ends
    bot.write_text("import json, sys\nsys.stdin.readline()\n"
                   "print(json.dumps({'type': 'hello', 'name': 'dead', 'version': 1}))\n")
    dead = f"dead=cmd:{sys.executable} {bot}"
    assert main(["ladder", dead, "--deals", "1", "--quality-deals", "1", "--folder",
                 str(tmp_path / "games"), "--leaderboard", str(board), "--no-progress"]) == 0
    out = capsys.readouterr().out
    line = strict_json(board.read_text())
    assert all(a["forfeits"] == 2 and a["win"] == 0 for a in line["anchors"])
    assert line["discard"] is None and line["endgames"] is None
    assert line["rating"] is None and line["rating_high"] is not None     # no game won
    assert sum("not measured: the bot failed" in note for note in line["notes"]) == 2
    assert "not measured: the bot failed" in out
    assert main(["ladder", "--table", str(board)]) == 0
    assert f"| 1 | dead | <= {line['rating_high']} |" in capsys.readouterr().out


class IllegalThrows(ViewAgent):
    """Lays a card it does not hold."""

    name = "illegal"

    def choose(self, view, legal):
        return next(c for c in range(52) if c not in legal)


def test_an_illegal_card_in_the_measures_is_the_bots_failure():
    from agents.arena import IllegalAgentActionError
    from tournament.ladder.endgames import endgame_score

    with pytest.raises(IllegalAgentActionError, match="not a card it may lay"):
        discard_quality(IllegalThrows(), deals=1)
    with pytest.raises(IllegalAgentActionError, match="not a card it may lay"):
        endgame_score(IllegalThrows())


WRITER = """
import json, sys, time
from tournament.ladder import update_leaderboard
board, who, start, line = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
while time.time() < start:
    time.sleep(0.001)
for k in range(3):
    update_leaderboard(board, {**line, "agent": f"{who}-{k}"})
"""


def test_concurrent_writers_keep_every_line(tmp_path):
    import subprocess
    import time

    board = tmp_path / "board.jsonl"
    update_leaderboard(board, a_line("first"))
    start = time.time() + 4        # every writer imported and waiting, then all at once
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(board), f"w{n}", str(start),
                                 json.dumps(a_line("x"))], cwd=ROOT) for n in range(8)]
    assert all(w.wait(120) == 0 for w in writers)
    agents = sorted(strict_json(x)["agent"] for x in board.read_text().splitlines())
    assert agents == sorted(["first"] + [f"w{n}-{k}" for n in range(8) for k in range(3)])


def test_a_line_is_appended_after_a_last_line_without_its_newline(tmp_path):
    board = tmp_path / "board.jsonl"
    board.write_text(json.dumps(a_line("a")))          # written by hand, no newline
    assert update_leaderboard(board, a_line("b")) == "added"
    assert [strict_json(x)["agent"] for x in board.read_text().splitlines()] == ["a", "b"]
    assert update_leaderboard(board, a_line("a", rating=1450)) == "replaced"
    assert [strict_json(x)["rating"] for x in board.read_text().splitlines()] == [1450, 1500]
