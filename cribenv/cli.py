"""The ``cribenv`` command line: a table of the commands, each named by the module that does
its work, loaded when it runs.

A command's module lives with the layer it uses (``score`` and ``discard`` in
``cribenv/commands/``, ``play`` beside the bots, ``demo`` and ``train`` beside the trainers,
``bench`` in ``train/benchmarks/``) and provides ``configure(parser)`` (adds the arguments) and
``run(args) -> int`` (does the work). This file imports none of them: it names them in
:data:`COMMANDS` and imports the chosen one alone, so ``cribenv score`` and every ``--help``
stay quick, and the core imports no layer above it (``tests/test_layers.py``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

# name -> (module, one-line help): the one place the core names the layers above it
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("webtable.command", "the web table: play the bots in a browser, replays"),
    "score": ("cribenv.commands.score", "score a hand (or crib) with its breakdown"),
    "discard": ("cribenv.commands.discard", "rank the 15 possible discards by expected value"),
    "play": ("agents.terminal", "play a game against a bot in the terminal"),
    "train": ("train.command", "self-play PPO training with checkpoints and resume"),
    "peg-values": ("train.fit_peg_values", "learn the pegging value of kept hands by self-play"),
    "rollouts": ("train.rollouts", "fit the expert-prior card network to paired rollouts"),
    "expert-iteration": ("train.expert_iteration",
                         "distil the search agent's plays into its base network, round by round"),
    "tournament": ("tournament", "bots and checkpoints against each other, with CIs"),
    "ladder": ("tournament.ladder.command",
               "a bot's rating on frozen deals against fixed anchors: the leaderboard"),
    "bench": ("train.benchmarks.command", "benchmarks: scoring, engine and env speed vs baselines"),
    "demo": ("train.demo_command", "the README's main job: a quick tour end to end"),
}

# the folder holding cribenv (a checkout, or site-packages) and the other top-level packages
CHECKOUT = Path(__file__).resolve().parents[1]

# optional module -> the extra of pyproject.toml that installs it
EXTRAS: dict[str, str] = {
    "safetensors": "bots",
    "scipy": "tournament", "choix": "tournament", "matplotlib": "tournament",
    "tqdm": "tournament",
    "numba": "vector",
    "torch": "train", "stable_baselines3": "train", "sb3_contrib": "train",
    "tensorboard": "train",
    "fastapi": "web", "uvicorn": "web", "starlette": "web",
    "ray": "rllib",
}


def _missing_extra(name: str, exc: ModuleNotFoundError) -> int | None:
    """Explain a missing optional module (exit status 2), or ``None`` if it is not one."""
    missing = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(missing)
    if extra is None:
        return None
    print(f"cribenv {name}: needs {missing}, from the '{extra}' extra: "
          f"pip install -e '.[{extra}]'", file=sys.stderr)
    return 2


def load_command(module_name: str) -> ModuleType:
    """The module of a command. In an editable install another distribution's namespace
    package can shadow one of the checkout's top-level packages (torchrl 0.14's wheel installs
    a ``benchmarks`` folder without ``__init__.py``, which shadowed ours until the benchmarks
    moved to ``train.benchmarks``): then the checkout holding ``cribenv`` goes first on the
    path and its package is imported."""
    top = module_name.split(".")[0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        if not _shadowed(top):
            raise
    else:
        if not _shadowed(top):
            return module
    for name in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        del sys.modules[name]
    sys.path.insert(0, str(CHECKOUT))
    return importlib.import_module(module_name)


def _shadowed(top: str) -> bool:
    """Whether ``top`` was imported as a namespace package where the checkout has a package."""
    package = sys.modules.get(top)
    return (package is not None and getattr(package, "__file__", None) is None
            and (CHECKOUT / top / "__init__.py").is_file())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cribenv",
        description="Cribbage as a reinforcement-learning benchmark.",
        epilog="Run 'cribenv COMMAND --help' for the options of a command.",
    )
    from cribenv import __version__

    parser.add_argument("--version", action="version", version=f"cribenv {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] not in COMMANDS:
        args = parser.parse_args(argv)   # prints help / version / the error and exits
        parser.print_help()
        return 2
    name = argv[0]
    module_name, help_text = COMMANDS[name]
    try:
        module = load_command(module_name)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and (status := _missing_extra(name, exc)):
            return status
        print(f"cribenv {name}: cannot import {module_name} ({exc}); "
              "is the 'train' extra installed? pip install -e '.[train]'", file=sys.stderr)
        return 2
    sub = argparse.ArgumentParser(prog=f"cribenv {name}", description=help_text)
    module.configure(sub)
    args = sub.parse_args(argv[1:])
    try:
        status = int(module.run(args) or 0)
        sys.stdout.flush()   # here, so a reader that left is met by the handler below
        return status
    except ModuleNotFoundError as exc:
        status = _missing_extra(name, exc)
        if status is None:
            raise
        return status
    except KeyboardInterrupt:
        print(f"\ncribenv {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:   # `cribenv ... | head`: the reader left; say nothing more
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ValueError as exc:
        print(f"cribenv {name}: error: {exc}", file=sys.stderr)
        return 2
    except (MemoryError, RuntimeError) as exc:   # numpy's MemoryError, torch's RuntimeError
        if not isinstance(exc, MemoryError) and "can't allocate memory" not in str(exc):
            raise
        detail = str(exc).split(": ", 1)[-1].splitlines()[0] if str(exc) else "MemoryError"
        print(f"cribenv {name}: error: not enough memory for these settings ({detail}); "
              f"choose smaller sizes", file=sys.stderr)
        return 2
    except OSError as exc:
        from cribenv.files import no_space

        message = no_space(exc)
        if message is None:
            raise
        print(f"cribenv {name}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
