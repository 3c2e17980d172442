"""A Cribbage bot speaking the Cribbage Bot Protocol, in plain Python (no cribenv import).

Run it in a tournament: ``cribenv tournament --agents "cmd:python examples/cbp_bot.py" expert``.
It keeps the four cards that score most on their own, and lays the card that pegs most now
(the highest on a tie). ``docs/protocol.md`` describes every message.
"""

import itertools
import json
import sys

RANKS = "A23456789TJQK"


def rank(card):
    return RANKS.index(card[:-1].replace("10", "T")) + 1


def value(card):
    return min(rank(card), 10)


def hand_points(cards):
    """Fifteens, pairs, runs and a flush of a few cards (no starter)."""
    ranks = sorted(rank(c) for c in cards)
    points = 2 * sum(sum(value(c) for c in combo) == 15
                     for k in range(2, len(cards) + 1)
                     for combo in itertools.combinations(cards, k))
    points += 2 * sum(a == b for a, b in itertools.combinations(ranks, 2))
    for k in range(len(ranks), 2, -1):
        runs = [c for c in itertools.combinations(ranks, k)
                if all(c[i] + 1 == c[i + 1] for i in range(k - 1))]
        if runs:
            points += k * len(runs)
            break
    if len(cards) >= 4 and len({c[-1] for c in cards}) == 1:
        points += len(cards)
    return points


def peg_points(series, card, count):
    """What laying ``card`` scores in the play now."""
    total = count + value(card)
    points = 2 if total in (15, 31) else 0
    ranks = [rank(c) for c in series] + [rank(card)]
    same = 1
    while same < len(ranks) and ranks[-1 - same] == ranks[-1]:
        same += 1
    points += {2: 2, 3: 6, 4: 12}.get(same, 0)
    for k in range(len(ranks), 2, -1):
        tail = sorted(ranks[-k:])
        if all(tail[i] + 1 == tail[i + 1] for i in range(k - 1)):
            return points + k
    return points


def decide(msg):
    legal = msg["legal"]
    if msg["phase"] == "discard":   # lay away a card that is not in the best four to keep
        best = max(itertools.combinations(msg["hand"], 4), key=hand_points)
        return next(c for c in legal if c not in best)
    series = [card for _, card in msg["series"]]
    return max(legal, key=lambda c: (peg_points(series, c, msg["count"]), rank(c)))


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            answer = {"type": "hello", "name": "cbp-greedy", "version": 1}
        elif msg["type"] == "decide":
            answer = {"type": "play", "card": decide(msg)}
        elif msg["type"] == "quit":
            return
        else:   # new_game, events, game_over, and any type a later version adds
            continue
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
