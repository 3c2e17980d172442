"""``cribenv train``: self-play PPO with progress, checkpoints and resume."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from train.config import HELP, TrainConfig


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Self-play PPO (sb3-contrib MaskablePPO) against a pool of frozen snapshots of the "
        "learner and the heuristic bots. Checkpoints are written atomically; --resume "
        "continues a killed run from its last checkpoint.")
    parser.epilog = ("Example: cribenv train --run-dir runs/quick --total-steps 50000 "
                     "--threads 2   (then: cribenv train --run-dir runs/quick --resume)")
    parser.add_argument("--run-dir", required=True, help="folder of the run (created)")
    parser.add_argument("--config", help="JSON file of settings (see train/config.py)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir from its last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    defaults = TrainConfig()
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        value = getattr(defaults, f.name)
        if isinstance(value, bool):
            parser.add_argument(flag, type=_bool, default=None, metavar="BOOL",
                                help=f"{HELP.get(f.name, '')} (default {value})")
        elif isinstance(value, list):
            kind = type(value[0]) if value else str
            shown = " ".join(map(str, value))
            parser.add_argument(flag, type=kind, nargs="+", default=None,
                                help=f"{HELP.get(f.name, '')} (default {shown})")
        else:
            parser.add_argument(flag, type=type(value), default=None,
                                help=f"{HELP.get(f.name, '')} (default {value})")


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def build_config(args: argparse.Namespace) -> TrainConfig:
    data = {}
    if args.config:
        data = json.loads(Path(args.config).read_text())
    for f in fields(TrainConfig):
        value = getattr(args, f.name, None)
        if value is not None:
            data[f.name] = value
    return TrainConfig.from_dict(data)


def run(args: argparse.Namespace) -> int:
    from train.sb3_trainer import train

    config = build_config(args)
    try:
        train(config, args.run_dir, resume=args.resume, progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"interrupted: checkpoint saved; continue with "
              f"cribenv train --run-dir {args.run_dir} --resume")
        return 130
    return 0
