"""Differential test of the batched engine: VectorGame against Game, step by step.

Plays random games (uniform over the legal cards) with :class:`cribenv.vector.VectorGame` and,
beside it, one :class:`cribenv.game.Game` per seed, stepping both with the same cards, and checks
after every step: the seat to act, the legal cards, the phase, dealer, hand number, count and
scores, the points of the step's events (the scores' change, where every unit scores), and at the
end the winner and game points; observations are compared with ``encode(game.view(seat))`` for a
sample of steps (``--obs-rate``, default every 20th game-step; a random seat's view, the seat to
act or another) and for every final position (a random seat's view). ``tests/test_vector.py``
runs 10^5 games through :func:`check_games`; this script runs more (10^6 by default) over every
player count, target and exact peg-out setting::

    python scripts/vector_differential.py --games 1000000 --seed 0
"""

from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time

import numpy as np

from cribenv.game import Game, GameOver, Played, Rules, SeriesEnd, ShowScored, StarterTurned
from cribenv.observation import encode
from cribenv.vector import VectorGame

# every combination the 10^6-game run cycles through: (players, target, must_peg_out_exactly)
CONFIGS = list(itertools.product((2, 3, 4), (121, 61), (False, True)))
_CARD_BITS = np.int64(1) << np.arange(52, dtype=np.int64)


def _event_points(game: Game, events: list, sides: int) -> list[int]:
    """Points the step's events award to each side (the scoring units, in full)."""
    pts = [0] * sides
    for ev in events:
        kind = type(ev)
        if kind is Played or kind is SeriesEnd or kind is ShowScored:
            if ev.points:
                pts[game.side_of(ev.seat)] += ev.points
        elif kind is StarterTurned and ev.heels:
            pts[game.side_of(ev.dealer)] += ev.heels
    return pts


def check_games(rules: Rules, seeds: np.ndarray, *, first_dealer: int | None = None,
                max_hands: int | None = None, obs_rate: float = 0.05, rng_seed: int = 0) -> int:
    """Play ``len(seeds)`` random games both ways and compare them; returns the number of
    decisions checked. Raises AssertionError naming the game, seed and step on a difference."""
    # the games' event logs are millions of tuples the cyclic collector would walk again and
    # again (a fifth of the time); they hold no cycles
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_games(rules, seeds, first_dealer, max_hands, obs_rate, rng_seed)
    finally:
        if enabled:
            gc.enable()


