"""``cribenv tournament``: ``configure(parser)`` adds the options, ``run(args)`` runs it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.ppo import shipped_specs
from cribenv.checks import int_arg, writable_dir, writable_file
from cribenv.game import Rules
from tournament.runner import run_tournament
from tournament.schedule import check_games, parse_spec
from tournament.storage import DEFAULT_DB_FOLDER, default_db_path, tournament_config
from tournament.workers import cores


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Round robin between agents with duplicate deals (each deal played twice, seats "
        "swapped), confidence intervals per pair and Bradley-Terry ratings. Results are "
        "stored in SQLite as games finish; re-running the same tournament resumes it.")
    parser.epilog = ("Example: cribenv tournament --agents random greedy expert --games 200 "
                     f"--workers 4 (results in {DEFAULT_DB_FOLDER}/random_greedy_expert-200g-"
                     "HASH.sqlite, with its .png, .json and .csv next to it)")
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="agent specs: random, greedy, expert, "
                             f"{', '.join(shipped_specs())} (the shipped networks), ppo:PATH (a "
                             "policy file, e.g. ppo:runs/mine/policy.safetensors) or "
                             "search:BASE (e.g. search:ppo:shipped, the strongest) or "
                             "cmd:COMMAND (a program in any language speaking the Cribbage Bot "
                             "Protocol, e.g. 'cmd:python examples/cbp_bot.py') or "
                             "openspiel:ALGO (OpenSpiel's search, e.g. "
                             "'openspiel:ismcts?simulations=100'); optionally "
                             "labelled LABEL=SPEC (e.g. random2=random)")
    parser.add_argument("--games", type=int_arg(2), default=200, metavar="N",
                        help="games per pair, even: N/2 deals x 2 seatings (default 200)")
    parser.add_argument("--workers", type=int_arg(1), default=cores(), metavar="N",
                        help="worker processes (default: all cores, here %(default)s)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="play the games on the Ray cluster at ADDRESS (e.g. "
                             "10.0.0.5:6379, or auto for the one started on this machine) "
                             "instead of local processes; needs the 'ray' extra")
    parser.add_argument("--db", metavar="FILE",
                        help="SQLite results database: one holding this tournament is resumed, "
                             "one holding another is refused (default: "
                             f"{DEFAULT_DB_FOLDER}/AGENTS-Ng-HASH.sqlite, named from the agents "
                             "and settings, so the same tournament resumes and another never "
                             "collides)")
    parser.add_argument("--seed", type=int_arg(0), default=0, help="tournament seed (default 0)")
    parser.add_argument("--target", type=int, default=121, choices=(61, 121),
                        help="game target (default 121; skunk lines follow the target)")
    parser.add_argument("--out", metavar="DIR",
                        help="write tournament.png, tournament.json and tournament.csv here "
                             "(default: next to the database, named like it: DB.png, ...); "
                             "the results database stays where --db says (by default in "
                             f"{DEFAULT_DB_FOLDER}/): give --db DIR/results.sqlite to keep it "
                             "in DIR too")
    parser.add_argument("--bootstrap", type=int_arg(0), default=500, metavar="N",
                        help="bootstrap resamples for the rating intervals (default 500; 0: "
                             "no intervals)")
    parser.add_argument("--anchor", default=None,
                        help="agent rated 0, or 'mean' (mean rating 1500); default: random "
                             "if it plays, else mean")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--open", type=int, metavar="N",
                        help="then open game N of the database (0 = the first, in key order) "
                             "in the web table, every seat's cards shown (cribenv serve)")


def _stored(db: Path) -> int:
    """The games stored in the results database ``db`` (0 when there is none yet)."""
    import sqlite3

    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=60)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:      # no games table yet
        return 0


def run(args: argparse.Namespace) -> int:
    rules = Rules(target=args.target)
    entrants = [parse_spec(s) for s in args.agents]   # read once, here
    if args.db is None:   # named from the tournament: the same one resumes, no other collides
        check_games(args.games)
        args.db = default_db_path(tournament_config(entrants, args.games, args.seed, rules))
    db = writable_file(args.db, "--db")    # both checked before any game is played
    if args.out:
        writable_dir(args.out, "--out")
    try:
        report = run_tournament(entrants, args.games, workers=args.workers, db_path=db,
                                seed=args.seed, rules=rules, progress=not args.no_progress,
                                bootstrap=args.bootstrap, anchor=args.anchor,
                                ray_address=args.ray)
    except KeyboardInterrupt:
        pairs = len(args.agents) * (len(args.agents) - 1) // 2
        print(f"\ninterrupted: {_stored(db)} of {pairs * args.games} games are stored in {db}; "
              "the same command resumes the tournament from there", file=sys.stderr)
        return 130
    print(report.format())
    if report.games_this_run:
        where = (f"{len(report.games_per_node)} Ray nodes" if args.ray is not None
                 else f"{args.workers} workers")
        print(f"\n{report.games_this_run} games in {report.elapsed_s:.1f} s "
              f"({report.games_per_s:.1f} games/s, {where}); results in {db}")
        if args.ray is not None:
            print("games per Ray node: " + ", ".join(
                f"{node} {n}" for node, n in sorted(report.games_per_node.items())))
    else:
        print(f"\nall {report.games} games were already in {db}")
    paths = report.save(args.out) if args.out else report.save(db.parent, stem=db.stem)
    print("wrote " + ", ".join(str(p) for p in paths))
    if args.open is not None:   # step through one of its games in the browser: `serve`,
        from cribenv.cli import main  # by the command table (the web table is a layer above)

        return main(["serve", "--tournament-db", str(db), "--open", str(args.open)])
    return 0
