"""``cribenv discard``: rank the 15 possible discards of a 2-player hand by expected value."""

from __future__ import annotations

import argparse

from cribenv import cards
from cribenv.checks import int_arg
from cribenv.discard import analyse_discards


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rank all 15 ways to throw 2 of 6 cards to the crib by exact expected value: the kept "
        "hand averaged over every possible starter, plus (dealer) or minus (pone) the expected "
        "crib over every pair the opponent could throw and every starter. Assumes the "
        "opponent's throw is a uniformly random pair of the unseen cards; pegging is ignored.")
    parser.epilog = "Example: cribenv discard 5H 5S JD 6C 4H KD --dealer"
    parser.add_argument("cards", nargs="+", help="the 6 cards dealt, e.g. 5H 5S JD 6C 4H KD")
    role = parser.add_mutually_exclusive_group(required=True)
    role.add_argument("--dealer", action="store_true", help="you deal: the crib is yours")
    role.add_argument("--pone", action="store_true", help="the opponent deals")
    parser.add_argument("--top", type=int_arg(1), default=15, metavar="N",
                        help="show the best N options (default 15, all of them)")


def run(args: argparse.Namespace) -> int:
    hand = cards.parse_distinct(" ".join(args.cards), count=6)
    options = analyse_discards(hand, is_dealer=args.dealer)
    sign = "+" if args.dealer else "-"
    print(f"{'rank':>4}  {'keep':<12} {'throw':<6} {'hand EV':>8} {'crib EV':>8} "
          f"{'= EV':>7}  hand range")
    for i, opt in enumerate(options[: args.top], 1):
        print(f"{i:>4}  {cards.to_str_many(opt.keep):<12} {cards.to_str_many(opt.throw):<6} "
              f"{opt.hand_ev:8.3f} {sign}{opt.crib_ev:7.3f} {opt.expected:7.3f}  "
              f"{opt.hand_min}-{opt.hand_max}")
    return 0
