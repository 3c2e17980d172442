"""The agent protocol (bots and policies) and the random bot.

A spec is read and built by :mod:`agents.spec` (:func:`make_agent`, :func:`register_agent`,
re-exported here, their old home).

Two kinds of player, one loop (:func:`agents.arena.run_game`) for both:

* a **bot** reasons on what its seat may know: ``bot.choose(view, legal) -> card``, with
  ``view`` a :class:`~cribenv.game.PlayerView` and ``legal`` the sorted legal card ids. A bot
  is asked only when it has a choice (one legal card is laid for it), unless it sets
  ``asks_forced = True`` (a bot that draws a random number at every decision, or a human);
  :func:`ask` is that rule;
* a **policy** acts at the RL boundary, from the environment's observation dict:
  ``policy.act({"observation": vector, "action_mask": int8[52]}) -> card`` (an RL library's
  agent; the learned :class:`agents.ppo.PPOAgent` is both, with the same choices).

Every bot here (:class:`ViewAgent`) is also a policy: its ``act`` is the one adapter, it
decodes the observation into a view and asks ``choose`` by the same rule. The loop hands a view
to anything with ``choose`` and an observation dict to the rest.

    >>> from cribenv.game import Game, Rules
    >>> game = Game(Rules(), seed=0)
    >>> seat = game.current_player
    >>> bot = make_agent("greedy")
    >>> card = bot.choose(game.view(seat), game.legal_actions())
    >>> card in game.legal_actions()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

# the registry and the builder live in agents.spec; their old home re-exports them
from agents.spec import (  # noqa: F401
    BUILT_IN_MODULES,
    agent_spellings,
    available_agents,
    make_agent,
    register_agent,
    unknown_agent_message,
)
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


@runtime_checkable
class Bot(Protocol):
    """Anything that picks a card id from a :class:`PlayerView` and the legal cards.

    ``reset()`` (optional) is called before each game; ``asks_forced`` (optional, default
    False) asks for decisions with a single legal card too.
    """

    name: str

    def choose(self, view: PlayerView, legal: list[int]) -> int: ...


def ask(bot: Any, legal: list[int], view: Callable[[], PlayerView]) -> int:
    """The card ``bot`` lays with ``legal`` cards to choose from: the only legal card, unless the
    bot ``asks_forced``; else ``bot.choose(view(), legal)`` (``view`` builds the view only when
    it is needed)."""
    if len(legal) == 1 and not getattr(bot, "asks_forced", False):
        return legal[0]
    return bot.choose(view(), legal)


class ViewAgent:
    """Base for bots: implement ``choose(view, legal)``; ``act`` adapts it to observations."""

    name = "view-agent"
    asks_forced = False

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Called before each game; bots with per-game memory override it."""

    def act(self, observation: Observation) -> int:
        """The bot's card for an environment observation dict (decoded to a view)."""
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError(f"{self.name}: no legal action in this observation (not its turn?)")
        return int(ask(self, legal, lambda: decode(observation["observation"])))

    def choose(self, view: PlayerView, legal: list[int]) -> int:  # pragma: no cover
        raise NotImplementedError


class RandomAgent(ViewAgent):
    """A uniformly random legal card (one draw at every decision, forced ones included)."""

    name = "random"
    asks_forced = True

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("random: no legal action in this observation (not its turn?)")
        return int(legal[self.rng.integers(legal.size)])   # no view needed: no decoding

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        return legal[self.rng.integers(len(legal))]


register_agent("random", RandomAgent)
