"""``cribenv train``: self-play PPO with progress, checkpoints and resume."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from cribenv.checks import writable_dir
from train.checkpoints import read_checkpoint, resume_settings, saved_settings
from train.config import TrainConfig, help_of, read_settings
from train.selfplay_config import SelfPlayConfig

BACKENDS = ("selfplay", "sb3", "rllib")


def _backend(name: str):
    """(settings dataclass, train function) of ``--backend``."""
    if name == "sb3":
        from train.sb3_trainer import train
        return TrainConfig, train
    if name == "rllib":
        from train.rllib_config import RLlibConfig
        from train.rllib_trainer import train
        return RLlibConfig, train
    from train.selfplay import train
    return SelfPlayConfig, train


def configure(parser: argparse.ArgumentParser) -> None:
    from train.rllib_config import RLlibConfig

    parser.description = (
        "Self-play PPO. The default backend 'selfplay' is masked PPO in torch on the batched "
        "engine (the learner plays every seat of a share of the games, snapshots of itself the "
        "others); 'sb3' is the reference sb3-contrib MaskablePPO on the single-agent wrapper; "
        "'rllib' is RLlib PPO with env runners as Ray actors, on a Ray cluster with "
        "--address. "
        "Checkpoints are written atomically; --resume continues a killed run from its last "
        "checkpoint. What a resume loads: the selfplay backend's checkpoints are weights and "
        "JSON only (model.zip read with torch.load(weights_only=True), state.json), so "
        "loading one never runs code; --backend sb3 --resume is the one path that unpickles "
        "(SB3's model.zip archive): resume only runs you made. Policy files (.safetensors) "
        "are weights and JSON only.")
    parser.epilog = ("Example: cribenv train --run-dir runs/quick --total-steps 200000 "
                     "(then: cribenv train --run-dir runs/quick --resume). Settings shown with "
                     "the selfplay defaults; settings of one backend only are marked.")
    parser.add_argument("--run-dir", help="folder of the run (created; required)")
    parser.add_argument("--config", help="JSON file of settings (see train/selfplay_config.py, "
                                         "train/config.py for sb3)")
    parser.add_argument("--backend", choices=BACKENDS, default="selfplay",
                        help="trainer (default selfplay)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir from its last checkpoint, with its "
                             "own settings: only the flags given change them, and only the "
                             "length, hardware and bookkeeping ones (total-steps, threads, "
                             "checkpoint-every, eval-every, eval-games, ...); another setting "
                             "given that differs is refused. With --backend sb3 this loads an "
                             "SB3 archive (pickle): resume only runs you made")
    parser.add_argument("--address", metavar="ADDRESS",
                        help="[rllib] join the Ray cluster at ADDRESS (e.g. 10.0.0.5:6379 or "
                             "auto) instead of starting a local Ray")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    kinds = {"selfplay": SelfPlayConfig(), "sb3": TrainConfig(), "rllib": RLlibConfig()}
    helps = {backend: help_of(type(settings)) for backend, settings in kinds.items()}
    owners: dict[str, list[str]] = {}
    for backend, settings in kinds.items():
        for f in fields(settings):
            owners.setdefault(f.name, []).append(backend)
    for name, backends in owners.items():
        flag = "--" + name.replace("_", "-")
        value = getattr(kinds[backends[0]], name)
        only = "" if len(backends) == len(kinds) else f" [{', '.join(backends)}]"
        text = next(helps[b][name] for b in backends) + only   # the first backend's words
        if isinstance(value, bool):
            parser.add_argument(flag, type=_bool, default=None, metavar="BOOL",
                                help=f"{text} (default {value})")
        elif isinstance(value, list):
            kind = type(value[0]) if value else str
            shown = " ".join(map(str, value))
            parser.add_argument(flag, type=kind, nargs="+", default=None,
                                help=f"{text} (default {shown})")
        else:
            parser.add_argument(flag, type=type(value), default=None,
                                help=f"{text} (default {value})")


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def requested_settings(args: argparse.Namespace) -> dict:
    """The settings asked for: those of --config, then the flags given (never the defaults)."""
    kind, _ = _backend(getattr(args, "backend", "selfplay"))
    data = read_settings(args.config, "--config") if args.config else {}
    known = {f.name for f in fields(kind)}
    for f in fields(kind):
        value = getattr(args, f.name, None)
        if value is not None:
            data[f.name] = value
    from train.rllib_config import RLlibConfig

    every = {f.name for kind_ in (SelfPlayConfig, TrainConfig, RLlibConfig)
             for f in fields(kind_)}
    for name in every - known:
        if getattr(args, name, None) is not None:
            raise ValueError(f"--{name.replace('_', '-')} is not a setting of the "
                             f"{args.backend} backend")
    return data


def build_config(args: argparse.Namespace):
    """The settings of the chosen backend: a new run's from its defaults, --config and the
    flags; a resumed run's from its own ``config.json``, with the resumable settings given
    explicitly applied (another setting given that differs is refused, naming it)."""
    kind, _ = _backend(getattr(args, "backend", "selfplay"))
    data = requested_settings(args)
    if not getattr(args, "resume", False):
        return kind.from_dict(data)
    saved = saved_settings(kind, Path(args.run_dir))
    kind.from_dict({**saved.to_dict(), **data})   # each value checked as for a new run
    return resume_settings(saved, data, kind.RESUMABLE)[0]


def run(args: argparse.Namespace) -> int:
    if not args.run_dir:
        raise ValueError("--run-dir is required: the folder of the run (e.g. --run-dir "
                         "runs/quick)")
    _, train = _backend(args.backend)
    writable_dir(args.run_dir, "--run-dir")
    config = build_config(args)
    extra = {}
    if getattr(args, "address", None):
        if args.backend != "rllib":
            raise ValueError(f"--address is a setting of the rllib backend, not of "
                             f"{args.backend}")
        extra["address"] = args.address
    if args.resume:
        ckpt, state = read_checkpoint(Path(args.run_dir))
        policy = Path(args.run_dir) / "policy.safetensors"
        if state["step"] >= config.total_steps and policy.is_file():
            print(f"nothing left to train: {ckpt} is at step {state['step']:,} and the run's "
                  f"total_steps is {config.total_steps:,}; pass --total-steps N to train "
                  f"further")
            return 0   # without its policy file, the trainer writes it from the checkpoint
    try:
        train(config, args.run_dir, resume=args.resume, progress=not args.no_progress, **extra)
    except KeyboardInterrupt:
        print(f"interrupted: checkpoint saved; continue with "
              f"cribenv train --run-dir {args.run_dir} --resume")
        return 130
    return 0
