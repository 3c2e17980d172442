"""Tianshou 2: the Cribbage AEC env as a ``tianshou.env.PettingZooEnv`` whose rewards reach the
agents that earned them.

Tianshou's multi-agent path (``MultiAgentOffPolicyAlgorithm`` / ``MultiAgentOnPolicyAlgorithm``)
stores one row per decision and gives each agent's algorithm the reward column of that agent on
the rows where it acted (``obs.agent_id``). Its stock ``PettingZooEnv`` fills a row with the
rewards of that one env step, so whatever an agent earns on another agent's step is lost to it:
the pegging points the opponent concedes, the show counted on the dealer's turn, and the final
result of every agent except the one that made the last move (the loser's -1 usually lands on
the winner's row).

:class:`CribbageTianshouEnv` credits instead, on an agent's row, everything that agent earned
since its previous row was written: what the others' moves gave or cost it meanwhile, plus what
its own move scored. When the game ends, every other agent gets one **closing step** (its final
observation, an all-True mask, the action ignored) whose row carries its final result; the
episode's last row is marked ``terminated``. So over an episode the rewards on an agent's rows
add up to its total reward in the AEC env (``reward="win"``: +1 / -1; ``reward="points"``: its
final point differential), and each row's reward sits in that agent's own column (zero in the
others'), so Tianshou's per-agent episode returns are exact too.

Tianshou keeps one termination flag per row: it is set on the episode's last row only (a
closing row, or the final move when no other agent is left to close). Agents' returns are
computed on their own rows; rows of different agents interleave in the buffer, as always in
Tianshou's multi-agent path.

Usage::

    from tianshou.env import DummyVectorEnv
    from cribenv.integrations.tianshou import CribbageTianshouEnv
    envs = DummyVectorEnv([lambda: CribbageTianshouEnv(target=61) for _ in range(4)])

``examples/tianshou_dqn.py`` trains a masked DQN against a random player with it. For one
learner against a bot at the batched engine's speed, see
:class:`cribenv.integrations.tianshou_batched.BatchedTianshouVectorEnv` (a Tianshou vector env).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tianshou.env import PettingZooEnv

import cribenv

__all__ = ["CribbageTianshouEnv"]


class CribbageTianshouEnv(PettingZooEnv):
    """``PettingZooEnv`` for Cribbage with every agent credited its own rewards (see the module).

    Args:
        env: a Cribbage AEC env (default: ``cribenv.env(**env_kwargs)``); dict observations.
        env_kwargs: passed to :func:`cribenv.env` (``num_players``, ``target``, ``reward``...).

    Observations are Tianshou's multi-agent dict: ``agent_id`` (the agent to decide), ``obs``
    (its float32 vector) and ``mask`` (bool, its legal cards; all True on a closing step).
    """

    def __init__(self, env: Any = None, **env_kwargs: Any) -> None:
        if env is not None and env_kwargs:
            raise TypeError("pass either an env or keyword arguments for cribenv.env(), not both")
        env = env if env is not None else cribenv.env(**env_kwargs)
        self._pending: dict[str, float] = {}
        self._closing: list[str] = []
        super().__init__(env)   # calls reset()

    # --------------------------------------------------------------- the Tianshou env API
    def reset(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        self.env.reset(*args, **kwargs)
        self._pending = dict.fromkeys(self.agents, 0.0)
        self._closing = []
        return self._decision(self.env.agent_selection), {}

    def step(self, action: Any) -> tuple[dict, np.ndarray, bool, bool, dict]:
        rew = np.zeros(len(self.agents))
        if self._closing:   # a closing step: the agent's final result; its action is ignored
            agent = self._closing.pop(0)
            rew[self.agent_idx[agent]] = self._pending.pop(agent)
            done = not self._closing
            nxt = agent if done else self._closing[0]
            return self._decision(nxt, closing=True), rew, done, False, {}
        agent = self.env.agent_selection
        self.env.step(action)
        for a, r in self.env.rewards.items():   # this step's rewards, every agent's
            self._pending[a] += r
        rew[self.agent_idx[agent]] = self._pending[agent]
        self._pending[agent] = 0.0
        if all(self.env.terminations.values()) or all(self.env.truncations.values()):
            n = len(self.agents)
            i = self.agent_idx[agent]
            self._closing = [self.agents[(i + k) % n] for k in range(1, n)]
            return self._decision(self._closing[0], closing=True), rew, False, False, {}
        return self._decision(self.env.agent_selection), rew, False, False, {}

    # --------------------------------------------------------------- helpers
    def _decision(self, agent: str, closing: bool = False) -> dict[str, Any]:
        obs = self.env.observe(agent)
        mask = np.ones(52, bool) if closing else obs["action_mask"].astype(bool)
        return {"agent_id": agent, "obs": obs["observation"], "mask": mask}
