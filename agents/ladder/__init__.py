"""The ladder: a bot's number on frozen deals against fixed anchors, the same in every run.

``cribenv ladder AGENT...`` plays each agent against every anchor of the deal set
(:mod:`agents.ladder.deals`: random, greedy, expert, a frozen copy of the shipped network and the
search on it) on the same duplicate deals, each pair a resumable tournament
(:func:`agents.tournament.run_tournament`, in ``ladder/``), and reports:

* a **rating** on the deal set's fixed scale (:mod:`agents.ladder.rating`: expert is 1500, the
  other anchors keep the ratings measured when the set was frozen) with its 95% interval;
* against each anchor, the **win %** and **net match points a game** (skunks counted) with 95%
  intervals over duplicate deals, and the games forfeited;
* the **discard regret** as dealer and pone (:mod:`agents.ladder.quality`);
* the share of the **endgame positions** where it lays a card proven to win for certain
  (:mod:`agents.ladder.endgames`);
* the time a decision (this machine's: the one figure that is not reproduced exactly).

Each agent's result is one JSON line, appended to a leaderboard file
(:func:`update_leaderboard`); :func:`leaderboard_table` formats one as Markdown.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agents.ladder.deals import DealSet, load
from agents.ladder.endgames import endgame_score
from agents.ladder.quality import discard_quality
from agents.ladder.rating import fixed_anchor_rating
from agents.tournament.schedule import parse_spec

__all__ = ["ladder_line", "leaderboard_table", "update_leaderboard", "DEFAULT_FOLDER"]

DEFAULT_FOLDER = "ladder"
#: The fields of a line that depend on the machine: left out when two lines are compared.
MACHINE_FIELDS = ("ms_per_decision", "cribenv")


def _anchor_games(entrant: Any, anchor: Any, deal_set: DealSet, deals: int, workers: int,
                  folder: Path, progress: bool, ray_address: str | None) -> dict[str, Any]:
    """Play (or resume) the entrant against one anchor; its results and duplicate units."""
    from agents.tournament import run_tournament
    from agents.tournament.storage import (
        connect,
        default_db_path,
        fetch_rows,
        think_times,
        tournament_config,
    )
    from cribenv.game import Rules

    specs = [str(entrant), f"anchor-{anchor.label}={anchor.spec}"]
    config = tournament_config([parse_spec(s) for s in specs], 2 * deals, deal_set.seed,
                               Rules())
    db = default_db_path(config, folder)
    report = run_tournament(specs, 2 * deals, workers=workers, db_path=db, seed=deal_set.seed,
                            progress=progress, bootstrap=0, ray_address=ray_address)
    conn = connect(db)
    try:
        rows = fetch_rows(conn)
        seconds, asked = think_times(conn).get(entrant.label, (0.0, 0))
    finally:
        conn.close()
    units: dict[int, list[int]] = {}
    for agent_a, _, deal, seating, winner_seat, *_ in rows:
        assert agent_a == entrant.label
        unit = units.setdefault(deal, [0, 0])
        unit[0] += winner_seat == seating      # seating 0: the entrant sits in seat 0
        unit[1] += 1
    pair = report.pairs[0]
    forfeits = report.forfeits.get(entrant.label, {})
    return {
        "units": [tuple(units[d]) for d in sorted(units)], "seconds": seconds, "asked": asked,
        "line": {"anchor": anchor.label, "games": pair.games,
                 "win": round(100 * pair.win_rate_a.value, 1),
                 "win_low": round(100 * pair.win_rate_a.low, 1),
                 "win_high": round(100 * pair.win_rate_a.high, 1),
                 "net": round(pair.net_points_a.value, 3),
                 "net_low": round(pair.net_points_a.low, 3),
                 "net_high": round(pair.net_points_a.high, 3),
                 "forfeits": sum(forfeits.values())},
    }


def ladder_line(spec: str, deals: int | None = None, *, workers: int = 1,
                folder: str | os.PathLike[str] = DEFAULT_FOLDER, progress: bool = True,
                quality_deals: int = 500, ray_address: str | None = None,
                deal_set: DealSet | None = None) -> dict[str, Any]:
    """Play ``spec`` (a ``make_agent`` spec, optionally ``LABEL=SPEC``) on the first ``deals``
    deals of the deal set (default: all) against every anchor; its ladder line."""
    from agents import make_agent
    from cribenv import __version__

    deal_set = deal_set or load()
    deals = deal_set.deals if deals is None else deals
    deal_set.check(deals)
    entrant = parse_spec(spec)
    make_agent(entrant.spec, seed=0)       # a bad spec fails here, before any game
    folder = Path(folder)
    results = [_anchor_games(entrant, anchor, deal_set, deals, workers, folder, progress,
                             ray_address) for anchor in deal_set.anchors]
    ratings = {a.label: a.rating for a in deal_set.anchors}
    rating, low, high = fixed_anchor_rating(
        ratings, {a.label: r["units"] for a, r in zip(deal_set.anchors, results)})
    seconds = sum(r["seconds"] for r in results)
    asked = sum(r["asked"] for r in results)
    agent = make_agent(entrant.spec, seed=0)
    try:
        quality = discard_quality(agent, min(quality_deals, deals), deal_set)
        endgames = endgame_score(agent)
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    return {
        "ladder": deal_set.name, "deals": deals, "agent": entrant.label, "spec": entrant.spec,
        "rating": _round(rating), "rating_low": _round(low), "rating_high": _round(high),
        "anchors": [r["line"] for r in results], "discard": quality, "endgames": endgames,
        "ms_per_decision": round(1000 * seconds / asked, 3) if asked else None,
        "cribenv": __version__,
    }


def _round(x: float) -> float | None:
    return None if x != x else (x if abs(x) == float("inf") else round(x))


def _key(line: dict[str, Any]) -> tuple:
    return line["ladder"], line["deals"], line["agent"], line["spec"]


def update_leaderboard(path: str | os.PathLike[str], line: dict[str, Any]) -> str:
    """Add ``line`` to the leaderboard file (JSON lines), replacing the line of the same agent,
    spec and deals; returns ``"added"``, ``"replaced"`` or ``"same"`` (already there with the
    same results)."""
    from cribenv.files import write_text

    path = Path(path)
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()
             ] if path.exists() else []
    status = "added"
    for i, old in enumerate(lines):
        if _key(old) == _key(line):
            same = all(old.get(k) == line.get(k) for k in line if k not in MACHINE_FIELDS)
            status = "same" if same else "replaced"
            lines[i] = line
            break
    else:
        lines.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines))
    return status


def _cell(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and abs(x) == float("inf"):
        return "+inf" if x > 0 else "-inf"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _endgames(line: dict[str, Any]) -> str:
    e = line.get("endgames")
    return f"{e['won']} / {e['positions']}" if e else ""


def leaderboard_table(lines: list[dict[str, Any]], top: int | None = None) -> str:
    """The leaderboard as a Markdown table, best rating first: the win % against each anchor,
    the discard regret as dealer / pone (points a hand), the endgame positions won, the ms a
    decision.

    >>> line = {"agent": "bot", "deals": 2, "rating": 1480, "rating_low": 1300,
    ...         "rating_high": 1660, "ms_per_decision": 0.5, "discard": {"dealer": {"regret": 0.1},
    ...         "pone": {"regret": 0.2}}, "anchors": [{"anchor": "expert", "win": 47.5}],
    ...         "endgames": {"won": 30, "positions": 40}}
    >>> print(leaderboard_table([line]))
    | # | agent | rating [95% CI] | expert win % | throw regret D / P | endgames | ms | deals |
    |---|---|---|---|---|---|---|---|
    | 1 | bot | 1480 [1300, 1660] | 47.5 | 0.1 / 0.2 | 30 / 40 | 0.5 | 2 |
    """
    ordered = sorted(lines, key=lambda x: (-(x["rating"] if x["rating"] is not None else
                                             -float("inf")), x["agent"]))[:top]
    anchors = [a["anchor"] for a in ordered[0]["anchors"]] if ordered else []
    head = (["#", "agent", "rating [95% CI]"] + [f"{a} win %" for a in anchors]
            + ["throw regret D / P", "endgames", "ms", "deals"])
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, x in enumerate(ordered, 1):
        wins = {a["anchor"]: a["win"] for a in x["anchors"]}
        cells = ([str(k), x["agent"], f"{_cell(x['rating'])} [{_cell(x['rating_low'])}, "
                  f"{_cell(x['rating_high'])}]"] + [_cell(wins.get(a)) for a in anchors]
                 + [f"{_cell(x['discard']['dealer']['regret'])} / "
                    f"{_cell(x['discard']['pone']['regret'])}", _endgames(x),
                    _cell(x.get("ms_per_decision")), str(x["deals"])])
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
