"""Cribbage in pure JAX (``jit``, ``vmap``), in Pgx's ``Env`` API: :class:`Cribbage`, its
:class:`State`, and the show and pegging scorers (:mod:`cribenv.jax.engine`). Needs the ``jax``
extra; ``import cribenv`` never imports it."""

from __future__ import annotations

from cribenv.jax.engine import Cribbage, State, peg_points, show_points

__all__ = ["Cribbage", "State", "peg_points", "show_points"]
