"""The actor of a trained ``mlp`` or ``keeps`` policy file in torch, to fit it further.

The self-play trainer's :class:`train.networks.ActorCritic` builds its per-card head from rank,
suit and card vectors; a policy file holds only their product (the ``action`` layer), so a
trained network cannot be loaded back into it. :class:`PolicyActor` holds the file's own
tensors as parameters (the trunk, the action layer, the throw head and its learnt throw values),
computes the same logits as the numpy player (:class:`agents.ppo.MlpActor`,
:class:`agents.ppo.KeepsActor`) and writes itself back as a policy file of the same kind:
expert iteration with the network's own models fits it (:mod:`train.expert_iteration`).

>>> import numpy as np, torch
>>> from agents.ppo import load_policy
>>> from cribenv.game import Game
>>> from cribenv.observation import encode
>>> net = PolicyActor.from_policy_file("scratch")
>>> g = Game(seed=3)
>>> obs = encode(g.view(g.current_player))[None]
>>> mine = net.logits(torch.as_tensor(obs)).detach().numpy()[0]
>>> theirs = load_policy("agents/trained/scratch_ppo.safetensors").logits(obs)[0]
>>> held = obs[0, :52] > 0
>>> bool(np.allclose(mine[held], theirs[held], atol=1e-4))
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.ppo import KeepsActor, MlpActor, PolicyFileError, load_policy, policy_path, save_tensors
from cribenv.observation import OBS_SIZE
from train.layers import ACTIVATIONS, mlp
from train.networks import export_arrays, throw_logits, throw_net, throw_tables_torch
from train.throw_values import ThrowValueNet

__all__ = ["PolicyActor"]


def _linears(module: nn.Module) -> list[nn.Linear]:
    return [m for m in module.modules() if isinstance(m, nn.Linear)]


def _copy(linears: list[nn.Linear], layers: Any) -> None:
    """Set ``linears`` to ``layers`` (weight ``(out, in)``, bias), in order."""
    with torch.no_grad():
        for lin, (w, b) in zip(linears, layers, strict=True):
            lin.weight.copy_(torch.from_numpy(np.array(w, np.float32)))
            lin.bias.copy_(torch.from_numpy(np.array(b, np.float32)))


class PolicyActor(nn.Module):
    """The numpy actor ``actor`` (an ``mlp`` or ``keeps`` one of :mod:`agents.ppo`) in torch,
    its tensors as parameters; ``logits(obs)`` is the numpy player's up to float rounding,
    :meth:`save` writes a policy file that ``ppo:PATH`` plays."""

    def __init__(self, actor: Any) -> None:
        super().__init__()
        if not isinstance(actor, MlpActor):
            raise PolicyFileError(f"a {getattr(actor, 'arch', type(actor).__name__)!r} policy "
                                  "is not an 'mlp' or 'keeps' network read from the observation")
        self.config = dict(actor.config)
        activation = self.config.get("activation", "relu")
        sizes = [OBS_SIZE, *(int(w.shape[0]) for w, _ in actor.layers)]
        self.actor = mlp(sizes, ACTIVATIONS[activation], orthogonal=False)
        _copy(_linears(self.actor), actor.layers)
        self.head = nn.Linear(sizes[-1], 52)
        _copy([self.head], [actor.action])
        self.keeps = isinstance(actor, KeepsActor)
        self.throw_values = None
        if not self.keeps:
            return
        if activation != "relu":   # the trainer's throw head is a ReLU network
            raise PolicyFileError(f"a keeps policy with activation {activation!r} (the throw "
                                  "head is fitted with 'relu')")
        ctx_w, ctx_b = actor.keep_ctx
        self.keep_ctx = nn.Linear(sizes[-1], int(ctx_w.shape[0]))
        _copy([self.keep_ctx], [(ctx_w, ctx_b)])
        self.keep_net = throw_net([int(w.shape[0]) for w, _ in actor.keep_layers[:-1]],
                                  int(ctx_w.shape[0]))
        _copy(_linears(self.keep_net), actor.keep_layers)
        self.tables = throw_tables_torch()
        if actor.value_layers:
            values = [(wt.T, b) for wt, b in actor.value_layers]   # stored (in, out)
            self.throw_values = ThrowValueNet([int(w.shape[0]) for w, _ in values[:-1]],
                                              actor.value_beta)
            _copy(self.throw_values.linears(), values)
            with torch.no_grad():
                self.throw_values.log_beta.copy_(torch.tensor(float(np.log(actor.value_beta))))

    @classmethod
    def from_policy_file(cls, path: str | Path) -> PolicyActor:
        """The actor of the policy file ``path`` (or a shipped name, ``scratch``);
        :class:`agents.ppo.PolicyFileError` names a file of another network."""
        return cls(load_policy(policy_path(path)))

    def action_layer(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(weight (52, width), bias (52,)) of the action layer (:func:`export_arrays`)."""
        return self.head.weight, self.head.bias

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, 52)`` logits of observation rows ``obs``."""
        obs = obs.float()
        h = self.actor(obs)
        out = self.head(h)
        if self.keeps:
            out = throw_logits(obs, h, out, self.keep_ctx, self.keep_net, self.tables,
                               self.throw_values)
        return out

    def save(self, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
        """Write the actor as a policy file of its kind, its config the file's it was read
        from updated by ``meta``."""
        return save_tensors(path, export_arrays(self), {**self.config, **(meta or {})})
