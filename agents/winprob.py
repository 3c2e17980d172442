"""The chance to win a 2-player game from the scores at the start of a hand: a table, and the
command that rebuilds it.

``dealer_wins(d, p, target)`` is the probability that the seat about to deal, with ``d`` points
against the pone's ``p``, wins. It is estimated from hands of self-play: each hand is kept as
the order in which its points were pegged and shown (the dealer's heels, every card and Go in
the play, then the pone's hand, the dealer's hand and the crib), and the table solves

    W(d, p) = mean over hands [ the dealer reaches the target first
                                + neither does: 1 - W(p + pone's points, d + dealer's points) ]

from the highest scores down (the deal passes to the pone; every hand pegs a point at least, so
the sum of the scores rises). A race inside a hand is exact: the points count in the order they
were scored. The same hands serve both targets (121 and 61). The hands are independent draws
from 0-0, one hand each (``Game(max_hands=1)``): play that changes with the score is not
modelled. Sampling error: the spread of the tables solved on four disjoint quarters of the hands
(``se`` in the file); then each row and column is made monotone (a point more never lowers the
chance).

>>> round(float(dealer_wins(0, 0)), 2) > 0.5     # the first dealer is ahead
True
>>> float(dealer_wins(120, 0)), float(dealer_wins(0, 120))   # 120 holds: his heels or a peg
(1.0, 0.0)
>>> float(seat_wins(60, 70, dealer=False)) == 1 - float(dealer_wins(70, 60))
True

Rebuild: ``python -m agents.winprob --hands 20000`` (a few minutes with ``ppo:shipped``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np

from cribenv.game import Game, Played, Rules, SeriesEnd, ShowScored, StarterTurned

__all__ = ["MIN_HANDS", "SCRATCH_TABLE_FILE", "TABLE_FILE", "dealer_wins", "hand_traces",
           "seat_wins", "solve", "solve_for_policy", "table_meta"]

TABLE_FILE = Path(__file__).resolve().parent / "data" / "winprob.npz"
#: The same table from the hands of ``ppo:scratch`` (the agent self-play trained from the rules
#: alone): what the search over the network's own models (``search:...?models=own``) reads.
SCRATCH_TABLE_FILE = TABLE_FILE.with_name("winprob-scratch.npz")
TARGETS = (121, 61)
#: the fewest hands a table is solved from (four quarters for its error)
MIN_HANDS = 8


def hand_traces(hands: int, agent: str = "ppo:shipped", seed: int = 0,
                progress: bool = False) -> list[list[tuple[int, int]]]:
    """``hands`` one-hand deals played by ``agent`` in both seats; each as its scoring in
    order, ``(0 dealer / 1 pone, points)``."""
    from agents import make_agent

    bots = [make_agent(agent, seed=seed), make_agent(agent, seed=seed + 1)]
    out = []
    it = range(hands)
    if progress:
        from tqdm import tqdm
        it = tqdm(it, desc="hands", unit="hand")
    for h in it:
        game = Game(Rules(num_players=2), seed=seed * 1_000_003 + h, max_hands=1)
        while game.current_player is not None:
            seat = game.current_player
            game.step(bots[seat].choose(game.view(seat), game.legal_actions()))
        dealer = game.dealer
        trace = []
        for e in game.events:
            if isinstance(e, StarterTurned) and e.heels:
                trace.append((0, e.heels))
            elif isinstance(e, (Played, SeriesEnd, ShowScored)) and e.points:
                seat = dealer if isinstance(e, ShowScored) and e.is_crib else e.seat
                trace.append((0 if seat == dealer else 1, e.points))
        out.append(trace)
    return out


def _firsts(traces: list[list[tuple[int, int]]], target: int) -> tuple[np.ndarray, ...]:
    """``(first_dealer, first_pone, total_dealer, total_pone)``: the event index at which each
    side's points in a hand reach ``x`` (``x`` = 0 .. target; a large number if never)."""
    n = len(traces)
    never = 10_000
    fd = np.full((n, target + 1), never, np.int32)
    fp = np.full((n, target + 1), never, np.int32)
    td = np.zeros(n, np.int64)
    tp = np.zeros(n, np.int64)
    for t, trace in enumerate(traces):
        got = [0, 0]
        for k, (side, pts) in enumerate(trace):
            lo = got[side] + 1
            got[side] += pts
            hi = min(got[side], target)
            if lo <= hi:
                (fd if side == 0 else fp)[t, lo:hi + 1] = k
        td[t], tp[t] = got
    fd[:, 0] = -1
    fp[:, 0] = -1
    return fd, fp, td, tp


def solve(traces: list[list[tuple[int, int]]], target: int = 121) -> np.ndarray:
    """``W[d, p]`` (``target x target``, float64) from the hands ``traces``: the chance that
    the dealer wins from ``d`` against ``p`` (not made monotone)."""
    fd, fp, td, tp = _firsts(traces, target)
    w = np.zeros((target, target))
    for total in range(2 * target - 2, -1, -1):
        for d in range(max(0, total - target + 1), min(total, target - 1) + 1):
            p = total - d
            need_d, need_p = target - d, target - p
            a, b = fd[:, need_d], fp[:, need_p]
            dealer_first = a < b
            pone_first = b < a
            rest = ~(dealer_first | pone_first)
            nd, np_ = d + td[rest], p + tp[rest]
            w[d, p] = (dealer_first.sum() + (1.0 - w[np_, nd]).sum()) / len(traces)
    return w


