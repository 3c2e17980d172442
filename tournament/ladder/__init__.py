"""The ladder: a bot's number on frozen deals against fixed anchors, the same in every run.

``cribenv ladder AGENT...`` plays each agent against every anchor of the deal set
(:mod:`tournament.ladder.deals`: random, greedy, expert, a frozen copy of the shipped network
and the search on it) on the same duplicate deals, each pair a resumable tournament
(:func:`tournament.run_tournament`, in ``ladder/``), and reports:

* a **rating** on the deal set's fixed scale (:mod:`tournament.ladder.rating`: expert is 1500, the
  other anchors keep the ratings measured when the set was frozen) with its 95% interval;
* against each anchor, the **win %** and **net match points a game** (skunks counted) with 95%
  intervals over duplicate deals, and the games forfeited;
* the **discard regret** as dealer and pone (:mod:`tournament.ladder.quality`);
* the share of the **endgame positions** where it lays a card proven to win for certain
  (:mod:`tournament.ladder.endgames`);
* the time a decision (this machine's: the one figure that is not reproduced exactly).

Each agent's result is one JSON line (strict JSON: a figure that is not a number, such as an
interval from one deal, is ``null`` and the line's ``notes`` say why), appended to a leaderboard
file under a lock (:func:`update_leaderboard`); :func:`leaderboard_table` formats one as
Markdown. Everything that can be checked is checked before the first game
(:func:`check_entry`, :func:`read_leaderboard`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cribenv.files import locked
from tournament.ladder.deals import DealSet, load
from tournament.ladder.endgames import endgame_score
from tournament.ladder.quality import discard_quality
from tournament.ladder.rating import fixed_anchor_rating
from tournament.schedule import AgentSpec, parse_spec

__all__ = ["check_databases", "check_entry", "check_label", "check_spec", "ladder_line",
           "leaderboard_table", "play_line", "read_leaderboard", "running_in",
           "update_leaderboard", "DEFAULT_FOLDER"]

DEFAULT_FOLDER = "ladder"
#: The fields of a line that depend on the machine: left out when two lines are compared.
MACHINE_FIELDS = ("ms_per_decision", "cribenv")


def _tournament(entrant: AgentSpec, anchor: Any, deal_set: DealSet, deals: int,
                folder: Path) -> tuple[list[str], dict[str, Any], Path]:
    """The specs, configuration and database of the entrant's games against ``anchor``."""
    from cribenv.game import Rules
    from tournament.storage import default_db_path, tournament_config

    specs = [str(entrant), f"anchor-{anchor.label}={anchor.spec}"]
    config = tournament_config([parse_spec(s) for s in specs], 2 * deals, deal_set.seed,
                               Rules())
    return specs, config, default_db_path(config, folder)


def _check_database(db: Path, specs: list[str], config: dict[str, Any], deal_set: DealSet,
                    deals: int) -> None:
    """A database kept from an earlier run, read before any game: ValueError naming it when it
    is damaged or holds other games. It is read as it was last written (``immutable``, nothing
    written beside it) unless a ``-wal`` file beside it holds games a killed run stored last;
    then through the ``-wal``, as the run that resumes it will."""
    import sqlite3

    from tournament.schedule import schedule
    from tournament.storage import check_rows, stored_config

    wal = db.with_name(db.name + "-wal").exists()
    conn = None
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro{'' if wal else '&immutable=1'}",
                               uri=True)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if not {"meta", "games"} <= tables:   # killed before its tables were made: no game
            return
        stored = stored_config(conn, db)
        games = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        if stored is not None and stored != config and games:
            raise ValueError(f"{db} holds other games than its name says; move it aside")
        tasks = schedule([parse_spec(s) for s in specs], 2 * deals, deal_set.seed)
        check_rows(conn, tasks, 121, db)
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{db} is not a usable results database ({exc}); move it aside (its "
                         "games are played again)") from None
    finally:
        if conn is not None:
            conn.close()


def check_spec(spec: str, deal_set: DealSet) -> AgentSpec:
    """The entry of ``spec``, checked without touching a file: its spec makes an agent (a
    program starts and answers the greeting) and its label is not an anchor's."""
    from tournament.runner import check_agent

    entrant = parse_spec(spec)
    anchors = [f"anchor-{a.label}" for a in deal_set.anchors]
    if entrant.label in anchors:
        raise ValueError(f"the label {entrant.label!r} is an anchor's ({', '.join(anchors)}); "
                         f"give the entry another, e.g. mine={entrant.spec}")
    check_agent(entrant)
    return entrant


