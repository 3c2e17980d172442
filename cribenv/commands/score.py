"""``cribenv score``: score a hand or a crib, with its breakdown."""

from __future__ import annotations

import argparse

from cribenv import cards
from cribenv.scoring import score_hand_breakdown


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Score a 4-card hand (or crib) with the starter, with every combination."
    parser.epilog = "Example: cribenv score 5H 5S 5C JD --starter 5D   (prints 29)"
    parser.add_argument("cards", nargs="+", help="the 4 cards of the hand, e.g. 5H 5S 5C JD "
                        "(ranks A23456789TJQK or 10, suits CDHS or ♣♦♥♠)")
    parser.add_argument("--starter", "-s", required=True, help="the starter card, e.g. 5D")
    parser.add_argument("--crib", action="store_true",
                        help="score as the crib (a flush needs all 5 cards)")


def run(args: argparse.Namespace) -> int:
    hand = cards.parse_distinct(" ".join(args.cards), count=4)
    starter = cards.parse(args.starter)
    if starter in hand:
        raise ValueError(f"the starter {cards.to_str(starter)} is also in the hand")
    breakdown = score_hand_breakdown(hand, starter, is_crib=args.crib)
    kind = "crib" if args.crib else "hand"
    print(f"{kind} {cards.to_str_many(hand)}  starter {cards.to_str(starter)}")
    for line in breakdown.describe():
        print("  " + line)
    return 0
