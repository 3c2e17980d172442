"""The opponent pool of both self-play trainers: frozen snapshots of the learner (the newest
``size`` kept), with the SB3 trainer's heuristic bots, and the rule that draws the learner's
next opponent (:class:`OpponentPool`).

Two sampling rules, the ``rule`` of the pool:

* ``"uniform"`` (the SB3 trainer, :func:`sb3_pool`): a heuristic bot with probability
  ``heuristic_share`` (always while there is no snapshot yet), else one of the snapshots,
  uniformly; drawn with a :class:`random.Random`, one episode at a time (:class:`PoolOpponent`).
* ``"priority"`` (the self-play trainer: prioritised fictitious self-play, "hard" weighting):
  snapshot ``j`` is drawn with probability proportional to ``(1 - w_j) ** priority``, where
  ``w_j = (wins + 1) / (games + 2)`` is the learner's win rate against it so far (a new
  snapshot starts at 1/2), so the snapshots the learner still loses to are played most; drawn
  with a :class:`numpy.random.Generator`, a batch of games at a time. No heuristic bots (the
  self-play trainer's expert plays outside the pool).

Each snapshot is a policy file, played as what ``load(path, kept)`` returns (``kept``: how many
snapshots the pool holds when it is added): the SB3 trainer's sampling :class:`PPOAgent`, the
self-play trainer's torch actor (:func:`train.selfplay_rollout.frozen_actor`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents import make_agent
from agents.ppo import PPOAgent
from train.config import TrainConfig

RULES = ("uniform", "priority")


class OpponentPool:
    """Frozen snapshots of the learner (plus heuristic bots under the ``uniform`` rule), an
    opponent drawn by the pool's ``rule`` (see the module docstring).

    Opponents are named: a snapshot by its file's name, a heuristic bot by its spec (``#2``,
    ``#3`` ... added to repeats). :meth:`sample` draws names, :meth:`player` gives the one that
    plays a name, :meth:`record` counts the learner's results against a snapshot.

        >>> pool = OpponentPool(size=2, load=lambda path, kept: None, priority=2.0)
        >>> pool.names, pool.wins, pool.games = ["a", "b"], [9.0, 0.0], [10.0, 0.0]
        >>> [round(float(p), 3) for p in pool.probabilities()]
        [0.1, 0.9]
    """

    def __init__(self, size: int, load: Callable[[Path, int], Any], rule: str = "priority",
                 priority: float = 1.0, heuristics: Sequence[Any] = (),
                 heuristic_share: float = 0.0) -> None:
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        if heuristics and rule != "uniform":
            raise ValueError("heuristic bots join the pool under the 'uniform' rule only")
        self.size = size
        self.load = load
        self.rule = rule
        self.priority = priority
        self.heuristic_share = heuristic_share
        self.heuristics = list(heuristics)
        self.heuristic_names: list[str] = []
        for bot in self.heuristics:
            name = str(getattr(bot, "name", "bot"))
            label, k = name, 1
            while label in self.heuristic_names:
                k += 1
                label = f"{name}#{k}"
            self.heuristic_names.append(label)
        # the snapshots, oldest first: one column each
        self.names: list[str] = []
        self.policies: list[Any] = []
        self.wins: list[float] = []
        self.games: list[float] = []

    def add(self, path: str | Path, wins: float = 0.0, games: float = 0.0) -> None:
        """Add a policy file as a snapshot (with the learner's results against it so far),
        dropping the oldest beyond ``size``."""
        path = Path(path)
        policy = self.load(path, len(self.names))
        self.names.append(path.name)
        self.policies.append(policy)
        self.wins.append(wins)
        self.games.append(games)
        while len(self.names) > self.size:
            for column in (self.names, self.policies, self.wins, self.games):
                column.pop(0)

    def probabilities(self) -> np.ndarray:
        """The probability of each snapshot when a snapshot is drawn."""
        if self.rule == "uniform":
            return np.full(len(self.names), 1 / len(self.names))
        w = (np.array(self.wins) + 1) / (np.array(self.games) + 2)
        weight = (1 - w) ** self.priority + 1e-6
        return weight / weight.sum()

    def sample(self, rng: random.Random | np.random.Generator, n: int) -> list[str]:
        """The names of the next ``n`` opponents, drawn by the pool's rule with ``rng`` (a
        :class:`random.Random` for ``uniform``, a :class:`numpy.random.Generator` for
        ``priority``)."""
        if self.rule == "priority":
            return [self.names[i] for i in rng.choice(len(self.names), n, p=self.probabilities())]
        return [self._uniform(rng) for _ in range(n)]

    def _uniform(self, rng: random.Random) -> str:
        use_bot = self.heuristics and (not self.names or rng.random() < self.heuristic_share)
        return rng.choice(self.heuristic_names if use_bot else self.names)

    def player(self, name: str):
        """The snapshot's policy, or the heuristic bot, that plays as ``name``."""
        if name in self.names:
            return self.policies[self.names.index(name)]
        return self.heuristics[self.heuristic_names.index(name)]

    def record(self, name: str, learner_won: float) -> None:
        """Count a game of the learner against snapshot ``name`` (if the pool still holds it)."""
        if name in self.names:
            j = self.names.index(name)
            self.wins[j] += learner_won
            self.games[j] += 1

    def state(self) -> list[dict[str, Any]]:
        """The snapshots and the learner's results against them, as a checkpoint stores them."""
        return [{"name": n, "wins": w, "games": g}
                for n, w, g in zip(self.names, self.wins, self.games)]


def sb3_pool(config: TrainConfig, seed: int) -> OpponentPool:
    """The SB3 trainer's pool: the ``uniform`` rule over ``config.heuristics`` (bot ``i``
    seeded ``seed + i``) and the newest ``config.pool_size`` snapshots, each played by
    sampling from its policy (seeded ``seed + 1000 + kept``)."""
    def load(path: Path, kept: int) -> PPOAgent:
        return PPOAgent(path, seed=seed + 1000 + kept, sample=True)

    return OpponentPool(config.pool_size, load, rule="uniform",
                        heuristics=[make_agent(spec, seed=seed + i)
                                    for i, spec in enumerate(config.heuristics)],
                        heuristic_share=config.heuristic_share)


class PoolOpponent:
    """The opponent of one environment: a new pool member for every episode."""

    name = "pool"

    def __init__(self, pool: OpponentPool, seed: int) -> None:
        self.pool = pool
        self.rng = random.Random(seed)
        self.current = None

    def reset(self) -> None:
        self.current = self.pool.player(self.pool.sample(self.rng, 1)[0])
        reset = getattr(self.current, "reset", None)
        if reset is not None:
            reset()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(observation)
