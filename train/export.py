"""The learner's actor out of SB3: as a weights-only policy file, or as a numpy agent.

A policy file (see :mod:`agents.ppo`) is what ``ppo:PATH`` plays and what the opponent pool
loads as a snapshot; :class:`LearnerAgent` plays the current learner without writing one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.ppo import ExpertPriorActor, MlpActor, PPOAgent, save_policy, save_tensors
from train.config import TrainConfig


def policy_arrays(model) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                  tuple[np.ndarray, np.ndarray]]:
    """The actor's (weight, bias) pairs of an SB3 MlpPolicy, as numpy arrays."""
    net = model.policy.mlp_extractor.policy_net
    layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
              for m in net if isinstance(m, torch.nn.Linear)]
    head = model.policy.action_net
    return layers, (head.weight.detach().cpu().numpy().copy(),
                    head.bias.detach().cpu().numpy().copy())


def policy_meta(config: TrainConfig, steps: int) -> dict[str, Any]:
    """The JSON config stored in a policy file of this run."""
    meta: dict[str, Any] = {"arch": config.policy, "activation": config.activation,
                            "steps": steps, "num_players": config.num_players,
                            "target": config.target, "train_config": config.to_dict()}
    if config.policy == "expert-prior":
        from agents.features import FEATURES_VERSION

        meta.update(card_arch=config.card_arch, features_version=FEATURES_VERSION)
    else:
        meta["net_arch"] = config.net_arch
    return meta


def export_policy(model, path: str | Path, config: TrainConfig, steps: int,
                  extra: dict[str, Any] | None = None) -> Path:
    """Write the learner's actor as a weights-only policy file."""
    meta = policy_meta(config, steps)
    meta.update(extra or {})
    if config.policy == "expert-prior":
        from train.prior_policy import prior_arrays

        return save_tensors(path, prior_arrays(model.policy), meta)
    layers, head = policy_arrays(model)
    return save_policy(path, layers, head, meta)


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
