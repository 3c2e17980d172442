"""``cribenv train``: self-play PPO with progress, checkpoints and resume.

The flags are the settings of the backend chosen with ``--backend`` (read from the command line
before the flags are made), with that backend's defaults and choices: ``cribenv train --backend
sb3 --help`` lists sb3's."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cribenv.checks import writable_dir
from train.checkpoints import check_log, read_checkpoint, resume_settings, saved_settings
from train.flags import add_flag
from train.run_lock import holding
from train.settings import Setting, described, read_settings

BACKENDS = ("selfplay", "sb3", "rllib")


def settings_class(name: str) -> type:
    """The settings dataclass of the backend ``name`` (torch-free)."""
    if name == "sb3":
        from train.config import TrainConfig
        return TrainConfig
    if name == "rllib":
        from train.rllib_config import RLlibConfig
        return RLlibConfig
    from train.selfplay_config import SelfPlayConfig
    return SelfPlayConfig


def _backend(name: str):
    """(settings dataclass, train function) of ``--backend``."""
    if name == "sb3":
        from train.sb3_trainer import train
    elif name == "rllib":
        from train.rllib_trainer import train
    else:
        from train.selfplay import train
    return settings_class(name), train


def configure(parser: argparse.ArgumentParser) -> None:
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
                     "(then: cribenv train --run-dir runs/quick --resume). The settings listed "
                     "are those of --backend, with its defaults: cribenv train --backend sb3 "
                     "--help lists sb3's.")
    parser.add_argument("--run-dir", help="folder of the run (created; required; one run at "
                                          "a time: a second one on it is refused)")
    parser.add_argument("--config", help="JSON file of settings, named as the flags below with "
                                         "underscores (--total-steps: total_steps)")
    parser.add_argument("--backend", choices=BACKENDS, default="selfplay",
                        help="trainer (default selfplay); the settings below are its own")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --run-dir from its last checkpoint, with its "
                             "own settings: only the flags given change them, and only the "
                             "length, hardware and bookkeeping ones (total-steps, threads, "
                             "checkpoint-every, eval-every, eval-games, ...); another setting "
                             "given that differs is refused. With --backend sb3 this loads an "
                             "SB3 archive (pickle): resume only runs you made")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    indent = "\n" + " " * len(f"usage: {parser.prog} ")
    parser.usage = ("%(prog)s [-h] --run-dir RUN_DIR [--config CONFIG] [--resume]" + indent +
                    "[--backend {selfplay,sb3,rllib}] [--no-progress]" + indent +
                    "[--SETTING VALUE ...]")
    parse_known_args = parser.parse_known_args

    def with_the_backends_settings(args=None, namespace=None):
        args = list(sys.argv[1:] if args is None else args)
        add_settings(parser, chosen_backend(args, parser.prog))
        return parse_known_args(args, namespace)

    parser.parse_known_args = with_the_backends_settings  # type: ignore[method-assign]


def chosen_backend(args: list[str], prog: str = "cribenv train") -> str:
    """The ``--backend`` of the command line ``args`` (selfplay when none is given; a name
    that is not a backend is left for the full parser to refuse).

    >>> chosen_backend(["--run-dir", "r", "--backend=sb3", "--help"]), chosen_backend([])
    ('sb3', 'selfplay')
    """
    pre = argparse.ArgumentParser(prog=prog, add_help=False)
    pre.add_argument("--backend", default="selfplay")
    name = pre.parse_known_args(args)[0].backend
    return name if name in BACKENDS else "selfplay"


def add_settings(parser: argparse.ArgumentParser, backend: str) -> None:
    """A flag for each setting of ``backend`` (its default, choices and help), in two groups:
    the settings every backend has, then its own. The other backends' settings and the old
    names of renamed ones are flags too, hidden, so that :func:`requested_settings` can say
    what they are."""
    if getattr(parser, "settings_of", None) is not None:   # parsed before: added then
        return
    parser.settings_of = backend  # type: ignore[attr-defined]
    kind = settings_class(backend)
    shared = parser.add_argument_group(f"settings of every backend ({backend} defaults)")
    own = parser.add_argument_group(f"settings of the {backend} backend")
    mine = {s.name for s in described(kind)}
    own.add_argument("--address", metavar="ADDRESS",
                     help="join the Ray cluster at ADDRESS (e.g. 10.0.0.5:6379 or auto) "
                          "instead of starting a local Ray" if backend == "rllib"
                          else argparse.SUPPRESS)
    for s in described(kind):
        add_flag(shared if s.shared else own, s)
    for old, new in kind.RENAMED.items():
        add_flag(parser, next(s for s in described(kind) if s.name == new), old)
    hidden: dict[str, Setting] = {}
    for other in BACKENDS:
        other_kind = settings_class(other)
        for s in described(other_kind):
            hidden.setdefault(s.name, s)
        for old, new in other_kind.RENAMED.items():
            hidden.setdefault(old, next(s for s in described(other_kind) if s.name == new))
    for name, s in hidden.items():
        if name not in mine and name not in kind.RENAMED:
            add_flag(parser, s._replace(name=name, help=argparse.SUPPRESS, choices=None))


def requested_settings(args: argparse.Namespace) -> dict:
    """The settings asked for: those of --config (old names read as the new ones), then the
    flags given (never the defaults)."""
    backend = getattr(args, "backend", "selfplay")
    kind = settings_class(backend)
    data = kind.renamed(read_settings(args.config, "--config")) if args.config else {}
    mine = {s.name for s in described(kind)}
    for name in mine:
        value = getattr(args, name, None)
        if value is not None:
            data[name] = value
    for other in BACKENDS:
        other_kind = settings_class(other)
        for name in [s.name for s in described(other_kind)] + list(other_kind.RENAMED):
            if name not in mine and getattr(args, name, None) is not None:
                raise ValueError(f"--{name.replace('_', '-')} is not a setting of the "
                                 f"{backend} backend (it is one of {other}'s)")
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
    run_dir = writable_dir(args.run_dir, "--run-dir")
    config = build_config(args)
    extra = {}
    if getattr(args, "address", None):
        if args.backend != "rllib":
            raise ValueError(f"--address is a setting of the rllib backend, not of "
                             f"{args.backend}")
        extra["address"] = args.address
    if getattr(config, "device", "cpu") != "cpu":
        from train.selfplay_config import check_device

        check_device(config.device)
    from train.evaluation import check_bots

    check_bots(config.heuristics, getattr(config, "num_players", 2), config.target)
    with _held(run_dir):
        if args.resume:
            ckpt, state = read_checkpoint(run_dir)
            if _finished(state, config) and (run_dir / "policy.safetensors").is_file():
                print(f"nothing left to train: {ckpt} is at step {state['step']:,} and the "
                      f"run's total_steps is {config.total_steps:,}; pass --total-steps N to "
                      f"train further")
                return 0   # without its policy file, the trainer writes it from the checkpoint
            progress = "time/total_timesteps" if args.backend == "sb3" else "step"
            for log, column in (("logs/progress.csv", progress), ("eval.csv", "step")):
                check_log(run_dir / log, column)   # before anything changes
        try:
            train(config, args.run_dir, resume=args.resume, progress=not args.no_progress,
                  **extra)
        except KeyboardInterrupt:
            print(f"interrupted: checkpoint saved; continue with "
                  f"cribenv train --run-dir {args.run_dir} --resume")
            return 130
    return 0


def _finished(state: dict, config) -> bool:
    """Whether the checkpoint ``state`` of a run is at its end, its final policy evaluated
    (an evaluation a stop gave up is played by the resume)."""
    evals = state.get("evals")
    last = evals[-1] if isinstance(evals, list) and evals else None
    evaluated = (not config.eval_games or not isinstance(evals, list)
                 or (isinstance(last, dict) and last.get("step") == state["step"]))
    return state["step"] >= config.total_steps and evaluated


@contextmanager
def _held(run_dir: Path) -> Iterator[None]:
    """The run folder, made if need be and held for this run (:func:`train.run_lock.holding`:
    a second trainer on it is refused); the folders this run made are removed again when it
    fails before writing anything in them (never one another run made, nor one it holds)."""
    made = []
    for folder in reversed([run_dir, *run_dir.parents]):   # from the top down
        if not folder.exists():
            try:
                folder.mkdir()
                made.append(folder)
            except FileExistsError:   # made meanwhile by another run
                pass
    with holding(run_dir, "training run"):
        try:
            yield
        finally:
            for folder in reversed(made):   # the deepest first
                if not any(folder.iterdir()):
                    folder.rmdir()
