"""PettingZoo's standard wrapper stack (order enforcing, action bounds, illegal moves) in one
layer on the public AEC API: :class:`StandardWrapper`, what ``cribenv.env()`` returns around
:class:`cribenv.aec.CribbageEnv`.

    >>> import cribenv
    >>> env = cribenv.env()
    >>> type(env).__name__, env.unwrapped.metadata["name"]
    ('StandardWrapper', 'cribbage_v0')
"""

from __future__ import annotations

import logging
import operator
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from cribenv.checks import real_number

__all__ = ["StandardWrapper", "remove_dead_agent"]


# --------------------------------------------------------------------------------------------
# PettingZoo's standard wrapper stack, in one layer on the public AEC API
# --------------------------------------------------------------------------------------------
# ``cribenv.env()`` used to be PettingZoo's three wrappers (TerminateIllegalWrapper,
# AssertOutOfBoundsWrapper, OrderEnforcingWrapper). Stacked, they reach the env's state
# (``agent_selection``, ``terminations``, ...) through ``BaseWrapper.__getattr__``: a failed
# lookup plus a ``getattr`` per layer, some 36 times per agent step, and a pass-through frame
# per layer for every ``step`` / ``observe`` / ``last``: more than the game itself costs.
# Subclassing them to skip that meant reading and writing their private attributes, which
# PettingZoo renames at will. StandardWrapper does the three wrappers' jobs itself, in one
# layer, through the documented AEC API only: it subclasses the public ``BaseWrapper`` and
# reads and writes the env's public state (``agents``, ``agent_selection``, ``terminations``,
# ``truncations``, ``rewards``, ``infos`` and ``_cumulative_rewards``, the one underscore name
# of the AEC API: every env sets it and ``BaseWrapper`` passes it through). The checks, error
# messages, warnings and the illegal-move semantics are PettingZoo's. The dead agents' final
# ``None`` steps and the reward sums are cribenv's own code too (``remove_dead_agent``,
# ``CribbageEnv._add_rewards``), not AECEnv's underscore helpers. tests/test_aec_wrappers.py
# plays random games (legal, illegal and out-of-range actions, the final ``None`` steps, steps
# after the end, resets mid-game) through StandardWrapper and through PettingZoo's own stack
# and requires the same results, exceptions, warnings and state after every call; it also
# refuses any private PettingZoo name in cribenv/.

_LOG = logging.getLogger(__name__)

_BEFORE_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection",
                           "num_agents", "agents"})
_STATE_ATTRIBUTES = ("agent_selection", "agents", "terminations", "truncations", "infos",
                     "rewards", "_cumulative_rewards")
_ILLEGAL_MOVE = ("[WARNING]: Illegal move made, game terminating with current player losing. "
                 "\nobs['action_mask'] contains a mask of all legal moves that can be chosen.")
_STEP_AFTER_END = ("[WARNING]: step() called after all agents are terminated or truncated. "
                   "Should reset() first.")
_NO_MASK_IN_OBS = ("`action_mask` not found in dictionary observation: {}. Action mask must "
                   "either be in `observation['action_mask']` or `info['action_mask']` to use "
                   "TerminateIllegalWrapper.")
_NO_MASK_IN_INFO = ("`action_mask` not found in info for non-dictionary observation: {}. Action "
                    "mask must either be in observation['action_mask'] or info['action_mask'] "
                    "to use TerminateIllegalWrapper.")


def remove_dead_agent(env: AECEnv, action: Any, resume: Any) -> Any:
    """The step of a terminated or truncated agent, as ``AECEnv``'s helper for it does: refuse
    an action other than ``None``, drop the agent from ``agents`` and the state dicts, select
    the next dead agent or, when none is left, the agent that was selected when the dead agents
    started stepping (``resume``), and zero the rewards. Returns the new ``resume``."""
    if action is not None:
        raise ValueError("when an agent is dead, the only valid action is None")
    agent = env.agent_selection
    terminations, truncations = env.terminations, env.truncations
    assert terminations[agent] or truncations[agent], (
        "an agent that was not dead as attempted to be removed")
    del terminations[agent], truncations[agent], env.rewards[agent]
    del env._cumulative_rewards[agent], env.infos[agent]
    env.agents.remove(agent)
    dead = [a for a in env.agents if terminations[a] or truncations[a]]
    if dead:
        if resume is None:
            resume = agent
        env.agent_selection = dead[0]
    else:
        if resume is not None:
            env.agent_selection = resume
        resume = None
    rewards = env.rewards
    for a in rewards:
        rewards[a] = 0
    return resume


