"""The opponent pool of self-play: frozen snapshots of the learner plus heuristic bots.

Each episode the learner's opponent is drawn afresh: a heuristic bot with probability
``config.heuristic_share`` (always while there is no snapshot yet), else one of the last
``config.pool_size`` snapshots, uniformly. Snapshots play by sampling from their policy.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from agents import make_agent
from agents.ppo import PPOAgent
from train.config import TrainConfig


class OpponentPool:
    """Frozen snapshots of the learner plus heuristic bots, sampled per episode."""

    def __init__(self, config: TrainConfig, seed: int) -> None:
        self.config = config
        self.heuristics = [make_agent(spec, seed=seed + i)
                           for i, spec in enumerate(config.heuristics)]
        self.snapshot_paths: list[str] = []
        self.snapshots: list[PPOAgent] = []
        self._seed = seed

    def add_snapshot(self, path: str | Path) -> None:
        """Add a policy file to the pool, dropping the oldest beyond ``config.pool_size``."""
        agent = PPOAgent(path, seed=self._seed + 1000 + len(self.snapshot_paths), sample=True)
        self.snapshot_paths.append(str(path))
        self.snapshots.append(agent)
        while len(self.snapshots) > self.config.pool_size:
            self.snapshot_paths.pop(0)
            self.snapshots.pop(0)

    def sample(self, rng: random.Random):
        """The opponent of the next episode (see the module docstring for the rule)."""
        use_bot = self.heuristics and (not self.snapshots
                                       or rng.random() < self.config.heuristic_share)
        if use_bot:
            return rng.choice(self.heuristics)
        return rng.choice(self.snapshots)


class PoolOpponent:
    """The opponent of one environment: a new pool member for every episode."""

    name = "pool"

    def __init__(self, pool: OpponentPool, seed: int) -> None:
        self.pool = pool
        self.rng = random.Random(seed)
        self.current = None

    def reset(self) -> None:
        self.current = self.pool.sample(self.rng)
        reset = getattr(self.current, "reset", None)
        if reset is not None:
            reset()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(observation)
