"""TorchRL: the Cribbage AEC env through ``PettingZooWrapper(..., use_mask=True)``, with a mask
every seat can sample from and rewards that reach the seat on its own turns.

TorchRL steps an AEC env one agent at a time: a group's ``"mask"`` marks the agent to act, its
``"action_mask"`` the legal cards, and every agent's ``"reward"`` is what the env paid it on
that step. :func:`make_env` wraps the env in :class:`cribenv.turn_mask.TurnMaskWrapper` (the
torch-free core wrapper, re-exported here), which fixes the two things a masked policy trips
on:

* **Masks of the seats that wait.** PettingZoo gives an agent that is not to act (and every
  agent once the game is over, which TorchRL's AEC path hands to the policy too) an all-zero
  ``action_mask``, on which a ``MaskedCategorical`` fails; the wrapper makes it all ones
  (``idle_mask="ones"``; the action is never applied).
* **Rewards that arrive while a seat is masked out.** With ``reward="points"`` about half of a
  seat's rewards (the opponent's pegging, the show) come on rows where its ``"mask"`` is False,
  which a loss masked by ``"mask"`` never sees. ``rewards="on_turn"`` pays them on the seat's
  next own row, and every seat all it is owed on the game's last row, whose ``"done"`` is True
  for all. So a seat's rewards lie only on its own rows and on the final row, and add up to its
  total (``"as_scored"`` keeps the env's timing).

Usage (one shared policy for all seats: the group ``"players"``)::

    >>> import torch
    >>> from cribenv.integrations.torchrl import make_env, masked_policy
    >>> env = make_env(target=61, reward="points")
    >>> policy = masked_policy(env)
    >>> rollout = env.rollout(20, policy, break_when_any_done=False)
    >>> rollout["players", "action_mask"].any(-1).all().item()   # every seat, every row
    True

``examples/torchrl_selfplay.py`` trains the masked policy by self-play with it. For speed,
:mod:`cribenv.integrations.torchrl_batched` has batched ``EnvBase`` classes on the compiled
engine (N games a step): a learner against an opponent, and self-play with every seat a row;
:func:`masked_policy` serves them too.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from tensordict.nn import TensorDictModule
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import cribenv
from cribenv.turn_mask import TurnMaskWrapper

__all__ = ["TurnMaskWrapper", "make_env", "masked_policy", "GROUP"]

GROUP = "players"
"""The TorchRL group that holds every seat when :func:`make_env` shares one policy."""


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


def masked_policy(env: Any, group: str | None = GROUP, hidden: int = 256
                  ) -> ProbabilisticActor:
    """A small MLP whose logits feed a ``MaskedCategorical`` over the group's ``action_mask``
    (it writes the action, its ``log_prob`` and the ``logits``).

    ``env``: :func:`make_env`'s, or an env of :mod:`cribenv.integrations.torchrl_batched`:
    ``SelfPlayCribbageEnv`` (the group ``"players"``) or ``BatchedCribbageEnv``, which has no
    group: there (or with ``group=None``) the keys are at the root, and the log-prob is
    ``"action_log_prob"``, TorchRL's default."""
    if group == GROUP and GROUP not in env.observation_spec.keys():
        group = None
    prefix = () if group is None else (group,)
    obs_key = (*prefix, "observation")
    if (*obs_key, "observation") in env.observation_spec.keys(True, True):
        obs_key = (*obs_key, "observation")           # PettingZoo's dict observation
    obs_key = obs_key[0] if len(obs_key) == 1 else obs_key
    size = env.observation_spec[obs_key].shape[-1]
    net = torch.nn.Sequential(torch.nn.Linear(size, hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                              torch.nn.Linear(hidden, 52))
    if group is None:
        module = TensorDictModule(net, in_keys=[obs_key], out_keys=["logits"])
        return ProbabilisticActor(
            module, in_keys={"logits": "logits", "mask": "action_mask"},
            out_keys=[env.action_key], distribution_class=MaskedCategorical,
            return_log_prob=True)
    module = TensorDictModule(net, in_keys=[obs_key], out_keys=[(group, "logits")])
    return ProbabilisticActor(
        module, in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[env.action_key if group == GROUP else (group, "action")],
        distribution_class=MaskedCategorical, return_log_prob=True,
        log_prob_key=(group, "log_prob"))
