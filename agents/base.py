"""The agent protocol and the registry behind :func:`make_agent`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cribenv.game import PlayerView
from cribenv.observation import decode

Observation = dict[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a card id from an environment observation dict.

    ``observation`` is what ``env.observe(agent)`` returns: ``{"observation": vector,
    "action_mask": int8[52]}``. ``reset()`` (optional) is called before each game.
    """

    name: str

    def act(self, observation: Observation) -> int: ...


class ViewAgent:
    """Base for bots that reason about the decoded :class:`PlayerView`."""

    name = "view-agent"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Called before each game; bots with per-game memory override it."""

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError(f"{self.name}: no legal action in this observation (not its turn?)")
        if len(legal) == 1:
            return legal[0]
        return int(self.choose(decode(observation["observation"]), legal))

    def choose(self, view: PlayerView, legal: list[int]) -> int:  # pragma: no cover
        raise NotImplementedError


class RandomAgent(ViewAgent):
    """A uniformly random legal card."""

    name = "random"

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("random: no legal action in this observation (not its turn?)")
        return int(legal[self.rng.integers(legal.size)])


_REGISTRY: dict[str, Callable[..., Any]] = {}


def register_agent(name: str, factory: Callable[..., Any]) -> None:
    """Make ``make_agent(name)`` build ``factory(seed=..., **kwargs)``."""
    _REGISTRY[name] = factory


def available_agents() -> list[str]:
    """Names accepted by :func:`make_agent` (plus ``"ppo:PATH"``)."""
    return sorted(_REGISTRY)


def make_agent(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent from a spec: ``"random"``, ``"greedy"``, ``"expert"``, ``"ppo:PATH"``.

    ``seed`` makes every random choice of the agent reproducible.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    name, _, arg = spec.partition(":")
    if name == "ppo":
        if not arg:
            raise ValueError("'ppo:PATH' needs the path of a policy file, e.g. ppo:agents/x.pt")
        factory = _REGISTRY.get("ppo")
        if factory is None:
            raise ValueError("ppo agents need the training extra: pip install 'cribenv[train]'")
        return factory(arg, seed=seed, **kwargs)
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ValueError(f"unknown agent {spec!r}: expected one of "
                         f"{', '.join(available_agents())} or ppo:PATH")
    agent = factory(seed=seed, **kwargs)
    return agent


register_agent("random", RandomAgent)