def _check_games(rules: Rules, seeds: np.ndarray, first_dealer: int | None,
                 max_hands: int | None, obs_rate: float, rng_seed: int) -> int:
    seeds = [int(s) for s in seeds]
    num = len(seeds)
    games = [Game(rules, seed=s, first_dealer=first_dealer, max_hands=max_hands) for s in seeds]
    vg = VectorGame(rules, seeds, first_dealer=first_dealer, max_hands=max_hands)
    rng = np.random.default_rng(rng_seed)
    sides = rules.num_sides
    every_unit_scores = not rules.must_peg_out_exactly
    active = list(range(num))
    decisions = 0
    step = 0

    def fail(i: int, what: str, want: object, got: object) -> None:
        raise AssertionError(f"{rules} first_dealer={first_dealer} max_hands={max_hands}: game "
                             f"{i} (seed {seeds[i]}), step {step}: {what}: Game {want!r}, "
                             f"VectorGame {got!r}")

    def compare_state(rows: list[int]) -> None:
        to_act = vg.to_act.tolist()
        phase = vg.phase.tolist()
        dealer = vg.dealer.tolist()
        hand_no = vg.hand_number.tolist()
        count = vg.count.tolist()
        scores = vg.scores.tolist()
        for i in rows:
            g = games[i]
            cp = g.current_player
            if (-1 if cp is None else cp) != to_act[i]:
                fail(i, "seat to act", cp, to_act[i])
            if int(g.phase) != phase[i] or g.dealer != dealer[i] or g.hand_number != hand_no[i] \
                    or g.count != count[i] or g.scores != scores[i]:
                fail(i, "phase, dealer, hand, count, scores",
                     (int(g.phase), g.dealer, g.hand_number, g.count, g.scores),
                     (phase[i], dealer[i], hand_no[i], count[i], scores[i]))

    def compare_observations(rows: list[int], seats: np.ndarray) -> None:
        obs = vg.observe(seats)
        for i in rows:
            want = encode(games[i].view(int(seats[i])))
            if not np.array_equal(want, obs[i]):
                diff = np.flatnonzero(want != obs[i]).tolist()
                fail(i, f"observation of seat {seats[i]} differs at {diff}", want[diff].tolist(),
                     obs[i][diff].tolist())

    n = rules.num_players
    while active:
        compare_state(active)
        legal = (vg.legal_mask() @ _CARD_BITS).tolist()    # each game's legal cards as bits
        for i in active:
            bits = 0
            for c in games[i].legal_actions():
                bits |= 1 << c
            if bits != legal[i]:
                fail(i, "legal cards", games[i].legal_actions(),
                     [c for c in range(52) if legal[i] >> c & 1])
        if obs_rate > 0:
            sample = [i for i in active if rng.random() < obs_rate]
            if sample:
                seats = np.where(rng.random(num) < 0.5, np.maximum(vg.to_act, 0),
                                 rng.integers(n, size=num))
                compare_observations(sample, seats)
        before = vg.scores.tolist()
        actions = vg.random_actions(rng)
        vg.step(actions)
        step += 1
        decisions += len(active)
        after = vg.scores.tolist()
        acts = actions.tolist()
        for i in active:
            events = games[i].step(acts[i])
            if every_unit_scores:
                gained = [a - b for a, b in zip(after[i], before[i])]
                pts = _event_points(games[i], events, sides)
                if pts != gained:
                    fail(i, "points of the step's events", pts, gained)
            if events and type(events[-1]) is GameOver:
                over = events[-1]
                if over.winner != vg.winner[i] or over.game_points != vg.game_points[i]:
                    fail(i, "winner, game points", (over.winner, over.game_points),
                         (int(vg.winner[i]), int(vg.game_points[i])))
        active = [i for i in active if games[i].current_player is not None]
    compare_state(list(range(num)))
    for i, g in enumerate(games):
        if (-1 if g.winner is None else g.winner) != vg.winner[i] or \
                g.game_points != vg.game_points[i]:
            fail(i, "final winner, game points", (g.winner, g.game_points),
                 (int(vg.winner[i]), int(vg.game_points[i])))
    compare_observations(list(range(num)), rng.integers(n, size=num))   # the final positions
    return decisions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1_000_000, help="games in all")
    parser.add_argument("--seed", type=int, default=0, help="first game seed (and action seed)")
    parser.add_argument("--chunk", type=int, default=2000, help="games stepped together")
    parser.add_argument("--obs-rate", type=float, default=0.05,
                        help="share of game-steps whose observation is compared")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    from tqdm import tqdm

    start = time.perf_counter()
    decisions = 0
    done = 0
    seed = args.seed
    with tqdm(total=args.games, unit="game", disable=args.no_progress) as bar:
        for k in itertools.count():
            if done >= args.games:
                break
            players, target, exact = CONFIGS[k % len(CONFIGS)]
            size = min(args.chunk, args.games - done)
            rules = Rules(num_players=players, target=target, must_peg_out_exactly=exact)
            # a chunk in four also skips the cut (first_dealer), one in eight is one hand only
            first_dealer = (k // len(CONFIGS)) % players if k % 4 == 3 else None
            max_hands = 1 if k % 8 == 5 else None
            seeds = np.arange(seed, seed + size)
            decisions += check_games(rules, seeds, first_dealer=first_dealer,
                                     max_hands=max_hands, obs_rate=args.obs_rate,
                                     rng_seed=args.seed + k)
            seed += size
            done += size
            bar.update(size)
            bar.set_postfix(decisions=decisions)
    elapsed = time.perf_counter() - start
    print(f"{done} games, {decisions} decisions: VectorGame equals Game step by step "
          f"({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
