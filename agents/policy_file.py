"""The policy file: what ``ppo:PATH`` plays, what every trainer exports and what the self-play
pool loads as a snapshot. One home for its format; :mod:`agents.ppo` reads it into numpy actors
and :mod:`train.export` writes a run's learner into it.

A policy file is weights only: a ``.safetensors`` file (which cannot run code when loaded) of
named float32 tensors, whose metadata holds ``format`` (:data:`POLICY_FORMAT`) and ``config``
(a JSON object). The tensors, by the network ``arch`` of the config:

* ``mlp`` (the default): hidden layers ``pi.{i}.weight`` / ``pi.{i}.bias`` (weight
  ``(out, in)``) with the config's ``activation`` (``tanh`` unless it says otherwise), then
  ``action.weight`` / ``action.bias`` giving 52 logits from the 601-entry observation;
* ``keeps``: the ``mlp`` tensors, and the throw head of the discard: ``keep.ctx.*`` (a
  projection of the last hidden layer), layers ``keep.{i}.*`` ending in one number per way to
  throw, and optionally the learnt show points ``value.{i}.*`` (two outputs: hand, crib) with
  their weight ``value.beta`` (shape ``(1,)``);
* ``expert-prior``: the per-card network ``card.{i}.*`` on the features of
  :mod:`agents.features` (the last layer giving one number) and ``beta`` (one number).

The config (:func:`policy_config`) says how to read the tensors (``arch``, ``activation``,
``net_arch``; ``card_arch`` and ``features_version`` for ``expert-prior``), which network of
which trainer wrote them (``head``, ``trainer``), the game (``num_players``, ``target``), the
steps trained and the run's settings (``train_config``).

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "p.safetensors"
>>> _ = save_tensors(path, {"beta": np.ones(1)}, {"arch": "expert-prior"})
>>> tensors, config = read_policy_file(path)
>>> tensors["beta"].dtype, config
(dtype('float32'), {'arch': 'expert-prior'})
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from cribenv.files import atomic_path

POLICY_FORMAT = "cribenv-policy/1"


class PolicyFileError(ValueError):
    """A policy file that is missing, corrupt or does not match this version of cribenv."""


def save_tensors(path: str | Path, tensors: dict[str, np.ndarray],
                 config: dict[str, Any]) -> Path:
    """Write named float32 arrays and a JSON config as a policy file, atomically. The same
    arrays and config make the same bytes (the header's keys in sorted order: safetensors
    itself writes its metadata in no fixed order)."""
    from safetensors.numpy import save

    path = Path(path)
    tensors = {k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()}
    meta = {"format": POLICY_FORMAT, "config": json.dumps(config, sort_keys=True)}
    blob = save(tensors, metadata=meta)
    size = int.from_bytes(blob[:8], "little")
    header = json.dumps(json.loads(blob[8:8 + size]), sort_keys=True,
                        separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)      # the data stays 8-byte aligned
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(len(header).to_bytes(8, "little") + header + blob[8 + size:])
    return path


def mlp_tensors(layers: list[tuple[np.ndarray, np.ndarray]],
                action: tuple[np.ndarray, np.ndarray]) -> dict[str, np.ndarray]:
    """The tensors of an ``mlp`` network: hidden ``layers`` and the ``action`` layer, each a
    (weight ``(out, in)``, bias ``(out,)``) pair, named ``pi.{i}.*`` and ``action.*``."""
    tensors: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(layers):
        tensors[f"pi.{i}.weight"] = w
        tensors[f"pi.{i}.bias"] = b
    tensors["action.weight"], tensors["action.bias"] = action
    return tensors


def save_policy(path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]],
                action: tuple[np.ndarray, np.ndarray], config: dict[str, Any]) -> Path:
    """Write an ``mlp`` policy file atomically. ``layers`` are (weight [out, in], bias [out])
    pairs."""
    return save_tensors(path, mlp_tensors(layers, action), config)


def numbered_layers(tensors: dict[str, np.ndarray], prefix: str
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(weight, bias)`` of ``{prefix}.0``, ``{prefix}.1``, ... until one is missing."""
    layers = []
    while f"{prefix}.{len(layers)}.weight" in tensors:
        i = len(layers)
        if f"{prefix}.{i}.bias" not in tensors:
            raise PolicyFileError(f"layer {prefix}.{i} has a weight but no bias")
        layers.append((tensors[f"{prefix}.{i}.weight"], tensors[f"{prefix}.{i}.bias"]))
    return layers


def policy_config(network: dict[str, Any], steps: int, num_players: int, target: int,
                  train_config: dict[str, Any], card_arch: list[int] | None = None
                  ) -> dict[str, Any]:
    """The JSON config of a policy file: its ``network`` (``arch``, ``activation``, ...), the
    steps trained, the game and the run's settings; an ``expert-prior`` network adds its
    ``card_arch`` and the version of the card features it reads."""
    config: dict[str, Any] = {**network, "steps": steps, "num_players": num_players,
                              "target": target, "train_config": train_config}
    if config["arch"] == "expert-prior":
        from agents.features import FEATURES_VERSION

        config.update(card_arch=card_arch, features_version=FEATURES_VERSION)
    return config


def read_policy_file(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors (float arrays as float32) and the config of a policy file, checked: a
    readable safetensors file of this format, a JSON object for its config and finite numbers
    in every tensor; a :class:`PolicyFileError` says what is wrong otherwise."""
    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"no policy file at {path}")
    try:
        from safetensors import safe_open
    except ImportError as exc:  # pragma: no cover
        raise PolicyFileError("reading policies needs safetensors: pip install "
                              "safetensors") from exc
    try:
        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as exc:  # safetensors raises several types for corrupt files
        raise PolicyFileError(f"{path} is not a readable safetensors policy file "
                              f"({type(exc).__name__}: {exc})") from None
    if meta.get("format") != POLICY_FORMAT:
        raise PolicyFileError(f"{path} is not a cribenv policy (format "
                              f"{meta.get('format')!r}, expected {POLICY_FORMAT!r})")
    try:
        config = json.loads(meta.get("config", "{}"))
    except json.JSONDecodeError as exc:
        raise PolicyFileError(f"{path}: the config in the metadata is not JSON: {exc}") \
            from None
    if not isinstance(config, dict):
        raise PolicyFileError(f"{path}: the config in the metadata must be a JSON object, got "
                              f"{type(config).__name__} {str(config)[:60]}")
    for name, array in tensors.items():   # argmax over NaN would play a meaningless card
        if np.issubdtype(array.dtype, np.floating):   # checked as the actors will hold it
            with np.errstate(over="ignore"):
                tensors[name] = array = array.astype(np.float32)
        if not np.issubdtype(array.dtype, np.number) or not np.isfinite(array).all():
            raise PolicyFileError(f"{path}: tensor {name!r} holds non-finite or non-numeric "
                                  f"values (NaN, inf or {array.dtype}); the file is damaged")
    return tensors, config
