"""Bots that play Cribbage from environment observations, and the tournament runner.

    >>> from agents import make_agent
    >>> bot = make_agent("random", seed=0)
"""

from agents import ppo as _ppo  # noqa: F401  (registers "ppo:PATH")
from agents.base import Agent, RandomAgent, ViewAgent, available_agents, make_agent, register_agent
from agents.expert import ExpertAgent  # registers "expert"
from agents.greedy import GreedyAgent  # registers "greedy"

__all__ = ["Agent", "ExpertAgent", "GreedyAgent", "RandomAgent", "ViewAgent",
           "available_agents", "make_agent", "register_agent"]
