"""``cribenv train``: self-play PPO with progress, checkpoints and resume."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from train.config import HELP, TrainConfig
from train.selfplay import SelfPlayConfig

BACKENDS = ("selfplay", "sb3", "rllib")


def _backend(name: str):
    """(settings dataclass, train function) of ``--backend``."""
    if name == "sb3":
        from train.sb3_trainer import train
        return TrainConfig, train
    if name == "rllib":
        from train.rllib_trainer import RLlibConfig, train
        return RLlibConfig, train
    from train.selfplay import train
    return SelfPlayConfig, train


def _rllib_settings():
    """The settings dataclass and help of the rllib backend (without importing ray)."""
    from train.rllib_trainer import HELP, RLlibConfig
    return RLlibConfig, HELP


def configure(parser: argparse.ArgumentParser) -> None:
    from train.selfplay import HELP as SELFPLAY_HELP

    parser.description = (
        "Self-play PPO. The default backend 'selfplay' is masked PPO in torch on the batched "
        "engine (the learner plays every seat of a share of the games, snapshots of itself the "
        "others); 'sb3' is the reference sb3-contrib MaskablePPO on the single-agent wrapper; "
        "'rllib' is RLlib PPO with env runners as Ray actors, on a Ray cluster with "
        "--address. "
        "Checkpoints are written atomically; --resume continues a killed run from its last "
        "checkpoint.")
    parser.epilog = ("Example: cribenv train --run-dir runs/quick --total-steps 200000 "
                     "(then: cribenv train --run-dir runs/quick --resume). Settings shown with "
                     "the selfplay defaults; settings of one backend only are marked.")
    parser.add_argument("--run-dir", required=True, help="folder of the run (created)")
    parser.add_argument("--config", help="JSON file of settings (see train/selfplay.py, "
                                         "train/config.py for sb3)")
    parser.add_argument("--backend", choices=BACKENDS, default="selfplay",
                        help="trainer (default selfplay)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir from its last checkpoint")
    parser.add_argument("--address", metavar="ADDRESS",
                        help="[rllib] join the Ray cluster at ADDRESS (e.g. 10.0.0.5:6379 or "
                             "auto) instead of starting a local Ray")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    rllib_kind, rllib_help = _rllib_settings()
    kinds = {"selfplay": SelfPlayConfig(), "sb3": TrainConfig(), "rllib": rllib_kind()}
    owners: dict[str, list[str]] = {}
    for backend, settings in kinds.items():
        for f in fields(settings):
            owners.setdefault(f.name, []).append(backend)
    for name, backends in owners.items():
        flag = "--" + name.replace("_", "-")
        value = getattr(kinds[backends[0]], name)
        only = "" if len(backends) == len(kinds) else f" [{', '.join(backends)}]"
        text = (SELFPLAY_HELP.get(name) or HELP.get(name) or rllib_help.get(name, "")) + only
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


def build_config(args: argparse.Namespace):
    """The settings of the chosen backend from --config and the flags given."""
    kind, _ = _backend(getattr(args, "backend", "selfplay"))
    data = {}
    if args.config:
        data = json.loads(Path(args.config).read_text())
    known = {f.name for f in fields(kind)}
    for f in fields(kind):
        value = getattr(args, f.name, None)
        if value is not None:
            data[f.name] = value
    every = {f.name for kind_ in (SelfPlayConfig, TrainConfig, _rllib_settings()[0])
             for f in fields(kind_)}
    for name in every - known:
        if getattr(args, name, None) is not None:
            raise SystemExit(f"cribenv train: --{name.replace('_', '-')} is not a setting of "
                             f"the {args.backend} backend")
    return kind.from_dict(data)


def run(args: argparse.Namespace) -> int:
    _, train = _backend(args.backend)
    config = build_config(args)
    extra = {}
    if getattr(args, "address", None):
        if args.backend != "rllib":
            raise ValueError(f"--address is a setting of the rllib backend, not of "
                             f"{args.backend}")
        extra["address"] = args.address
    try:
        train(config, args.run_dir, resume=args.resume, progress=not args.no_progress, **extra)
    except KeyboardInterrupt:
        print(f"interrupted: checkpoint saved; continue with "
              f"cribenv train --run-dir {args.run_dir} --resume")
        return 130
    return 0
