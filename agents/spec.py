"""A bot spec, read in one place and built in one place: the grammar of :func:`make_agent`.

A spec names a bot; a tournament's entrant may carry a label before it (``LABEL=SPEC``)::

    random | greedy | expert                a kind that takes nothing after ':'
    ppo:PATH                                a policy file (ppo:shipped, ppo:scratch, a path)
    search:BASE?playouts=600&margin=1       the search over any spec BASE (agents.search)
    openspiel:ALGO?simulations=100&uct_c=2  OpenSpiel's search (agents.openspiel)
    cmd[move=2,game=60]:COMMAND             a program speaking the protocol (agents.external)

:func:`parse` reads a spec into a :class:`BotSpec` (its kind, argument, settings and, for the
search, its base, itself a :class:`BotSpec`) and refuses a bad one with a ``ValueError`` that
names what is wrong. Each kind that takes an argument declares how it is read once, where it
registers its maker (:func:`register_agent`'s ``read``): a kind with ``?key=value&...``
settings declares them in a :class:`Settings` (how each is read, and the one check of their
ranges). :func:`build` makes the agent of a parsed spec (the search builds its base there
too), and :func:`make_agent` is the two. :func:`parse_spec` reads a labelled entrant
(:class:`AgentSpec`, what the tournament, the ladder and the web table read).

>>> spec = parse("search:ppo:scratch?models=own&playouts=200")
>>> spec.kind, spec.arg, spec.options, spec.base.kind, spec.base.arg
('search', 'ppo:scratch', {'models': 'own', 'playouts': 200}, 'ppo', 'scratch')
>>> parse("cmd[move=2]:python bot.py").options
{'move_time': 2.0}
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

__all__ = ["FLAG", "NUMBER", "TEXT", "WHOLE", "AgentSpec", "BotSpec", "Reader", "Settings",
           "agent_spellings", "available_agents", "build", "make_agent", "parse", "parse_spec",
           "register_agent", "unknown_agent_message"]


@dataclass(frozen=True)
class BotSpec:
    """A spec as read: ``text`` (as written), ``kind`` (lower case; ``cmd`` for
    ``cmd[...]``), ``arg`` (the kind's argument without its settings: a path, a command, an
    algorithm, the search's base), ``settings`` (the kind's settings, read and checked, as
    pairs) and ``base`` (the search's base, read)."""

    text: str
    kind: str
    arg: str = ""
    settings: tuple[tuple[str, Any], ...] = ()
    base: BotSpec | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The settings as a dict (the keywords the kind's maker takes)."""
        return dict(self.settings)

    @property
    def rest(self) -> str:
        """What follows the kind and ':' as written (``search:{rest}`` names the search)."""
        return self.text.partition(":")[2]


# ------------------------------------------------------------------------------------------
# The settings of a kind: ``?key=value&...``, declared once by the kind
# ------------------------------------------------------------------------------------------

def _flag(text: str) -> bool:
    if text.lower() not in ("true", "false", "1", "0"):
        raise ValueError(text)
    return text.lower() in ("true", "1")


@dataclass(frozen=True)
class Reader:
    """How a setting's text is read (``read``), and the message when it cannot be
    (``error``, formatted with ``kind``, ``noun``, ``key`` and ``value``)."""

    read: Callable[[str], Any]
    error: str = "{noun} {key}={value!r} is not a number"


WHOLE = Reader(int)
NUMBER = Reader(float)
TEXT = Reader(str)
FLAG = Reader(_flag, "{kind} {key} must be true or false, got {value!r}")


@dataclass(frozen=True)
class Settings:
    """The ``HEAD?key=value&...`` argument of a kind: ``read`` declares each setting and how its
    text is read; ``check(head, given) -> settings`` is the one check of their ranges (a
    ValueError naming the setting and the value), and what it returns is kept.

    ``noun`` names a setting in messages (``"search option"``); ``malformed`` is the message
    (formatted with ``part`` and ``head``) for a part that is not ``key=value``, and for a key
    not declared when ``strict`` (else the key's text goes to ``check``, which names it);
    ``needs`` the message for an empty head; ``lower_head`` reads the head in lower case;
    ``nested``: the head is a spec itself (the search's base), read into ``BotSpec.base``.
    """

    kind: str
    noun: str
    read: Mapping[str, Reader]
    check: Callable[[str, dict[str, Any]], dict[str, Any]]
    malformed: str
    needs: str
    strict: bool = True
    lower_head: bool = False
    nested: bool = False

    def __call__(self, arg: str) -> tuple[str, dict[str, Any]]:
        """``"HEAD?k=v&..."`` -> ``(HEAD, settings)``, read and checked."""
        head, _, query = arg.partition("?")
        if self.lower_head:
            head = head.lower()
        if not head:
            raise ValueError(self.needs)
        given: dict[str, Any] = {}
        for part in filter(None, query.split("&")):
            key, eq, value = part.partition("=")
            if not eq or (self.strict and key not in self.read):
                raise ValueError(self.malformed.format(part=part, head=head))
            if key in given:
                raise ValueError(f"{self.noun} {key!r} is given twice; give it once")
            reader = self.read.get(key, TEXT)
            try:
                given[key] = reader.read(value)
            except ValueError:
                raise ValueError(reader.error.format(kind=self.kind, noun=self.noun, key=key,
                                                     value=value)) from None
        return head, self.check(head, given)


# ------------------------------------------------------------------------------------------
# The kinds: who makes each, and how its argument is read
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Kind:
    make: Callable[..., Any]
    read: Callable[[str], tuple[str, dict[str, Any]]] | None = None


_KINDS: dict[str, _Kind] = {}
# The module that registers each built-in kind, imported by its first look-up (so that
# ``import agents`` and a command's ``--help`` stay quick, and "random" never loads numba).
BUILT_IN_MODULES = {"cmd": "agents.external", "expert": "agents.expert",
                    "greedy": "agents.greedy", "openspiel": "agents.openspiel",
                    "ppo": "agents.ppo", "random": "agents.base", "search": "agents.search"}
#: The kinds that take an argument, as messages list them.
_WITH_ARG = ("ppo:PATH", "search:BASE", "cmd:COMMAND", "openspiel:ALGO")


def register_agent(name: str, factory: Callable[..., Any],
                   read: Callable[[str], tuple[str, dict[str, Any]]] | None = None) -> None:
    """Make ``make_agent(name)`` build ``factory(seed=..., **kwargs)``.

    With ``read`` the kind takes an argument, ``name:ARG``: ``read(ARG) -> (head, settings)``
    reads it (a ValueError for a bad one; a :class:`Settings` for ``?key=value&...``) and the
    agent is ``factory(spec, seed=..., **kwargs)``, ``spec`` the :class:`BotSpec`.
    """
    _KINDS[name] = _Kind(factory, read)


def _kinds(name: str | None = None) -> dict[str, _Kind]:
    """The kinds, with the built-in kind ``name`` registered (every one if ``None``)."""
    for key, module in BUILT_IN_MODULES.items():
        if name is None or name == key:
            importlib.import_module(module)
    return _KINDS


def available_agents() -> list[str]:
    """Names accepted by :func:`make_agent` (plus ``"ppo:PATH"``)."""
    return sorted(_kinds())


def agent_spellings() -> list[str]:
    """Every way to name an agent, as a message lists them.

    >>> agent_spellings()[:3]
    ['expert', 'greedy', 'random']
    """
    simple = [n for n in available_agents() if n not in ("cmd", "openspiel", "ppo", "search")]
    shipped = importlib.import_module(BUILT_IN_MODULES["ppo"]).shipped_specs()
    return simple + [*shipped, *_WITH_ARG]


def unknown_agent_message(spec: str) -> str:
    """The error for an agent spec nobody registered: every spelling, and the nearest.

    >>> print(unknown_agent_message("gredy")[:47])
    unknown agent 'gredy' (did you mean 'greedy'?):
    """
    names = agent_spellings()
    near = difflib.get_close_matches(spec.lower(), [n for n in names if n not in _WITH_ARG],
                                     n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    listed = ", ".join(names).replace("ppo:PATH", "ppo:PATH (a policy file)").replace(
        "search:BASE", "search:BASE (e.g. search:ppo:shipped)").replace(
        "cmd:COMMAND", "cmd:COMMAND (a program speaking the Cribbage Bot Protocol)").replace(
        "openspiel:ALGO", "openspiel:ALGO (OpenSpiel's search: openspiel:ismcts or "
        "openspiel:mcts)")
    return f"unknown agent {spec!r}{hint}: expected one of {listed}"


# ------------------------------------------------------------------------------------------
# Reading a spec, and building its agent
# ------------------------------------------------------------------------------------------

def parse(text: str) -> BotSpec:
    """The :class:`BotSpec` of ``text``: its kind known, its argument and settings read and
    checked by the kind's declaration, a search's base read too; a ValueError otherwise.

    >>> parse("openspiel:mcts?simulations=10&worlds=6")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: openspiel worlds must be a whole number from 1 to 5 (each world's ...), got 6
    >>> parse("greedy:x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: agent 'greedy:x': 'greedy' takes nothing after ':' (only ppo:PATH does); ...
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"agent spec must be a non-empty string, got {text!r}")
    name, _, arg = text.partition(":")
    name = name.lower()
    if name.startswith("cmd[") and name.endswith("]"):   # cmd[move=2,game=60]:COMMAND
        arg, name = f"[{name[4:-1]}]{arg}", "cmd"
    kind = _kinds(name).get(name)
    if kind is None:
        raise ValueError(unknown_agent_message(text))   # (its listing loads every kind)
    if kind.read is None:
        if arg or text.endswith(":"):
            raise ValueError(f"agent {text!r}: {name!r} takes nothing after ':' (only "
                             f"ppo:PATH does); write {name!r}")
        return BotSpec(text, name)
    head, settings = kind.read(arg)
    base = parse(head) if getattr(kind.read, "nested", False) else None
    return BotSpec(text, name, head, tuple(settings.items()), base)


def build(spec: BotSpec | str, seed: int | None = None, **kwargs: Any) -> Any:
    """The agent of ``spec`` (a :class:`BotSpec`, or a spec's text, read first): the one place
    an agent is made from a spec. ``seed`` makes its every random choice reproducible."""
    if not isinstance(spec, BotSpec):
        spec = parse(spec)
    kind = _kinds(spec.kind)[spec.kind]
    if kind.read is None:
        return kind.make(seed=seed, **kwargs)
    return kind.make(spec, seed=seed, **kwargs)


def make_agent(spec: str, seed: int | None = None, **kwargs: Any) -> Any:
    """Build an agent from a spec: ``"random"``, ``"greedy"``, ``"expert"``, ``"ppo:PATH"``,
    ``"search:BASE"`` (:mod:`agents.search`, e.g. ``"search:ppo:shipped?playouts=600"``),
    ``"cmd:COMMAND"`` (a program speaking the Cribbage Bot Protocol, :mod:`agents.external`),
    ``"openspiel:ALGO"`` (OpenSpiel's ISMCTS or MCTS, :mod:`agents.openspiel`):
    :func:`build` of :func:`parse`.

    ``seed`` makes every random choice of the agent reproducible.
    """
    return build(parse(spec), seed=seed, **kwargs)


# ------------------------------------------------------------------------------------------
# A labelled entrant: LABEL=SPEC
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentSpec:
    """A tournament entrant: ``label`` (its name in results) and the ``make_agent`` spec.

    Written ``LABEL=SPEC`` on the command line (``strong=ppo:runs/a/policy.safetensors``, or
    ``random2=random`` to enter the same bot twice), or just ``SPEC`` (the label is the spec).
    The spec is read (:attr:`bot`) when first asked for, once: a stored tournament's entrants
    load without their policy files.
    """

    label: str
    spec: str

    def __str__(self) -> str:
        return self.spec if self.label == self.spec else f"{self.label}={self.spec}"

    @cached_property
    def bot(self) -> BotSpec:
        """The spec, read (:func:`parse`; a ValueError for a bad one)."""
        return parse(self.spec)


def parse_spec(text: str) -> AgentSpec:
    """``LABEL=SPEC`` or ``SPEC`` as an :class:`AgentSpec`.

    >>> parse_spec("random2=random"), parse_spec("ppo:runs/a=b.safetensors").label
    (AgentSpec(label='random2', spec='random'), 'ppo:runs/a=b.safetensors')
    >>> parse_spec("cmd[move=2]:python bot.py").spec     # '=' inside a spec's options
    'cmd[move=2]:python bot.py'
    >>> parse_spec("mine=cmd[move=2]:python bot.py").label
    'mine'
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {text!r}")
    text = text.strip()
    label, sep, spec = text.partition("=")
    if sep and label and spec and ":" not in label and "[" not in label:
        return AgentSpec(label.strip(), spec.strip())
    return AgentSpec(text, text)
