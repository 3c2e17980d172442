"""The command line's flags of a settings class (:mod:`train.settings`): one flag a setting,
its type, choices, default and help read from the setting's declaration, so that a setting is
declared once and every command that trains (``cribenv train``, ``cribenv expert-iteration``)
makes its ``--help`` from it."""

from __future__ import annotations

import argparse
import warnings

from train.settings import Setting, described


def add_flag(group, s: Setting, old_name: str | None = None) -> None:
    """The flag ``--name-of-setting`` of ``s`` (with ``old_name``: a hidden flag of that old
    name, read as ``s`` with a warning)."""
    flag = "--" + (old_name or s.name).replace("_", "-")
    if old_name:
        extra = {"help": argparse.SUPPRESS, "dest": s.name,
                 "action": renamed_flag(flag, "--" + s.name.replace("_", "-"))}
    else:
        extra = {"help": s.help if s.help == argparse.SUPPRESS else
                 f"{s.help} (default {shown(s.default)})"}
    if s.kind is bool:
        group.add_argument(flag, type=true_or_false, default=None, metavar="BOOL", **extra)
    elif isinstance(s.default, list):
        group.add_argument(flag, type=type(s.default[0]) if s.default else str, nargs="+",
                           default=None, **extra)
    else:
        group.add_argument(flag, type=s.kind, default=None, choices=s.choices, **extra)


def shown(default) -> str:
    """A default as a flag would give it: ``128 128``, ``0.5``, ``''``."""
    if isinstance(default, list):
        return " ".join(map(str, default))
    return "''" if default == "" else str(default)


def renamed_flag(old: str, new: str) -> type[argparse.Action]:
    """The action of a renamed setting's old flag: read as the new one, with a warning."""

    class Renamed(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            warnings.warn_explicit(f"{old} is now called {new}; it was read as {new}",
                                   FutureWarning, parser.prog, 0)   # said of the command line
            setattr(namespace, self.dest, values)

    return Renamed


def true_or_false(text: str) -> bool:
    """A true-or-false flag's value.

    >>> true_or_false("yes"), true_or_false("0")
    (True, False)
    """
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def settings_from_flags(kind: type, args: argparse.Namespace):
    """The settings of class ``kind`` that the parsed flags ``args`` give (its defaults for
    the flags not given: :func:`add_flag` leaves those None)."""
    return kind(**{s.name: getattr(args, s.name) for s in described(kind)
                   if getattr(args, s.name) is not None})
