"""``cribenv ladder``: ``configure(parser)`` adds the options, ``run(args)`` runs it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agents.ppo import shipped_specs
from cribenv.checks import int_arg, writable_dir, writable_file

DEFAULT_LEADERBOARD = "ladder/leaderboard.jsonl"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "A bot's number on frozen duplicate deals (cribenv-ladder-v1) against fixed anchors "
        "(random, greedy, expert, a frozen copy of the shipped network, the search on it): a "
        "rating on a fixed scale (expert = 1500), win % and net match points against each "
        "anchor with 95% intervals, its discard regret, its time a decision. The games are "
        "resumable tournaments in --folder; the result is one line of the leaderboard file, "
        "the same on every run and machine (but the time).")
    parser.epilog = ("Example: cribenv ladder expert 'mine=cmd:python examples/cbp_bot.py' "
                     "--workers 2; cribenv ladder --table results/ladder/leaderboard.jsonl "
                     "prints a leaderboard")
    parser.add_argument("agents", nargs="*", metavar="AGENT",
                        help="agent specs, as in cribenv tournament (random, greedy, expert, "
                             f"{', '.join(shipped_specs())}, ppo:PATH, search:BASE, cmd:COMMAND, "
                             "openspiel:ALGO), optionally "
                             "LABEL=SPEC")
    parser.add_argument("--deals", type=int_arg(1), default=None, metavar="N",
                        help="play the first N deals of the set (default: all 1,000, 2,000 "
                             "games an anchor); lines compare only at the same N")
    parser.add_argument("--workers", type=int_arg(1), default=1, metavar="N",
                        help="worker processes (default 1)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="play on the Ray cluster at ADDRESS instead (the 'ray' extra)")
    parser.add_argument("--folder", default="ladder", metavar="DIR",
                        help="where the games are kept (resumable: the same command goes on "
                             "where a stopped run stopped; one ladder a folder at a time; "
                             "default ladder/)")
    parser.add_argument("--leaderboard", default=DEFAULT_LEADERBOARD, metavar="FILE",
                        help=f"the leaderboard file the lines go to (default "
                             f"{DEFAULT_LEADERBOARD})")
    parser.add_argument("--replace", action="store_true",
                        help="replace the leaderboard's line of an AGENT's label (without it, "
                             "a label already on the leaderboard with another spec or --deals "
                             "is refused before any game)")
    parser.add_argument("--quality-deals", type=int_arg(1), default=500, metavar="N",
                        help="first hands of N deals for the discard regret (default 500)")
    parser.add_argument("--table", nargs="?", const="", default=None, metavar="FILE",
                        help="print the leaderboard FILE (default: the --leaderboard file) as "
                             "a Markdown table and stop")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def _f(x: float | None, spec: str) -> str:
    """``x`` formatted, or ``null`` (the line's notes say why)."""
    return "null" if x is None else format(x, spec)


def format_line(line: dict[str, Any]) -> str:
    """A ladder line as text."""
    out = [f"{line['agent']} on {line['ladder']}, {line['deals']} deals "
           f"({2 * line['deals']:,} games an anchor)",
           f"  rating {_f(line['rating'], '')} [{_f(line['rating_low'], '')}, "
           f"{_f(line['rating_high'], '')}] (95% CI; expert = 1500)",
           f"  {'anchor':<20}{'games':>6}  {'win % [95% CI]':<22}{'net points a game [95% CI]':<32}"
           "forfeits"]
    for a in line["anchors"]:
        out.append(f"  {a['anchor']:<20}{a['games']:>6}  "
                   f"{_f(a['win'], '.1f')} [{_f(a['win_low'], '.1f')}, "
                   f"{_f(a['win_high'], '.1f')}]".ljust(52)
                   + f"{_f(a['net'], '+.3f')} [{_f(a['net_low'], '+.3f')}, "
                     f"{_f(a['net_high'], '+.3f')}]".ljust(32)
                   + str(a["forfeits"]))
    for role in ("dealer", "pone") if line.get("discard") else ():
        q = line["discard"][role]
        out.append(f"  discard regret as {role}: {_f(q['regret'], '.3f')} "
                   f"[{_f(q['regret_low'], '.3f')}, {_f(q['regret_high'], '.3f')}] points a "
                   f"hand, best throw {100 * q['best_share']:.1f}% of {q['hands']} hands")
    e = line.get("endgames")
    if e:
        out.append(f"  endgames: a card proven to win laid in {e['won']} of {e['positions']} "
                   "positions")
    if line.get("ms_per_decision") is not None:
        out.append(f"  {line['ms_per_decision']:.3f} ms a decision asked (this machine)")
    out += [f"  note: {note}" for note in line.get("notes", ())]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from tournament.ladder import (
        check_databases,
        check_label,
        check_spec,
        leaderboard_table,
        play_line,
        read_leaderboard,
        running_in,
        update_leaderboard,
    )
    from tournament.ladder.deals import load

    if args.table is not None:
        if args.agents:
            raise ValueError("--table prints a leaderboard file and plays no game: name no "
                             "AGENT with it")
        path = Path(args.table or args.leaderboard)
        if not path.exists():
            print(f"cribenv ladder: no leaderboard file {path}", file=sys.stderr)
            return 2
        print(leaderboard_table(read_leaderboard(path)))
        return 0
    if not args.agents:
        print("cribenv ladder: name at least one AGENT (or --table)", file=sys.stderr)
        return 2
    # every input checked before the first game is played
    writable_file(args.leaderboard, "--leaderboard")
    board = read_leaderboard(args.leaderboard) if Path(args.leaderboard).exists() else []
    writable_dir(args.folder, "--folder")
    deal_set = load()
    deals = deal_set.deals if args.deals is None else args.deals
    deal_set.check(deals)
    entrants = []
    for spec in args.agents:
        entrant = check_spec(spec, deal_set)
        if entrant.label in [e.label for e in entrants]:
            raise ValueError(f"the label {entrant.label!r} is given twice: label each entry "
                             f"once, e.g. {entrant.label}2={entrant.spec}")
        check_label(board, {"ladder": deal_set.name, "deals": deals, "agent": entrant.label,
                            "spec": entrant.spec}, args.leaderboard, args.replace)
        entrants.append(entrant)
    try:
        with running_in(args.folder) as folder:
            for entrant in entrants:
                check_databases(entrant, deals, folder, deal_set)
            for entrant in entrants:
                line = play_line(entrant, deals, deal_set, folder, workers=args.workers,
                                 progress=not args.no_progress,
                                 quality_deals=args.quality_deals, ray_address=args.ray)
                print(format_line(line))
                status = update_leaderboard(args.leaderboard, line, args.replace)
                print(f"  leaderboard {args.leaderboard}: {status}")
                print("  line: " + json.dumps(line, sort_keys=True, allow_nan=False))
    except KeyboardInterrupt:
        print(f"\ninterrupted: the games played are kept in {args.folder}; the same command "
              "goes on where this one stopped", file=sys.stderr)
        return 130
    return 0
