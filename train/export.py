"""A learner's actor out of any trainer as a weights-only policy file (:func:`export_policy`),
and the SB3 learner as a numpy agent.

A policy file (its format: :mod:`agents.policy_file`) is what ``ppo:PATH`` plays and what the
opponent pool loads as a snapshot. Each trainer passes its network's tensors (SB3:
:func:`policy_tensors`; self-play: :func:`train.networks.export_arrays`; RLlib: the module's
``actor_arrays``) and its settings, whose ``policy_fields`` describe the network in the file's
config (:func:`policy_meta`, built by :func:`agents.policy_file.policy_config`).
:class:`LearnerAgent` plays the current SB3 learner without writing one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.policy_file import mlp_tensors, policy_config, save_tensors
from agents.ppo import ExpertPriorActor, MlpActor, PPOAgent
from train.config import RunSettings, TrainConfig


def policy_arrays(model) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                  tuple[np.ndarray, np.ndarray]]:
    """The actor's (weight, bias) pairs of an SB3 MlpPolicy, as numpy arrays."""
    net = model.policy.mlp_extractor.policy_net
    layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
              for m in net if isinstance(m, torch.nn.Linear)]
    head = model.policy.action_net
    return layers, (head.weight.detach().cpu().numpy().copy(),
                    head.bias.detach().cpu().numpy().copy())


def policy_tensors(model, config: TrainConfig) -> dict[str, np.ndarray]:
    """The SB3 learner's actor as the named tensors of its policy file (``pi.0``, ...,
    ``action`` of an ``mlp``; the card network of an ``expert-prior``)."""
    if config.policy == "expert-prior":
        from train.prior_policy import prior_arrays

        return prior_arrays(model.policy)
    return mlp_tensors(*policy_arrays(model))


def policy_meta(config: RunSettings, steps: int) -> dict[str, Any]:
    """The JSON config stored in a policy file of a run of ``config`` (any backend): its
    network (``config.policy_fields()``; with an ``expert-prior`` card network its layers and
    the features' version), the steps trained, the game and the run's settings."""
    return policy_config(config.policy_fields(), steps,
                         config.num_players, config.target,  # type: ignore[attr-defined]
                         config.to_dict(), getattr(config, "card_arch", None))


def export_policy(tensors: dict[str, np.ndarray], path: str | Path, config: RunSettings,
                  steps: int, extra: dict[str, Any] | None = None) -> Path:
    """Write a learner's actor, ``tensors``, as a weights-only policy file whose config is
    :func:`policy_meta` (plus ``extra``); play it with ``ppo:PATH``."""
    meta = policy_meta(config, steps)
    meta.update(extra or {})
    return save_tensors(path, tensors, meta)


def numpy_actor(model, config: TrainConfig) -> MlpActor | ExpertPriorActor:
    """The learner's current actor as a numpy policy (what its exported file would load as)."""
    if config.policy == "expert-prior":
        from train.prior_policy import prior_arrays

        arrays = prior_arrays(model.policy)
        return ExpertPriorActor.from_tensors(Path("<learner>"), arrays, policy_meta(config, 0))
    layers, head = policy_arrays(model)
    return MlpActor(layers, head, config.activation)


class LearnerAgent(PPOAgent):
    """The current learner as an agent (greedy over its logits), for evaluation."""

    def __init__(self, model, config: TrainConfig) -> None:
        self.policy = numpy_actor(model, config)
        self.name = "learner"
        self.sample = False
        self.path = "<learner>"
