"""The games the server holds in memory, each under an id that cannot be guessed.

    >>> store = Store(ttl_s=60, max_items=2)
    >>> key = store.add("a game")
    >>> len(key) >= 20 and store.get(key)
    'a game'
    >>> try:
    ...     store.get("guess")
    ... except UnknownItemError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    no game 'guess' on this server (games expire after 1 minutes without a move): start...
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["FullError", "Store", "UnknownItemError"]

T = TypeVar("T")


class UnknownItemError(KeyError):
    """No item under that id (never made, or expired)."""

    def __str__(self) -> str:
        return str(self.args[0])


class FullError(RuntimeError):
    """The store holds as many items as it may."""


class Store(Generic[T]):
    """Items under random ids (``secrets.token_urlsafe``: 128 bits), each dropped after
    ``ttl_s`` seconds without a :meth:`get`; at most ``max_items`` at once. Thread-safe."""

    def __init__(self, ttl_s: float = 6 * 3600, max_items: int = 1000, what: str = "game",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_items = max_items
        self.what = what
        self.clock = clock
        self._items: dict[str, tuple[T, float]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._items)

    def add(self, item: T) -> str:
        """Store ``item``; its new id."""
        with self._lock:
            self._expire()
            if len(self._items) >= self.max_items:
                raise FullError(f"the server holds {self.max_items} {self.what}s already; "
                                "try again when some have expired")
            key = secrets.token_urlsafe(16)
            self._items[key] = (item, self.clock())
            return key

    def get(self, key: str) -> T:
        """The item under ``key`` (its clock restarts); :class:`UnknownItemError` if none."""
        with self._lock:
            self._expire()
            got = self._items.get(key)
            if got is None:
                raise UnknownItemError(
                    f"no {self.what} {key[:40]!r} on this server ({self.what}s expire after "
                    f"{self.ttl_s / 60:.0f} minutes without a move): start a new {self.what}")
            self._items[key] = (got[0], self.clock())
            return got[0]

    def _expire(self) -> None:
        now = self.clock()
        old = [k for k, (_, t) in self._items.items() if now - t > self.ttl_s]
        for k in old:
            del self._items[k]
