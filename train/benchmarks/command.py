"""``cribenv bench``: parses the options and runs the sections of this package (hand scoring,
the rules engine, the environments, ...), each printing its rates beside baselines measured in
the same run."""

from __future__ import annotations

import argparse

from train import benchmarks


def configure(parser: argparse.ArgumentParser) -> None:
    names = benchmarks.section_names()
    parser.description = (
        "Measure hand scoring, the rules engine and the environments, and print each rate "
        "beside baselines measured in the same run: the plain reference scorer, PettingZoo's "
        "leduc_holdem_v4 and OpenSpiel's cribbage (through Shimmy).")
    parser.epilog = ("Example: cribenv bench --seconds 2 --json bench.json. Missing baselines "
                     "are skipped with a note (pip install -e '.[bench]').")
    parser.add_argument("--seconds", type=float, default=1.0, metavar="S",
                        help="time spent on each measurement (default 1.0)")
    parser.add_argument("--only", choices=names, action="append", metavar="SECTION",
                        help=f"run only this section: {', '.join(names)} (repeatable; default: "
                             f"{', '.join(benchmarks.section_names(default_only=True))})")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE as JSON")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress lines on stderr")


def run(args: argparse.Namespace) -> int:
    benchmarks.run_sections(float(args.seconds), args.only, json_path=args.json,
                            quiet=args.quiet)
    return 0
