"""Fuzz the AEC env: random games under random rules, legal and illegal actions, invariants
checked after every step.

    python -m cribenv.fuzz --seconds 60          # as long as you like; CI runs a few minutes
    python -m cribenv.fuzz --repro 12345         # replay one game, step by step

Each game has its own seed, drawn from ``--seed``; a violation prints that seed, and
``--repro SEED`` plays the same game again and prints every step. Checked after every step:
the mask is exactly the legal cards of the agent to act (zero for the others); an illegal card
(or a non-integer action) is refused and changes nothing; no card is in two places; the count
is 0..31; scores never fall and only the winning side reaches the target; rewards are
zero-sum; at the end the game's JSON record replays to the same scores. A failed check or any
other exception is a violation: the exit status is then 1 (0 when every game was clean).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from cribenv.aec import CribbageEnv
from cribenv.game import Game, IllegalActionError


def fuzz_game(seed: int, log=None) -> int:
    """Play one random game of seed ``seed``; raise ``AssertionError`` on a violation.
    Returns the number of steps."""
    rng = random.Random(seed)
    n = rng.choice((2, 3, 4))
    env = CribbageEnv(num_players=n, target=rng.choice((61, 121)),
                      reward=rng.choice(("win", "points")), episode=rng.choice(("game", "hand")),
                      skunks=rng.random() < 0.5, must_peg_out_exactly=rng.random() < 0.5)
    env.reset(seed=seed)
    game = env.game
    assert game is not None
    steps = 0
    scores = list(game.scores)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
            continue
        legal = game.legal_actions()
        for other in env.agents:
            mask = env.observe(other)["action_mask"]
            want = legal if other == agent else []
            assert sorted(np.flatnonzero(mask).tolist()) == want, (other, mask, want)
        if rng.random() < 0.2:   # an illegal card or a bad type: refused, nothing changes
            bad = rng.choice([c for c in range(52) if c not in legal] + [52, -1, 3.0, "5"])
            before = (len(game.actions), list(game.scores), game.count)
            try:
                env.step(bad)
            except (IllegalActionError, TypeError):
                pass
            else:
                raise AssertionError(f"illegal action {bad!r} was accepted")
            assert (len(game.actions), list(game.scores), game.count) == before
        card = rng.choice(legal)
        if log:
            log(f"{agent} lays {card} (legal {legal}) scores {game.scores}")
        env.step(card)
        steps += 1
        assert 0 <= game.count <= 31
        held = [c for h in game.hands for c in h] + list(game.crib) + \
            [c for _, c in game.played]
        assert len(held) == len(set(held)), held
        assert all(a <= b for a, b in zip(scores, game.scores)), (scores, game.scores)
        scores = list(game.scores)
        assert abs(sum(env.rewards.values())) < 1e-9, env.rewards
    target = env.rules.target
    at_target = [i for i, s in enumerate(game.scores) if s >= target]
    assert len(at_target) <= 1 and (not at_target or at_target == [game.winner]), game.scores
    assert Game.from_json(game.to_json()).scores == game.scores
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cribenv.fuzz", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to fuzz (10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the game seeds (0)")
    parser.add_argument("--repro", type=int, metavar="SEED", help="replay one game verbosely")
    args = parser.parse_args(argv)
    if args.repro is not None:
        try:
            steps = fuzz_game(args.repro, log=print)
        except Exception as exc:   # a failed check or a crash: both are violations
            print(f"violation in game seed {args.repro}: {exc!r}", file=sys.stderr)
            return 1
        print(f"game {args.repro}: {steps} steps, no violation")
        return 0
    seeds = random.Random(args.seed)
    games = steps = 0
    started = time.perf_counter()
    while time.perf_counter() - started < args.seconds:
        seed = seeds.randrange(2**31)
        try:
            steps += fuzz_game(seed)
        except Exception as exc:   # a failed check or a crash: both are violations
            print(f"violation in game seed {seed} after {games:,} clean games: {exc!r}; "
                  f"replay it with python -m cribenv.fuzz --repro {seed}", file=sys.stderr)
            return 1
        games += 1
    print(f"{games:,} games, {steps:,} steps, 0 violations "
          f"({time.perf_counter() - started:.0f} s, --seed {args.seed})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
