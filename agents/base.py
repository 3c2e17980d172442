"""The agent protocol and the registry behind :func:`make_agent`.

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


_REGISTRY: dict[str, Callable[..., Any]] = {}
# The module that registers each built-in agent, imported by its first look-up (so that
# ``import agents`` and a command's ``--help`` stay quick, and "random" never loads numba).
BUILT_IN_MODULES = {"cmd": "agents.external", "expert": "agents.expert",
                    "greedy": "agents.greedy", "openspiel": "agents.openspiel",
                    "ppo": "agents.ppo", "search": "agents.search"}


def register_agent(name: str, factory: Callable[..., Any]) -> None:
    """Make ``make_agent(name)`` build ``factory(seed=..., **kwargs)``."""
    _REGISTRY[name] = factory


def _registry(name: str | None = None) -> dict[str, Callable[..., Any]]:
    """The registry, with the built-in agent ``name`` registered (every one if ``None``)."""
    import importlib

    for key, module in BUILT_IN_MODULES.items():
        if name is None or name == key:
            importlib.import_module(module)
    return _REGISTRY


def available_agents() -> list[str]:
    """Names accepted by :func:`make_agent` (plus ``"ppo:PATH"``)."""
    return sorted(_registry())


def agent_spellings() -> list[str]:
    """Every way to name an agent, as a message lists them.

    >>> agent_spellings()[:3]
    ['expert', 'greedy', 'random']
    """
    import importlib

    simple = [n for n in available_agents() if n not in ("cmd", "openspiel", "ppo", "search")]
    shipped = importlib.import_module(BUILT_IN_MODULES["ppo"]).shipped_specs()
    return simple + [*shipped, "ppo:PATH", "search:BASE", "cmd:COMMAND", "openspiel:ALGO"]


def unknown_agent_message(spec: str) -> str:
    """The error for an agent spec nobody registered: every spelling, and the nearest.

    >>> print(unknown_agent_message("gredy")[:47])
    unknown agent 'gredy' (did you mean 'greedy'?):
    """
    import difflib

    names = agent_spellings()
    near = difflib.get_close_matches(spec.lower(), [n for n in names if n not in (
        "ppo:PATH", "search:BASE", "cmd:COMMAND", "openspiel:ALGO")], n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    listed = ", ".join(names).replace("ppo:PATH", "ppo:PATH (a policy file)").replace(
        "search:BASE", "search:BASE (e.g. search:ppo:shipped)").replace(
        "cmd:COMMAND", "cmd:COMMAND (a program speaking the Cribbage Bot Protocol)").replace(
        "openspiel:ALGO", "openspiel:ALGO (OpenSpiel's search: openspiel:ismcts or "
        "openspiel:mcts)")
    return f"unknown agent {spec!r}{hint}: expected one of {listed}"


def make_agent(spec: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """Build an agent from a spec: ``"random"``, ``"greedy"``, ``"expert"``, ``"ppo:PATH"``,
    ``"search:BASE"`` (:mod:`agents.search`, e.g. ``"search:ppo:shipped?playouts=600"``),
    ``"cmd:COMMAND"`` (a program speaking the Cribbage Bot Protocol, :mod:`agents.external`),
    ``"openspiel:ALGO"`` (OpenSpiel's ISMCTS or MCTS, :mod:`agents.openspiel`).

    ``seed`` makes every random choice of the agent reproducible.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    name, _, arg = spec.partition(":")
    name = name.lower()
    if name.startswith("cmd[") and name.endswith("]"):   # cmd[move=2,game=60]:COMMAND
        arg, name = f"[{name[4:-1]}]{arg}", "cmd"
    registry = _registry(name)
    if name in ("search", "cmd", "openspiel"):
        return registry[name](arg, seed=seed, **kwargs)
    if name == "ppo":
        if not arg:
            raise ValueError("'ppo:PATH' needs the path of a policy file, e.g. "
                             "ppo:runs/quick/policy.safetensors (or ppo:shipped)")
        return registry["ppo"](arg, seed=seed, **kwargs)
    factory = registry.get(name)
    if factory is None:
        raise ValueError(unknown_agent_message(spec))   # (its listing loads every agent)
    if arg or spec.endswith(":"):
        raise ValueError(f"agent {spec!r}: {name!r} takes nothing after ':' (only ppo:PATH "
                         f"does); write {name!r}")
    agent = factory(seed=seed, **kwargs)
    return agent


register_agent("random", RandomAgent)
