"""The ``expert-prior`` policy for MaskablePPO: card logits ``beta * prior + mlp(features)``.

The observation it reads is :func:`agents.features.augment`'s vector (the env observation, the
expert's value of each card, and a feature row per card; :class:`ExpertFeatureObservation`
builds it inside the training envs). The actor is one small MLP applied to every card's feature
row (shared weights, one logit per card) plus ``beta`` times the expert's value; its last layer
starts at zero, so the untrained policy is a softmax over the expert's values and its most likely
card is the expert's. The critic is an ordinary MLP on the env observation.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.features import INPUT_SIZE, NUM_FEATURES, augment
from cribenv.observation import OBS_SIZE
from train.layers import ACTIVATIONS, mlp
from train.networks import CardNetwork, renamed_on_load


class ExpertFeatureObservation(gymnasium.ObservationWrapper):
    """Replaces the single-agent env's observation with :func:`agents.features.augment`'s."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (INPUT_SIZE,),
                                                      np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return augment(observation, self.env.unwrapped.action_masks())

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


class ExpertPriorModule(nn.Module):
    """The expert-prior network in torch, in SB3's ``mlp_extractor`` slot: ``latent_pi`` is the
    52 card logits themselves (its :class:`train.networks.CardNetwork` ``card`` on every card's
    row), ``latent_vf`` the critic's last hidden layer."""

    def __init__(self, card_hidden: list[int], value_hidden: list[int], activation: str,
                 beta: float) -> None:
        super().__init__()
        self.card = CardNetwork(card_hidden, activation, beta, orthogonal=False)
        self.value_net = mlp([OBS_SIZE, *value_hidden], ACTIVATIONS[activation],
                             orthogonal=False)
        self.latent_dim_pi = 52
        self.latent_dim_vf = value_hidden[-1] if value_hidden else OBS_SIZE
        renamed_on_load(self, {"card_net.": "card.net.", "card_out.": "card.out.",
                               "log_beta": "card.log_beta"})

    def forward_actor(self, x: torch.Tensor) -> torch.Tensor:
        prior = x[:, OBS_SIZE:OBS_SIZE + 52]
        feats = x[:, OBS_SIZE + 52:].reshape(-1, 52, NUM_FEATURES)
        return self.card(prior, feats)

    def forward_critic(self, x: torch.Tensor) -> torch.Tensor:
        return self.value_net(x[:, :OBS_SIZE])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(x), self.forward_critic(x)


class ExpertPriorPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose actor is :class:`ExpertPriorModule` (see the module docstring)."""

    def __init__(self, *args: Any, card_hidden: list[int] | None = None,
                 value_hidden: list[int] | None = None, activation: str = "relu",
                 beta: float = 2.0, **kwargs: Any) -> None:
        self.card_hidden = list(card_hidden if card_hidden is not None else [64, 64])
        self.value_hidden = list(value_hidden if value_hidden is not None else [256, 256])
        self.activation = activation
        self.beta = beta
        kwargs["ortho_init"] = False
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ExpertPriorModule(self.card_hidden, self.value_hidden, self.activation,
                                           self.beta)

    def _build(self, lr_schedule) -> None:
        self._build_mlp_extractor()
        self.action_net = nn.Identity()
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(card_hidden=self.card_hidden, value_hidden=self.value_hidden,
                    activation=self.activation, beta=self.beta)
        return data


def prior_arrays(policy: ExpertPriorPolicy) -> dict[str, np.ndarray]:
    """The actor's weights as numpy arrays, named as in a policy file."""
    return policy.mlp_extractor.card.arrays()


def start_from_policy_file(policy: ExpertPriorPolicy, path: str) -> None:
    """Copy the card network and beta of an expert-prior policy file into ``policy``."""
    policy.mlp_extractor.card.load_policy_file(path)
