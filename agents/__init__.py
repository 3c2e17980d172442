"""Bots that play Cribbage from a seat's view (or an environment observation) and the game
loop. The tournament and the ladder are :mod:`tournament`, the web table :mod:`webtable`
(their old names here, ``agents.tournament``, ``agents.ladder`` and ``agents.web``, still
import, with a deprecation warning: :mod:`agents._moved`).

A spec (``"search:ppo:shipped?playouts=600"``) is read and built in :mod:`agents.spec`.
A bot is ``choose(view, legal) -> card``; ``act(observation)`` adapts it to the RL boundary
(:mod:`agents.base`). :func:`agents.arena.run_game` drives a game with bots and policies.

    >>> from agents import make_agent
    >>> bot = make_agent("random", seed=0)
"""

from __future__ import annotations

import importlib
from typing import Any

from agents import _moved

# name -> the module that defines it, imported on first use (``import agents`` stays quick)
_HOMES = {"Agent": "agents.base", "Bot": "agents.base", "RandomAgent": "agents.base",
          "ViewAgent": "agents.base", "ask": "agents.base", "AgentSpec": "agents.spec",
          "BotSpec": "agents.spec", "available_agents": "agents.spec",
          "make_agent": "agents.spec", "register_agent": "agents.spec",
          "ExpertAgent": "agents.expert", "GreedyAgent": "agents.greedy",
          "SearchAgent": "agents.search"}
__all__ = sorted(_HOMES)
_moved.install()


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