def check_databases(entrant: AgentSpec, deals: int, folder: Path, deal_set: DealSet) -> None:
    """The databases an earlier run left in ``folder`` for the entry are readable and hold its
    games (ValueError naming the first that is not)."""
    for anchor in deal_set.anchors:
        specs, config, db = _tournament(entrant, anchor, deal_set, deals, folder)
        if db.exists():
            _check_database(db, specs, config, deal_set, deals)


def check_entry(spec: str, deals: int, folder: str | os.PathLike[str] = DEFAULT_FOLDER,
                deal_set: DealSet | None = None) -> AgentSpec:
    """Everything about one entry that can be checked before its first game (ValueError
    otherwise): its spec makes an agent (a program starts and answers the greeting), its label
    is not an anchor's, and the databases an earlier run left in ``folder`` for it are readable
    and hold its games."""
    deal_set = deal_set or load()
    entrant = check_spec(spec, deal_set)
    check_databases(entrant, deals, Path(folder), deal_set)
    return entrant


#: The run folders this process holds (:func:`running_in`).
_RUNNING: set[Path] = set()
LOCK_NAME = ".ladder.lock"


@contextmanager
def running_in(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the games folder ``folder`` (made if need be) for one ladder run: an ``flock`` on
    its ``.ladder.lock``, let go when the run ends or its process does (``kill -9`` included,
    once the workers it forked have ended too). A second ladder on the folder is refused, a
    ValueError naming it busy; in the process that holds it, the block runs."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key in _RUNNING:
        yield folder
        return
    with locked(folder / LOCK_NAME, busy=f"the games folder {str(folder)!r} is busy: another "
                "ladder is playing in it (or its workers are still ending); wait for it, or give "
                "this one another --folder"):
        _RUNNING.add(key)
        try:
            yield folder
        finally:
            _RUNNING.discard(key)


def _close(agent: Any) -> None:
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def _anchor_games(entrant: AgentSpec, anchor: Any, deal_set: DealSet, deals: int, workers: int,
                  folder: Path, progress: bool, ray_address: str | None) -> dict[str, Any]:
    """Play (or resume) the entrant against one anchor; its results and duplicate units."""
    from tournament import run_tournament
    from tournament.storage import connect, fetch_rows, think_times

    specs, _, db = _tournament(entrant, anchor, deal_set, deals, folder)
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
    deals of the deal set (default: all) against every anchor; its ladder line. The games folder
    is held for the run (:func:`running_in`) and the entry checked before any game."""
    deal_set = deal_set or load()
    deals = deal_set.deals if deals is None else deals
    deal_set.check(deals)
    with running_in(folder) as folder:
        entrant = check_entry(spec, deals, folder, deal_set)   # before any game
        return play_line(entrant, deals, deal_set, folder, workers=workers, progress=progress,
                         quality_deals=quality_deals, ray_address=ray_address)


def play_line(entrant: AgentSpec, deals: int, deal_set: DealSet, folder: Path, *,
              workers: int, progress: bool, quality_deals: int,
              ray_address: str | None) -> dict[str, Any]:
    """The games and measures of a checked entry (:func:`check_entry`), in a folder held
    (:func:`running_in`): its ladder line."""
    from agents import make_agent
    from cribenv import __version__

    results = [_anchor_games(entrant, anchor, deal_set, deals, workers, folder, progress,
                             ray_address) for anchor in deal_set.anchors]
    ratings = {a.label: a.rating for a in deal_set.anchors}
    rating, low, high = fixed_anchor_rating(
        ratings, {a.label: r["units"] for a, r in zip(deal_set.anchors, results)})
    seconds = sum(r["seconds"] for r in results)
    asked = sum(r["asked"] for r in results)
    notes: list[str] = []
    agent = make_agent(entrant.spec, seed=0)
    try:
        discard = _measure("discard", notes, lambda: discard_quality(
            agent, min(quality_deals, deals), deal_set))
        endgames = _measure("endgames", notes, lambda: endgame_score(agent))
    finally:
        _close(agent)
    line = {
        "ladder": deal_set.name, "deals": deals, "agent": entrant.label, "spec": entrant.spec,
        "rating": _round(rating), "rating_low": _round(low), "rating_high": _round(high),
        "anchors": [r["line"] for r in results], "discard": discard, "endgames": endgames,
        "ms_per_decision": round(1000 * seconds / asked, 3) if asked else None,
        "cribenv": __version__,
    }
    return _strict(line, notes)


def _measure(what: str, notes: list[str], measure: Any) -> Any:
    """``measure()``, or ``None`` with a note when the bot fails during it (a game would be its
    forfeit: a crash, a timeout, an illegal card)."""
    from agents.arena import BotFailure, IllegalAgentActionError

    try:
        return measure()
    except (BotFailure, IllegalAgentActionError) as exc:
        notes.append(f"{what}: null, not measured: the bot failed ({exc})")
        return None


def _round(x: float) -> float | None:
    return None if x != x else (x if abs(x) == float("inf") else round(x))


def _finite(x: Any, names: set[str] | None = None, name: str = "") -> Any:
    """``x`` with every NaN or infinity replaced by ``None`` (their keys added to ``names``)."""
    if isinstance(x, float) and not math.isfinite(x):
        if names is not None:
            names.add(name)
        return None
    if isinstance(x, dict):
        return {k: _finite(v, names, k) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v, names, name) for v in x]
    return x


def _strict(line: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The line as strict JSON values: a rating with no game lost (or won) is unbounded, an
    interval over one deal or hand has no spread to measure; each is ``null``, said in
    ``notes``."""
    rating = line["rating"]
    if rating in (math.inf, -math.inf):
        notes.append("rating: null, unbounded: " + (
            "no game lost; at least rating_low" if rating > 0 else
            "no game won; at most rating_high"))
    names: set[str] = set()
    line = _finite(line, names)
    intervals = sorted(names - {"rating", "rating_low", "rating_high"})
    if intervals:
        notes.append(f"{', '.join(intervals)}: null, no interval: it needs the spread between "
                     "two deals (hands) or more")
    return {**line, "notes": notes} if notes else line


def _key(line: dict[str, Any]) -> tuple:
    return line["ladder"], line["deals"], line["agent"], line["spec"]


def _is_number(x: Any) -> bool:
    """A number or ``None`` (null)."""
    return x is None or (isinstance(x, int | float) and not isinstance(x, bool))


def _line_problem(x: Any) -> str | None:
    """What keeps ``x`` from being a ladder line the table and the leaderboard can use."""
    if not isinstance(x, dict):
        return f"a JSON {type(x).__name__}, not an object"
    for key in ("ladder", "agent", "spec"):
        if not isinstance(x.get(key), str):
            return f"no text {key!r}"
    if type(x.get("deals")) is not int or x["deals"] < 1:
        return "no whole number of 'deals'"
    for key in ("rating", "rating_low", "rating_high"):
        if key not in x or not _is_number(x[key]):
            return f"no number (or null) {key!r}"
    anchors = x.get("anchors")
    if not isinstance(anchors, list) or not all(
            isinstance(a, dict) and isinstance(a.get("anchor"), str) and _is_number(a.get("win"))
            for a in anchors):
        return "'anchors' is not a list of objects with an 'anchor' and its 'win'"
    discard = x.get("discard")
    if discard is not None and not (isinstance(discard, dict) and all(
            isinstance(discard.get(r), dict) and _is_number(discard[r].get("regret"))
            for r in ("dealer", "pone"))):
        return "'discard' has no 'dealer' and 'pone' regret"
    endgames = x.get("endgames")
    if endgames is not None and not (isinstance(endgames, dict) and all(
            type(endgames.get(k)) is int for k in ("won", "positions"))):
        return "'endgames' has no whole numbers 'won' and 'positions'"
    if not _is_number(x.get("ms_per_decision")):
        return "'ms_per_decision' is not a number"
    return None


def read_leaderboard(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The lines of a leaderboard file (JSON lines, blank lines skipped), each checked: a
    ValueError names the file and the first line that is not a ladder line."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a leaderboard file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} cannot be read as a leaderboard file ({exc})") from None
    lines = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            x = json.loads(raw)
        except ValueError as exc:
            problem: str | None = f"not JSON: {exc}"
        else:
            problem = _line_problem(x)
        if problem:
            raise ValueError(f"{path}, line {n}, is not a ladder line ({problem}): mend or "
                             "remove it, or choose another leaderboard file")
        lines.append(x)
    return lines


@contextmanager
def _holding(folder: Path) -> Iterator[None]:
    """Hold ``folder`` (waiting for any other holder) while the block runs: one writer of its
    leaderboard at a time."""
    with locked(folder):
        yield


def _append(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` whole or not at all (cut back on a failed write)."""
    size = path.stat().st_size if path.exists() else 0
    if size:
        with open(path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":        # a last line without its newline
                text = "\n" + text
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        if path.exists():
            os.truncate(path, size)
        raise


def check_label(lines: list[dict[str, Any]], line: dict[str, Any], path: Any,
                replace: bool = False) -> list[dict[str, Any]]:
    """The leaderboard ``lines`` (of the file ``path``) that ``line`` replaces: the one of the
    same agent, spec and deals (its run again), and with ``replace`` every other of its label on
    its ladder. Another line of the label is a ValueError unless ``replace``: a label names one
    entry of a ladder."""
    same = [x for x in lines if _key(x) == _key(line)]
    others = [x for x in lines if x["ladder"] == line["ladder"] and x["agent"] == line["agent"]
              and _key(x) != _key(line)]
    if others and not replace:
        old = others[0]
        raise ValueError(f"the label {line['agent']!r} is on the leaderboard {path} already "
                         f"(spec {old['spec']!r}, {old['deals']} deals): give this entry "
                         f"another label (e.g. {line['agent']}2={line['spec']}), or pass "
                         "--replace to replace its line")
    return same + others


def update_leaderboard(path: str | os.PathLike[str], line: dict[str, Any],
                       replace: bool = False) -> str:
    """Add ``line`` to the leaderboard file (JSON lines), replacing the line of the same agent,
    spec and deals; returns ``"added"``, ``"replaced"`` or ``"same"`` (already there with the
    same results). Another line of the same label is a ValueError unless ``replace`` (then it
    goes: :func:`check_label`). Writers hold the file's folder while they read and write it, so
    several at once all keep their lines: a new line is appended, a replaced one rewrites the
    file atomically."""
    from cribenv.files import write_text

    path = Path(path)
    line = _finite(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _holding(path.parent):
        lines = read_leaderboard(path) if path.exists() else []
        gone = check_label(lines, line, path, replace)
        if not gone:
            _append(path, json.dumps(line, sort_keys=True, allow_nan=False) + "\n")
            return "added"
        first = next(i for i, x in enumerate(lines) if any(x is g for g in gone))
        kept = [x for x in lines if not any(x is g for g in gone)]
        kept.insert(first, line)
        write_text(path, "".join(json.dumps(_finite(x), sort_keys=True, allow_nan=False) + "\n"
                                 for x in kept))
        same = len(gone) == 1 and _key(gone[0]) == _key(line) and all(
            gone[0].get(k) == line.get(k) for k in line if k not in MACHINE_FIELDS)
        return "same" if same else "replaced"


def _cell(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float) and abs(x) == float("inf"):
        return "+inf" if x > 0 else "-inf"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _endgames(line: dict[str, Any]) -> str:
    e = line.get("endgames")
    return f"{e['won']} / {e['positions']}" if e else ""


def _regrets(line: dict[str, Any]) -> str:
    d = line.get("discard")
    return f"{_cell(d['dealer']['regret'])} / {_cell(d['pone']['regret'])}" if d else ""


def _rating_cell(line: dict[str, Any]) -> str:
    """``rating [low, high]``; a null (unbounded) rating as its known end."""
    rating, low, high = line["rating"], line["rating_low"], line["rating_high"]
    if rating is None:
        return f">= {_cell(low)}" if low is not None else (
            f"<= {_cell(high)}" if high is not None else "")
    return f"{_cell(rating)} [{_cell(low)}, {_cell(high)}]"


def _rating(line: dict[str, Any]) -> float:
    """The rating to sort by: a null one is unbounded above when only its low end is known."""
    if line["rating"] is not None:
        return line["rating"]
    return math.inf if line["rating_high"] is None and line["rating_low"] is not None \
        else -math.inf


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
    ordered = sorted(lines, key=lambda x: (-_rating(x), x["agent"]))[:top]
    anchors = [a["anchor"] for a in ordered[0]["anchors"]] if ordered else []
    head = (["#", "agent", "rating [95% CI]"] + [f"{a} win %" for a in anchors]
            + ["throw regret D / P", "endgames", "ms", "deals"])
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, x in enumerate(ordered, 1):
        wins = {a["anchor"]: a["win"] for a in x["anchors"]}
        cells = ([str(k), x["agent"], _rating_cell(x)] + [_cell(wins.get(a)) for a in anchors]
                 + [_regrets(x), _endgames(x), _cell(x.get("ms_per_decision")),
                    str(x["deals"])])
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
