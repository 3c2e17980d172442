"""TorchRL: the Cribbage AEC env through ``PettingZooWrapper(..., use_mask=True)``, with a mask
every seat can sample from and rewards that reach the seat on its own turns.

TorchRL steps an AEC env one agent at a time: a group's ``"mask"`` marks the agent to act, its
``"action_mask"`` the legal cards, and every agent's ``"reward"`` is what the env paid it on
that step. Two things get in the way of a masked policy:

* **Masks of the seats that wait.** In PettingZoo an agent that is not to act (and every agent
  once the game is over) has an all-zero ``action_mask``; a masked categorical over it has no
  card to pick and fails (through ``turn_based_aec_to_parallel`` every seat's mask is used;
  TorchRL's AEC path also hands the final state's all-zero mask to the policy).
  :class:`TurnMaskWrapper` (``idle_mask="ones"``, the default) gives such an agent a mask of all
  ones: a valid distribution, and the action is never applied (``"zeros"`` keeps PettingZoo's).
* **Rewards that arrive while a seat is masked out.** With ``reward="points"`` the opponent's
  cards, his heels and the show pay a seat on other agents' turns, so about half of its rewards
  sit on rows where its ``"mask"`` is False, which a loss masked by ``"mask"`` never sees.
  ``rewards="on_turn"`` (the default) holds an agent's rewards while it waits and pays them on
  its next own step (with what that step scores), and pays every agent all it is owed on the
  game's last step, whose ``"done"`` is True for all. So an agent's rewards lie only on its
  own rows and on the final row, and add up to its total; ``"as_scored"`` keeps the env's
  timing (each reward on the step that scored it).

Usage (one shared policy for all seats: the group ``"players"``)::

    >>> import torch
    >>> from cribenv.integrations.torchrl import make_env, masked_policy
    >>> env = make_env(target=61, reward="points")
    >>> policy = masked_policy(env)
    >>> rollout = env.rollout(20, policy, break_when_any_done=False)
    >>> rollout["players", "action_mask"].any(-1).all().item()   # every seat, every row
    True

``examples/torchrl_ppo.py`` trains the masked policy by self-play with it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from pettingzoo.utils.wrappers import BaseWrapper
from tensordict.nn import TensorDictModule
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import cribenv

__all__ = ["TurnMaskWrapper", "make_env", "masked_policy", "GROUP"]

GROUP = "players"
"""The TorchRL group that holds every seat when :func:`make_env` shares one policy."""


class TurnMaskWrapper(BaseWrapper):
    """A PettingZoo wrapper of the Cribbage AEC env for TorchRL (see the module docstring).

    Args:
        env: the AEC env (``cribenv.env(...)``, dict observations).
        idle_mask: ``"ones"``: an agent with no legal card (not its turn, or the game is over)
            observes an all-ones ``action_mask``; ``"zeros"``: PettingZoo's all-zero mask.
        rewards: ``"on_turn"``: an agent's rewards are paid on its own steps and, at the end,
            on the last step; ``"as_scored"``: on the step that scored them.
    """

    def __init__(self, env: Any, idle_mask: str = "ones", rewards: str = "on_turn") -> None:
        if idle_mask not in ("ones", "zeros"):
            raise ValueError(f"idle_mask must be 'ones' or 'zeros', got {idle_mask!r}")
        if rewards not in ("on_turn", "as_scored"):
            raise ValueError(f"rewards must be 'on_turn' or 'as_scored', got {rewards!r}")
        super().__init__(env)
        self.idle_mask = idle_mask
        self.reward_timing = rewards
        self._owed: dict[str, float] = {}
        self._paid: dict[str, float] = {}

    @property
    def rewards(self) -> dict[str, float]:   # what TorchRL reads after each step
        return self.env.rewards if self.reward_timing == "as_scored" else self._paid

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._owed = dict.fromkeys(self.possible_agents, 0.0)
        self._paid = dict.fromkeys(self.possible_agents, 0.0)

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        dead = self.env.terminations[agent] or self.env.truncations[agent]
        super().step(action)
        self._paid = dict.fromkeys(self.possible_agents, 0.0)
        if dead:
            return
        for a, r in self.env.rewards.items():
            self._owed[a] += r
        over = all(self.env.terminations.values()) or all(self.env.truncations.values())
        for a in (self.possible_agents if over else [agent]):
            self._paid[a], self._owed[a] = self._owed[a], 0.0

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = super().observe(agent)
        if self.idle_mask == "ones" and not obs["action_mask"].any():
            obs = {"observation": obs["observation"], "action_mask": np.ones(52, np.int8)}
        return obs


def make_env(idle_mask: str = "ones", rewards: str = "on_turn", shared: bool = True,
             **env_kwargs: Any) -> PettingZooWrapper:
    """``PettingZooWrapper(TurnMaskWrapper(cribenv.env(**env_kwargs)), use_mask=True)``.

    ``shared``: all seats in one group, :data:`GROUP` (one policy plays every seat: self-play);
    otherwise TorchRL's default for AEC envs, a group per agent.
    """
    aec = TurnMaskWrapper(cribenv.env(**env_kwargs), idle_mask=idle_mask, rewards=rewards)
    group_map = {GROUP: list(aec.possible_agents)} if shared else None
    with warnings.catch_warnings():   # TorchRL names the one PettingZoo version it tested
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(aec, use_mask=True, group_map=group_map,
                                 categorical_actions=True)


def masked_policy(env: PettingZooWrapper, group: str = GROUP, hidden: int = 256
                  ) -> ProbabilisticActor:
    """A small MLP whose logits feed a ``MaskedCategorical`` over the group's ``action_mask``
    (it writes the action, its ``log_prob`` and the ``logits``)."""
    obs_key = (group, "observation", "observation")
    size = env.observation_spec[obs_key].shape[-1]
    net = torch.nn.Sequential(torch.nn.Linear(size, hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, 52))
    module = TensorDictModule(net, in_keys=[obs_key], out_keys=[(group, "logits")])
    return ProbabilisticActor(
        module, in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[env.action_key if group == GROUP else (group, "action")],
        distribution_class=MaskedCategorical, return_log_prob=True,
        log_prob_key=(group, "log_prob"))
