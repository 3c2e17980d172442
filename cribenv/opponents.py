"""Opponents by name: how the single-agent wrapper turns ``"greedy"`` into a bot.

``cribenv`` ships no bots (they live in the ``agents`` package, a layer above), so a spec string
such as ``"greedy"`` or ``"ppo:PATH"`` is resolved through this registry, which ``cribenv`` fills
without importing any package above it. Two ways in:

* an installed package declares a *maker* in the ``cribenv.opponents`` entry-point group; this
  project's ``pyproject.toml`` declares ``agents = "agents:make_agent"``, so that with the
  project installed (``pip install -e .``) every :func:`agents.make_agent` spec works. Entry
  points are loaded the first time a spec is resolved, never at import;
* :func:`register` adds a maker for one kind of spec at run time (the kind is the part before
  the first ``:``), which wins over the entry points::

      >>> from cribenv import opponents
      >>> class FirstLegal:
      ...     name = "first-legal"
      ...     def act(self, observation):
      ...         return int(observation["action_mask"].argmax())
      >>> opponents.register("first-legal", lambda spec, seed=None: FirstLegal())
      >>> opponents.make("first-legal", seed=0).name
      'first-legal'
      >>> opponents.unregister("first-legal")

A maker is ``maker(spec: str, seed: int | None = None) -> opponent``, where the opponent has
``act(observation_dict) -> card`` (and optionally ``reset()``) or is a callable
``f(observation_dict) -> card``; it raises ``ValueError`` for a spec it does not know.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "Maker", "make", "register", "unregister", "makers"]

ENTRY_POINT_GROUP = "cribenv.opponents"

Maker = Callable[..., Any]

_REGISTERED: dict[str, Maker] = {}


def register(kind: str, maker: Maker) -> None:
    """Resolve specs of ``kind`` (``"kind"`` or ``"kind:ARG"``) with ``maker(spec, seed=...)``."""
    if not isinstance(kind, str) or not kind or ":" in kind:
        raise ValueError(f"an opponent kind is a non-empty name without ':', got {kind!r}")
    if not callable(maker):
        raise TypeError(f"a maker must be callable as maker(spec, seed=...), got {maker!r}")
    _REGISTERED[kind] = maker


def unregister(kind: str) -> None:
    """Forget the maker :func:`register` gave ``kind`` (no error if there is none)."""
    _REGISTERED.pop(kind, None)


@functools.cache
def _entry_point_makers() -> tuple[tuple[str, Maker], ...]:
    """The makers installed packages declare in the entry-point group, by name (loaded once)."""
    found = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    return tuple((ep.name, ep.load()) for ep in found)


def makers() -> dict[str, Maker]:
    """Every maker: the registered kinds, then the installed entry points (by name)."""
    return {**_REGISTERED, **dict(_entry_point_makers())}


def make(spec: str, seed: int | None = None) -> Any:
    """The opponent a spec string names, built with ``seed``.

    A maker registered for the spec's kind builds it; otherwise the entry-point makers are
    asked in name order and the first that knows the spec (does not raise ``ValueError``) wins.
    With a single installed maker (this project: :func:`agents.make_agent`) its own error
    message is raised as it is.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"an opponent spec must be a non-empty string, e.g. 'random'; "
                         f"got {spec!r}")
    maker = _REGISTERED.get(spec.partition(":")[0])
    if maker is not None:
        return maker(spec, seed=seed)
    installed = _entry_point_makers()
    if not installed:
        raise ValueError(
            f"no maker for the opponent {spec!r}: none is registered for its kind and no "
            f"installed package declares one in the {ENTRY_POINT_GROUP!r} entry-point group "
            "(install this project with pip install -e . to get the bots of agents.make_agent, "
            "call cribenv.opponents.register(kind, maker), or pass an object with act())")
    if len(installed) == 1:
        return installed[0][1](spec, seed=seed)
    errors = []
    for name, maker in installed:
        try:
            return maker(spec, seed=seed)
        except ValueError as exc:
            errors.append(f"{name}: {exc}")
    raise ValueError(f"no installed maker knows the opponent {spec!r} ({'; '.join(errors)})")
