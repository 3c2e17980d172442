"""Checkpoints of a training run: atomic save, checked load, the ``LATEST`` pointer.

Layout under ``run_dir/checkpoints``::

    LATEST                   name of the newest complete checkpoint (replaced atomically)
    step-000040960/          model.zip (SB3 archive: weights + optimizer), state.json

A checkpoint is written into a fresh ``.tmp`` folder that is renamed into place, and only then
named in ``LATEST``, so a run killed at any moment resumes from its last complete checkpoint.
``state.json`` holds the :class:`RunState` (step counter, opponent pool, evaluation history,
schedule, random states) and the settings' fingerprint.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from train.config import TrainConfig

CHECKPOINT_FORMAT = "cribenv-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt or made with other settings."""


@dataclass
class RunState:
    """What a checkpoint holds besides the SB3 archive."""

    step: int
    pool: list[str]
    evals: list[dict[str, Any]]
    next_snapshot: int
    next_eval: int
    next_checkpoint: int
    rng: dict[str, Any]
    fingerprint: str
    env_resets: int = 0


def rng_state() -> dict[str, Any]:
    """The global random states of Python, numpy and torch, as JSON-able data."""
    import torch

    np_state = np.random.get_state()
    return {
        "python": _jsonable(random.getstate()),
        "numpy": [np_state[0], np_state[1].tolist(), *np_state[2:]],
        "torch": torch.get_rng_state().tolist(),
    }


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""
    import torch

    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    npst = state["numpy"]
    np.random.set_state((npst[0], np.array(npst[1], dtype=np.uint32), *npst[2:]))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))


def _jsonable(obj):
    if isinstance(obj, tuple | list):
        return [_jsonable(x) for x in obj]
    return obj


def save_checkpoint(run_dir: Path, model, state: RunState, keep: int = 2) -> Path:
    """Write a complete checkpoint folder, then point LATEST at it (both atomic).

    ``model`` is anything with ``save(path)`` (an SB3 model); the ``keep`` newest checkpoints
    are kept.
    """
    ckdir = run_dir / "checkpoints"
    ckdir.mkdir(parents=True, exist_ok=True)
    name = f"step-{state.step:09d}"
    tmp = ckdir / (name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save(tmp / "model.zip")
    payload = dict(state.__dict__, format=CHECKPOINT_FORMAT)
    (tmp / "state.json").write_text(json.dumps(payload))
    final = ckdir / name
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    latest_tmp = ckdir / "LATEST.tmp"
    latest_tmp.write_text(name + "\n")
    os.replace(latest_tmp, ckdir / "LATEST")
    old = sorted(p for p in ckdir.glob("step-*") if p.is_dir() and not p.name.endswith(".tmp"))
    for p in old[:-keep]:
        shutil.rmtree(p, ignore_errors=True)
    return final


def has_checkpoint(run_dir: Path) -> bool:
    """Whether ``run_dir`` already names a checkpoint in ``LATEST``."""
    return (run_dir / "checkpoints" / "LATEST").exists()


def read_checkpoint(run_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The folder named by ``LATEST`` and its ``state.json`` (any trainer's), checked: present,
    complete, JSON, of this checkpoint format (the ``format`` key removed)."""
    latest = run_dir / "checkpoints" / "LATEST"
    if not latest.is_file():
        raise CheckpointError(f"nothing to resume: no checkpoint in {run_dir / 'checkpoints'}")
    ckpt = run_dir / "checkpoints" / latest.read_text().strip()
    state_file = ckpt / "state.json"
    if not state_file.is_file() or not (ckpt / "model.zip").is_file():
        raise CheckpointError(f"checkpoint {ckpt} is incomplete (state.json or model.zip "
                              f"missing)")
    try:
        data = json.loads(state_file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"checkpoint {ckpt} is corrupt: state.json is unreadable "
                              f"({exc})") from None
    if not isinstance(data, dict) or data.pop("format", None) != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {ckpt} is not a {CHECKPOINT_FORMAT} checkpoint")
    return ckpt, data


def load_checkpoint(run_dir: Path, config: TrainConfig) -> tuple[Path, RunState]:
    """The newest complete checkpoint of ``run_dir``; clear errors when it cannot be used."""
    ckpt, data = read_checkpoint(run_dir)
    try:
        state = RunState(**data)
    except TypeError as exc:
        raise CheckpointError(f"checkpoint {ckpt} has unexpected contents: {exc}") from None
    if state.fingerprint != config.fingerprint():
        raise CheckpointError(
            f"checkpoint {ckpt} was made with different settings (fingerprint "
            f"{state.fingerprint}, config.json gives {config.fingerprint()}); resume with the "
            f"run's own config.json or start a new run directory")
    return ckpt, state


def load_model(ckpt: Path, env, device: str = "cpu"):
    """The MaskablePPO model of checkpoint folder ``ckpt``, attached to ``env``."""
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(ckpt / "model.zip", env=env, device=device)
    except Exception as exc:  # zipfile / torch / pickle errors of a damaged archive
        raise CheckpointError(f"checkpoint {ckpt / 'model.zip'} cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from None
