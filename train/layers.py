"""The layers the trainers' networks build from: :func:`mlp`, :func:`orthogonal_init` and
:data:`ACTIVATIONS` (torch; :mod:`train.networks` and :mod:`train.throw_values` use them)."""

from __future__ import annotations

import math
from typing import Any

from torch import nn

#: A network setting's activation names (``TrainConfig.activation``) as torch modules.
ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}


def mlp(sizes: list[int], activation: type[nn.Module] = nn.ReLU,
        orthogonal: bool = True) -> nn.Sequential:
    """Linear layers of ``sizes``, each followed by ``activation``; ``orthogonal``: weights
    initialised orthogonally with gain sqrt 2 and zero biases (the self-play trainer's, as
    CleanRL's), else torch's default initialisation (the SB3 expert-prior policy's).

    >>> [type(m).__name__ for m in mlp([4, 8, 2])]
    ['Linear', 'ReLU', 'Linear', 'ReLU']
    """
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        linear = nn.Linear(a, b)
        layers += [orthogonal_init(linear, math.sqrt(2)) if orthogonal else linear, activation()]
    return nn.Sequential(*layers)


def orthogonal_init(layer, std: float):
    """``layer`` with orthogonal weights of gain ``std`` and zero biases (CleanRL's)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.zeros_(layer.bias)
    return layer
