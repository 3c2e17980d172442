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

import csv
import dataclasses
import json
import os
import random
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cribenv.files import cleaned_up_on_failure
from train.config import TrainConfig

CHECKPOINT_FORMAT = "cribenv-checkpoint/1"
_CHECKPOINT_NAME = re.compile(r"step-[0-9]{9}")


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
    # on failure no partial folder is left, and the last complete checkpoint stays LATEST
    with cleaned_up_on_failure(ckdir / name, lambda: shutil.rmtree(tmp, ignore_errors=True)):
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


def saved_settings(kind: type, run_dir: Path) -> Any:
    """The settings ``run_dir/config.json`` holds, as ``kind`` (a settings class); a
    :class:`CheckpointError` when there is none or it holds another backend's."""
    config_file = run_dir / "config.json"
    if not config_file.is_file():
        raise CheckpointError(f"nothing to resume: {config_file} does not exist")
    try:
        return kind.load(config_file)
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"{config_file} does not hold {kind.KIND} settings ({exc}); "
                              f"was the run made with another --backend?") from None


def run_settings(config: Any, run_dir: Path, resume: bool
                 ) -> tuple[Any, dict[str, tuple[Any, Any]]]:
    """The settings a run goes on with, and what a resume changed (checks only; nothing
    written). A new run keeps ``config`` and refuses a ``run_dir`` that already holds a
    checkpoint; a resume reads the run's own ``config.json`` (of ``config``'s kind: another
    backend's is refused) and applies ``config``'s resumable settings (:func:`resume_settings`)."""
    if not resume:
        if has_checkpoint(run_dir):
            raise CheckpointError(f"{run_dir} already holds a run: pass --resume to continue "
                                  f"it, or choose another --run-dir")
        return config, {}
    kind = type(config)
    saved = saved_settings(kind, run_dir)
    return resume_settings(saved, config.to_dict(), kind.RESUMABLE)


def read_checkpoint(run_dir: Path, trainer: str | None = None, fingerprint: str | None = None
                    ) -> tuple[Path, dict[str, Any]]:
    """The folder named by ``LATEST`` and its ``state.json`` (any trainer's), checked: present,
    complete, JSON, of this checkpoint format (the ``format`` key removed); with ``trainer``,
    written by that trainer (the ``trainer`` key removed); with ``fingerprint``, made with
    those settings."""
    latest = run_dir / "checkpoints" / "LATEST"
    if not latest.is_file():
        raise CheckpointError(f"nothing to resume: no checkpoint in {run_dir / 'checkpoints'}")
    raw = latest.read_bytes()
    name = raw.decode("ascii", "replace").strip()
    if not _CHECKPOINT_NAME.fullmatch(name):
        raise CheckpointError(f"{latest} is damaged: it should name a checkpoint folder like "
                              f"step-000040960, but holds {raw[:40]!r}")
    ckpt = run_dir / "checkpoints" / name
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
    if trainer is not None and data.pop("trainer", None) != trainer:
        raise CheckpointError(f"checkpoint {ckpt} is not a {trainer} checkpoint; was the run "
                              f"made with another --backend?")
    step = data.get("step")
    if type(step) is not int or step != int(name[len("step-"):]):
        raise CheckpointError(f"checkpoint {ckpt} is damaged: state.json's step {step!r} is "
                              f"not its folder's ({int(name[len('step-'):])}); nothing was "
                              f"changed")
    if fingerprint is not None and data.get("fingerprint") != fingerprint:
        raise CheckpointError(
            f"checkpoint {ckpt} was made with different settings (fingerprint "
            f"{data.get('fingerprint')}, config.json gives {fingerprint}); resume with the "
            f"run's own config.json or start a new run directory")
    return ckpt, data


def load_checkpoint(run_dir: Path, config: TrainConfig) -> tuple[Path, RunState]:
    """The newest complete checkpoint of ``run_dir``; clear errors when it cannot be used."""
    ckpt, data = read_checkpoint(run_dir, fingerprint=config.fingerprint())
    try:
        state = RunState(**data)
    except TypeError as exc:
        raise CheckpointError(f"checkpoint {ckpt} has unexpected contents: {exc}") from None
    return ckpt, state


