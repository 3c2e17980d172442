"""Bots that play Cribbage from a seat's view (or an environment observation), the game loop
and the tournament runner.

A bot is ``choose(view, legal) -> card``; ``act(observation)`` adapts it to the RL boundary
(:mod:`agents.base`). :func:`agents.arena.run_game` drives a game with bots and policies.

    >>> from agents import make_agent
    >>> bot = make_agent("random", seed=0)
"""

from agents import ppo as _ppo  # noqa: F401  (registers "ppo:PATH")
from agents.base import (
    Agent,
    Bot,
    RandomAgent,
    ViewAgent,
    ask,
    available_agents,
    make_agent,
    register_agent,
)
from agents.expert import ExpertAgent  # registers "expert"
from agents.greedy import GreedyAgent  # registers "greedy"
from agents.search import SearchAgent  # registers "search:BASE"

__all__ = ["Agent", "Bot", "ExpertAgent", "GreedyAgent", "RandomAgent", "SearchAgent",
           "ViewAgent", "ask", "available_agents", "make_agent", "register_agent"]
