"""``cribenv play`` shares the web table's advisor and show breakdown."""

from __future__ import annotations

import argparse
import io
import re

from agents import terminal as play


def _first_fitting(prompt: str) -> str:
    held = re.findall(r"\b(?:[A2-9TJQK][CDHS])\b", prompt.split("]")[-1])
    count = int(re.search(r"count (\d+)", prompt).group(1)) if "count" in prompt else 0
    return next(c for c in held if min(10, "A23456789TJQK".index(c[0]) + 1) + count <= 31)


def test_play_with_advice_lists_the_show_and_sums_up():
    out = io.StringIO()
    args = argparse.Namespace(bot="greedy", players=2, target=61, seat=0, seed=2, advice=True)
    assert play.run(args, input_fn=_first_fitting, out=out) == 0
    text = out.getvalue()
    assert "advice: keep " in text and "advice: " in text.split("Starter")[1]
    assert re.search(r"Advice: \d+ of \d+ decisions followed it; expected points given up: "
                     r"[\d.]+ in the discard, [\d.]+ in the play", text)
    # every show: its combinations, one a line, add up to its total
    shows = re.findall(r"(?:hand|crib): [^\n]* = (\d+)\n((?:    \S[^\n]*\n)+)", text)
    assert shows
    for total, rows in shows:
        points = [int(line.split()[-1]) for line in rows.splitlines()]
        assert sum(points) == int(total)


def test_play_without_advice_prints_none():
    out = io.StringIO()
    args = argparse.Namespace(bot="greedy", players=3, target=61, seat=0, seed=2)
    assert play.run(args, input_fn=_first_fitting, out=out) == 0
    text = out.getvalue()
    assert "  advice: " not in text and "Advice: " not in text