def _state_property(name: str) -> property:
    def fset(self: StandardWrapper, value: Any) -> None:
        setattr(self.env.unwrapped, name, value)

    # a C-level getter; before reset() ``_state`` is None, the lookup fails and
    # ``__getattr__`` raises PettingZoo's "cannot be accessed before reset"
    return property(operator.attrgetter("_state." + name), fset,
                    doc=f"``{name}`` of the wrapped env (``env.unwrapped``)")


class StandardWrapper(BaseWrapper):
    """PettingZoo's standard wrapper stack for an AEC env with action masks, in one layer.

    ``StandardWrapper(env, illegal_reward)`` behaves as
    ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(env,
    illegal_reward)))`` from :mod:`pettingzoo.utils.wrappers` (what :func:`env` used to
    return), built on the public AEC API (a :class:`pettingzoo.utils.BaseWrapper`) only:

    * **order** (``OrderEnforcingWrapper``): before the first ``reset()``, ``step``,
      ``observe``, ``render``, ``state`` and ``agent_iter`` raise ``AssertionError("reset()
      needs to be called before ...")`` and ``agents``, ``agent_selection``, ``rewards``,
      ``terminations``, ``truncations``, ``infos`` and ``num_agents`` raise ``AttributeError("...
      cannot be accessed before reset")``; ``step()`` once no agent is left logs PettingZoo's
      "step() called after all agents are terminated or truncated" warning and does nothing;
      ``agent_iter(max_iter)`` yields ``agent_selection`` while agents are left (at most
      ``max_iter`` times) and asserts that each ``next`` follows a ``step()`` or ``reset()``.
    * **bounds** (``AssertOutOfBoundsWrapper``): an action outside the agent's action space
      fails an assertion naming it (``None`` is the one action of an agent that is done).
    * **illegal moves** (``TerminateIllegalWrapper``): the mask is the last observed one of
      the agent to act (``observation["action_mask"]``, or ``info["action_mask"]`` for a
      non-dict observation; observed now if it was not). An action it forbids logs
      PettingZoo's "Illegal move made" warning and ends the episode: every agent terminated
      and truncated, ``illegal_reward`` to the agent that moved and 0 to the others (its
      cumulative reward restarting from 0), the dead agents then stepping ``None`` in
      ``agents`` order, handled here (the env never sees the illegal action).

    Everything else passes to the env (``BaseWrapper``: public attributes are read from it,
    private ones refused). Warnings go to the logger ``"cribenv.aec"`` with PettingZoo's
    wording (PettingZoo logs them to ``"pettingzoo.utils.env_logger"``). The wrapper reads and
    writes the state of ``env.unwrapped`` directly, without a lookup per layer: wrap a raw env
    (or one whose wrappers leave those attributes alone), as :func:`env` does.

    Args:
        env: the AEC env to wrap.
        illegal_reward: the reward of an agent that makes an illegal move (a finite number).
    """

    def __init__(self, env: AECEnv, illegal_reward: float = -1.0) -> None:
        self._state: AECEnv | None = None        # env.unwrapped once reset() is called
        if not isinstance(env, AECEnv):
            raise TypeError(f"StandardWrapper wraps a PettingZoo AECEnv, got {env!r}")
        self._illegal_reward = real_number(illegal_reward, "illegal_reward")
        self._stepped = False          # step() or reset() since agent_iter's last next()
        self._last_obs: Any = None     # the last observation of the agent to act
        self._last_info: Any = None    # and its info
        self._ended_illegally = False  # this episode was ended by an illegal move
        self._resume: Any = None       # who is selected after the dead agents' steps
        super().__init__(env)

    def __getattr__(self, name: str) -> Any:
        if name in _BEFORE_RESET and self._state is None:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    def __str__(self) -> str:
        return str(self.env)

    # ------------------------------------------------------------------ the AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._state = self.env.unwrapped
        self._stepped = True
        self._ended_illegally = False
        self._last_obs = self._last_info = self._resume = None
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: Any) -> Any:
        state = self._state
        if state is None:
            raise AssertionError("reset() needs to be called before observe.")
        obs = self.env.observe(agent)
        if agent == state.agent_selection:
            self._last_obs = obs
            infos = state.infos
            self._last_info = infos[agent] if agent in infos else {}
        return obs

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        state = self._state
        if state is None:
            raise AttributeError("agent_selection cannot be accessed before reset")
        agent = state.agent_selection
        assert agent is not None
        infos = state.infos
        observation = None
        if observe:                    # observe(agent), inlined
            observation = self._last_obs = self.env.observe(agent)
            self._last_info = infos[agent] if agent in infos else {}
        return (observation, state._cumulative_rewards[agent], state.terminations[agent],
                state.truncations[agent], infos[agent])

    def step(self, action: Any) -> None:
        state = self._state
        if state is None:
            raise AssertionError("reset() needs to be called before step.")
        self._stepped = True
        if not state.agents:
            _LOG.warning(_STEP_AFTER_END)
            return
        agent = state.agent_selection
        dead = state.terminations[agent] or state.truncations[agent]
        assert (action is None and dead) or self.env.action_space(agent).contains(action), (
            f"action {action!r} is not in the action space {self.env.action_space(agent)}"
            + (" (an agent that is done steps None)" if dead else ""))
        obs = self._last_obs
        if obs is None:
            obs = self.observe(agent)
        if isinstance(obs, dict):
            assert "action_mask" in obs, _NO_MASK_IN_OBS.format(obs)
            mask = obs["action_mask"]
        else:
            info = self._last_info
            assert info is not None
            assert "action_mask" in info, _NO_MASK_IN_INFO.format(info)
            mask = info["action_mask"]
        self._last_obs = self._last_info = None
        if dead:
            if self._ended_illegally:
                self._resume = remove_dead_agent(state, action, self._resume)
            else:
                self.env.step(action)
        elif mask[action]:
            self.env.step(action)
        else:
            self._end_illegally(state, agent)

    def _end_illegally(self, state: AECEnv, agent: Any) -> None:
        """The episode ends: the mover gets ``illegal_reward``, every agent is done."""
        _LOG.warning(_ILLEGAL_MOVE)
        state._cumulative_rewards[agent] = 0
        state.terminations = dict.fromkeys(state.agents, True)
        state.truncations = dict.fromkeys(state.agents, True)
        state.rewards = dict.fromkeys(state.truncations, 0)
        state.rewards[agent] = self._illegal_reward
        cumulative = state._cumulative_rewards
        for a, r in state.rewards.items():
            cumulative[a] += r
        self._resume = state.agent_selection     # the dead agents step first, in order
        state.agent_selection = state.agents[0]
        self._ended_illegally = True

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        if self._state is None:
            raise AssertionError("reset() needs to be called before agent_iter().")
        return _AgentIterable(self, max_iter)

    def render(self) -> Any:
        if self._state is None:
            raise AssertionError("reset() needs to be called before render.")
        return self.env.render()

    def state(self) -> np.ndarray:
        if self._state is None:
            raise AssertionError("reset() needs to be called before state.")
        return self.env.state()


for _name in _STATE_ATTRIBUTES:
    setattr(StandardWrapper, _name, _state_property(_name))
del _name


class _AgentIterable:
    """What ``StandardWrapper.agent_iter()`` returns: each ``iter()`` starts a new count."""

    def __init__(self, env: StandardWrapper, max_iter: int) -> None:
        self.env = env
        self.max_iter = max_iter

    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator:
    """Yields ``agent_selection`` while agents are left, at most ``max_iter`` times; a
    ``next`` without a ``step()`` (or ``reset()``) since the last one fails an assertion."""

    def __init__(self, env: StandardWrapper, max_iter: int) -> None:
        self.env = env
        self.left = max_iter

    def __iter__(self) -> _AgentIterator:
        return self

    def __next__(self) -> Any:
        env = self.env
        state = env._state
        if not state.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        assert env._stepped, "need to call step() or reset() in a loop over `agent_iter`"
        env._stepped = False
        return state.agent_selection
