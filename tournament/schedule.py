"""Who plays whom, with which cards: the round-robin schedule of duplicate deals and its seeds.

Every pair of agents (A, B) plays ``games_per_pair`` (even) games: the deal sequences
``deal = 0 .. N/2 - 1``, each played twice, once per *seating* (seating 0: A in seat 0, B in
seat 1; seating 1: swapped). The game seed of a deal, ``deal_seed(seed, deal)``, fixes every
card of the game (each hand's shuffle and starter) and is the same for every pair, so all pairs
meet the same card sequences (common random numbers). Both seatings of a deal use the same
first-dealer *seat*, ``deal % 2``, so the cards a seat receives are the same in both: each agent
plays each card sequence of the deal once in each role, and each agent deals first in exactly
one of the two games (dealer advantage cancels within the unit, and the first-dealer seat
alternates over deals). Agents are built per game with
``agents.spec.build(entrant.bot, seed=agent_seed(game_seed, seat))`` (the entrant's spec read
once, :class:`agents.spec.AgentSpec`), so a game's result depends on its seed
and seating alone, never on worker scheduling.

>>> tasks = schedule(["random", "greedy", "expert"], games_per_pair=4, seed=7)
>>> len(tasks)
12
>>> [(t.deal, t.seating, [s.label for s in t.seats]) for t in tasks[:2]]
[(0, 0, ['random', 'greedy']), (0, 1, ['greedy', 'random'])]
>>> tasks[0].game_seed == tasks[1].game_seed == deal_seed(7, 0)
True
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# An entrant and its parse live with the bots' spec (agents.spec); re-exported from their old
# home here (tournament.schedule.AgentSpec, parse_spec), which stays.
from agents.spec import AgentSpec, parse_spec


def seed_from(*entropy: int) -> int:
    """A 63-bit seed mixed from non-negative ints (numpy's SeedSequence)."""
    state = np.random.SeedSequence([int(e) for e in entropy]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])


def deal_seed(seed: int, deal: int) -> int:
    """The game seed of duplicate deal ``deal`` of a tournament with seed ``seed``."""
    return seed_from(seed, deal, 0xC1B)


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent in ``seat`` of the game with seed ``game_seed``."""
    return seed_from(game_seed, seat, 0xA6E)


@dataclass(frozen=True)
class GameTask:
    """One game of the schedule."""

    pair: int
    agent_a: AgentSpec
    agent_b: AgentSpec
    deal: int
    seating: int
    game_seed: int
    first_dealer: int

    @property
    def seats(self) -> tuple[AgentSpec, AgentSpec]:
        """The entrants by seat: seating 0 puts A in seat 0, seating 1 swaps them."""
        return (self.agent_a, self.agent_b) if self.seating == 0 else (self.agent_b, self.agent_a)

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.agent_a.label, self.agent_b.label, self.deal, self.seating)


def schedule(specs: Sequence[AgentSpec | str], games_per_pair: int, seed: int) -> list[GameTask]:
    """Every game of the round robin, deal-major (a partial run covers all pairs evenly)."""
    entrants = [s if isinstance(s, AgentSpec) else parse_spec(s) for s in specs]
    check_games(games_per_pair)
    pairs = list(itertools.combinations(range(len(entrants)), 2))
    tasks = []
    for deal in range(games_per_pair // 2):
        gseed = deal_seed(seed, deal)
        for p, (i, j) in enumerate(pairs):
            for seating in (0, 1):
                tasks.append(GameTask(p, entrants[i], entrants[j], deal, seating, gseed,
                                      deal % 2))
    return tasks


MAX_GAMES_PER_PAIR = 10_000_000   # the schedule is held in memory; more would take weeks


def check_games(games_per_pair: int) -> None:
    """Raise ``ValueError`` unless ``games_per_pair`` is an even number from 2 to
    :data:`MAX_GAMES_PER_PAIR`."""
    if (not isinstance(games_per_pair, int) or not 2 <= games_per_pair <= MAX_GAMES_PER_PAIR
            or games_per_pair % 2):
        raise ValueError("games per pair must be an even number from 2 to "
                         f"{MAX_GAMES_PER_PAIR:,} (each deal is played twice, seats swapped), "
                         f"got {games_per_pair!r}")