def load_model(ckpt: Path, env, device: str = "cpu"):
    """The MaskablePPO model of checkpoint folder ``ckpt``, attached to ``env``."""
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.load(ckpt / "model.zip", env=env, device=device)
    except Exception as exc:  # zipfile / torch / pickle errors of a damaged archive
        raise CheckpointError(f"checkpoint {ckpt / 'model.zip'} cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from None


def resume_settings(saved: Any, requested: dict[str, Any], resumable: Iterable[str]
                    ) -> tuple[Any, dict[str, tuple[Any, Any]]]:
    """The settings a resumed run goes on with, and what changed (``{name: (old, new)}``).

    ``saved`` is the run's own settings (a dataclass, its ``config.json``); ``requested`` the
    settings asked for (on the command line only the flags given). A ``resumable`` one (length,
    hardware, bookkeeping) takes the requested value; any other one that differs is refused,
    since the checkpoint was trained with the saved value.

        >>> from train.selfplay_config import SelfPlayConfig
        >>> run = SelfPlayConfig(total_steps=6_000)
        >>> resume_settings(run, {"total_steps": 9_000}, SelfPlayConfig.RESUMABLE)[1]
        {'total_steps': (6000, 9000)}
        >>> try:
        ...     resume_settings(run, {"gamma": 0.5}, SelfPlayConfig.RESUMABLE)
        ... except CheckpointError as exc:
        ...     print(str(exc).split(": ")[1])
        gamma (the run has 0.99, asked 0.5); start a new --run-dir to train with other settings
    """
    resumable = set(resumable)
    changed: dict[str, tuple[Any, Any]] = {}
    refused = []
    for name, value in requested.items():
        old = getattr(saved, name)
        if value == old:
            continue
        if name in resumable:
            changed[name] = (old, value)
        else:
            refused.append(f"{name} (the run has {old!r}, asked {value!r})")
    if refused:
        raise CheckpointError("the run was started with different settings, which a resumed "
                              f"run keeps: {'; '.join(refused)}; start a new --run-dir to "
                              "train with other settings")
    merged = dataclasses.replace(saved, **{k: new for k, (_, new) in changed.items()})
    return merged, changed


def describe_resume(config: Any, changed: dict[str, tuple[Any, Any]],
                    resumable: Iterable[str]) -> str:
    """One line saying which of a resumed run's own settings it kept and which changed."""
    kept = ", ".join(f"{k} {getattr(config, k)}" for k in resumable if k not in changed)
    text = f"kept the run's settings ({kept})"
    if changed:
        text += "; changed " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in changed.items())
    return text


def check_log(path: Path, column: str = "step") -> None:
    """A :class:`CheckpointError` naming the CSV log ``path`` when a resume could not go on
    with it: unreadable, not text, or its header lacks ``column`` (an empty file, or none, is
    a log to start). Checked before a resume changes anything, so that a run never trains to
    its end and then fails on its log."""
    fix = ("move it aside to resume (the resumed run starts a new log at its checkpoint), or "
           "restore it")
    if not path.exists():
        return
    try:
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), None)
            for _ in csv.reader(f):   # every line decodes and parses
                pass
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CheckpointError(f"{path} is damaged: it cannot be read as a CSV log ({exc}); "
                              f"{fix}") from None
    if header is not None and column not in header:
        raise CheckpointError(f"{path} is damaged: its first line {','.join(header)[:80]!r} is "
                              f"not a header with a {column!r} column; {fix}")


def truncate_log(path: Path, step: int, column: str = "step") -> int:
    """Keep the rows of CSV log ``path`` logged up to the checkpoint at ``step``: every row
    before the first one whose ``column`` is past ``step`` (rows without a value, such as
    SB3's evaluation rows, belong to the step before them; a line whose ``column`` is not a
    number is dropped). A resumed run logs the rest again, so each row is kept once. Returns
    how many rows were kept."""
    if not path.exists():
        return 0
    check_log(path, column)
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return 0
    at = rows[0].index(column)
    keep = []
    for row in rows[1:]:
        if len(row) > at and row[at] != "":
            try:
                logged = float(row[at])
            except ValueError:   # a damaged line: not a row of the log, dropped
                continue
            if logged > step:
                break
        keep.append(row)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        csv.writer(f).writerows([rows[0]] + keep)
    os.replace(tmp, path)
    return len(keep)