def monotone(w: np.ndarray) -> np.ndarray:
    """``w`` made non-decreasing in the dealer's score and non-increasing in the pone's (the
    running extremes, applied until nothing changes)."""
    w = w.copy()
    for _ in range(10):
        before = w.copy()
        w = np.maximum.accumulate(w, axis=0)
        w = np.minimum.accumulate(w, axis=1)
        if np.array_equal(w, before):
            break
    return w


@cache
def _table(target: int, table: Path = TABLE_FILE) -> np.ndarray:
    if target not in TARGETS:
        raise ValueError(f"the win-probability table covers targets {TARGETS}, not {target}")
    with np.load(table) as data:
        return data[f"w{target}"].astype(np.float64)


def dealer_wins(d, p, target: int = 121, table: Path = TABLE_FILE) -> np.ndarray:
    """The chance that the dealer of the hand about to start wins, with ``d`` points against
    the pone's ``p`` (arrays broadcast); a side at the target has won (1 or 0). ``table``: the
    file of the table (:data:`TABLE_FILE`, from ``ppo:shipped``'s hands, or
    :data:`SCRATCH_TABLE_FILE`, from ``ppo:scratch``'s)."""
    w = _table(target, Path(table))
    d = np.asarray(d, np.int64)
    p = np.asarray(p, np.int64)
    inside = w[np.minimum(d, target - 1), np.minimum(p, target - 1)]
    return np.where(d >= target, 1.0, np.where(p >= target, 0.0, inside))


def seat_wins(own, other, dealer, target: int = 121, table: Path = TABLE_FILE) -> np.ndarray:
    """The chance that a side with ``own`` points against ``other`` wins, when the next hand
    is dealt by it (``dealer`` True) or by the other side."""
    dealer = np.asarray(dealer, bool)
    return np.where(dealer, dealer_wins(own, other, target, table),
                    1.0 - dealer_wins(other, own, target, table))


def build(hands: int, agent: str, seed: int, out: Path, progress: bool = True,
          extra: dict | None = None) -> dict:
    """Play the hands, solve both targets and their errors, write ``out`` (atomically), with
    ``extra`` in its description (:func:`table_meta`)."""
    traces = hand_traces(hands, agent, seed, progress)
    arrays, meta = {}, {"hands": hands, "agent": agent, "seed": seed, **(extra or {})}
    for target in TARGETS:
        w = solve(traces, target)
        smooth = monotone(w)
        quarters = [solve(traces[k::4], target) for k in range(4)]
        se = np.std(quarters, axis=0, ddof=1) / 2.0
        arrays[f"w{target}"] = smooth.astype(np.float32)
        arrays[f"se{target}"] = se.astype(np.float32)
        meta[f"target {target}"] = {"dealer wins at 0-0": round(float(w[0, 0]), 4),
                                    "se at 0-0": round(float(se[0, 0]), 4),
                                    "mean se": round(float(se.mean()), 4),
                                    "max se": round(float(se.max()), 4),
                                    "largest monotone fix": round(float(
                                        np.abs(smooth - w).max()), 4)}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(out)
    return meta


def table_meta(table: Path) -> dict:
    """The description a table file was written with (its hands, agent, seed, errors); an
    empty dict where the file is damaged or holds none."""
    try:
        with np.load(table) as data:
            return json.loads(data["meta"].tobytes().decode())
    except (OSError, ValueError, KeyError, EOFError, TypeError, AttributeError):
        return {}


def solve_for_policy(policy: Path, hands: int, seed: int,
                     log: Callable[[str], None] = print) -> Path:
    """``winprob.npz`` beside the policy file ``policy``, solved from ``hands`` of its own
    hands (what ``search:ppo:POLICY?models=own&table=...`` values the ends by), marked with the
    file's SHA-256: solved again only when missing or made from another policy, so a run
    killed while solving it writes it when resumed."""
    table = policy.with_name("winprob.npz")
    sha = hashlib.sha256(policy.read_bytes()).hexdigest()
    if table.is_file() and table_meta(table).get("policy_sha256") == sha:
        return table
    log(f"solving the search's win-probability table from {hands:,} hands of the policy "
        f"against itself")
    build(hands, f"ppo:{policy}", seed, table, progress=False, extra={"policy_sha256": sha})
    log(f"search over its own models: \"search:ppo:{policy}?models=own&table={table}\"")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.winprob", description=(
        "Rebuild the 2-player win-probability table from one-hand deals of self-play."))
    parser.add_argument("--hands", type=int, default=20_000, help="deals to play (20000)")
    parser.add_argument("--agent", default="ppo:shipped", help="the agent in both seats")
    parser.add_argument("--seed", type=int, default=0, help="first deal's seed (0)")
    parser.add_argument("--out", type=Path, default=TABLE_FILE, help=f"(default {TABLE_FILE})")
    args = parser.parse_args(argv)
    if args.hands < MIN_HANDS:
        parser.error(f"--hands must be at least {MIN_HANDS} (four quarters for the error), got "
                     f"{args.hands}")
    try:
        from agents import make_agent
        make_agent(args.agent)
    except ValueError as exc:
        parser.error(f"--agent {args.agent!r}: {exc}")
    meta = build(args.hands, args.agent, args.seed, args.out)
    print(json.dumps(meta, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
