"""The games (and replays) the server holds in memory, each under an id that cannot be guessed.

A full store never refuses a new item: it makes room by dropping finished items first, then
those unused longest (and, with ``max_bytes``, as many as it takes to stay under that size).
An id it no longer holds gets a message saying why: it expired, it was dropped to make room,
or it was never made here. Each id ends with a check made with the store's ``secret`` (kept
in the games' database, so it outlives a restart), which tells an id this server made from
a mistyped or made-up one.

    >>> store = Store(ttl_s=60, max_items=2)
    >>> key = store.add("a game")
    >>> len(key) >= 20 and store.get(key)
    'a game'
    >>> for name in ("second", "third"):   # full: the game unused longest makes room
    ...     _ = store.add(name)
    >>> try:
    ...     store.get(key)
    ... except UnknownItemError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    no game '...' on this server: it was dropped to make room for newer games (...
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Store", "UnknownItemError", "minutes"]

T = TypeVar("T")
RANDOM_CHARS = 22   # secrets.token_urlsafe(16): 128 random bits
CHECK_CHARS = 8     # 6 bytes of an HMAC of them, base64


class UnknownItemError(KeyError):
    """No item under that id (never made, expired, dropped, or lost in a restart)."""

    def __str__(self) -> str:
        return str(self.args[0])


def minutes(seconds: float) -> str:
    """``seconds`` in whole minutes, in words.

    >>> minutes(20), minutes(60), minutes(21600)
    ('under a minute', '1 minute', '360 minutes')
    """
    n = round(seconds / 60)
    return "under a minute" if n < 1 else f"{n} minute{'s' if n != 1 else ''}"


@dataclass
class _Entry(Generic[T]):
    item: T
    used: float   # the store's clock at the item's last get (or its add)
    size: int


class Store(Generic[T]):
    """Items under random ids (``secrets.token_urlsafe``: 128 bits), each dropped after
    ``ttl_s`` seconds without a :meth:`get`; at most ``max_items`` at once and, with
    ``max_bytes``, at most that many bytes by ``size(item)``. Thread-safe.

    ``finished(item)``: items to drop first when full; ``on_drop(key)``: called for each item
    the store drops; ``restore(key)``: an item it does not hold in memory (one kept in a
    database), ``None`` if there is none, or ``ValueError`` saying why it cannot be had.
    ``secret``: the key of the ids' check (:meth:`issued`); one that outlives the process (a
    database's) makes the ids of an earlier server known; default: a new one."""

    def __init__(self, ttl_s: float = 6 * 3600, max_items: int = 1000, what: str = "game",
                 clock: Callable[[], float] = time.monotonic, *,
                 finished: Callable[[T], bool] = lambda item: False,
                 size: Callable[[T], int] = lambda item: 0, max_bytes: int | None = None,
                 on_drop: Callable[[str], None] | None = None,
                 restore: Callable[[str], T | None] | None = None,
                 secret: bytes | None = None) -> None:
        if max_items < 1:
            raise ValueError(f"a store holds at least one {what}, not {max_items}")
        self.ttl_s = ttl_s
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.what = what
        self.clock = clock
        self.started = clock()
        self.finished = finished
        self.size = size
        self.on_drop = on_drop
        self.restore = restore
        self.lasting = secret is not None   # the ids of an earlier server are known
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._items: OrderedDict[str, _Entry[T]] = OrderedDict()   # unused longest first
        self._bytes = 0
        self._gone: OrderedDict[str, str] = OrderedDict()   # recently dropped id -> why
        self._expired = f"it expired ({self._ttl_words()})"
        self._made_room = (f"it was dropped to make room for newer {what}s (finished ones and "
                           "those unused longest go first)")
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._items)

    @property
    def bytes(self) -> int:
        """The total ``size`` of the items held."""
        with self._lock:
            return self._bytes

    def add(self, item: T) -> str:
        """Store ``item`` (making room if the store is full); its new id."""
        size = self.size(item)
        if self.max_bytes is not None and size > self.max_bytes:
            raise ValueError(f"this {self.what} is {size} bytes, more than the server holds "
                             f"of all {self.what}s together ({self.max_bytes})")
        with self._lock:
            key = secrets.token_urlsafe(16)
            key += self._check(key)
            self._put(key, item, size)
            return key

    def issued(self, key: str) -> bool:
        """Whether ``key`` is an id this store's secret made (now, or before a restart when
        the secret outlives it): its check matches."""
        random = key[:RANDOM_CHARS]
        return (len(key) == RANDOM_CHARS + CHECK_CHARS and len(random) == RANDOM_CHARS
                and hmac.compare_digest(key[RANDOM_CHARS:].encode(),
                                        self._check(random).encode()))

    def _check(self, random: str) -> str:
        digest = hmac.new(self._secret, random.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:6]).decode()

    def get(self, key: str) -> T:
        """The item under ``key`` (its clock restarts); :class:`UnknownItemError` if none."""
        with self._lock:
            self._expire()
            entry = self._items.get(key)
            if entry is not None:
                entry.used = self.clock()
                self._items.move_to_end(key)
                return entry.item
            why = self._gone.get(key)
        if why is None and self.restore is not None:
            try:
                item = self.restore(key)   # outside the lock: replaying a game takes a while
            except ValueError as exc:
                why = str(exc)
            else:
                if item is not None:
                    with self._lock:
                        if key not in self._items:   # not restored meanwhile by another get
                            self._put(key, item, self.size(item))
                        return self._items[key].item
        raise UnknownItemError(self._unknown(key, why))

    # ------------------------------------------------------------------ internals
    def _put(self, key: str, item: T, size: int) -> None:
        self._expire()
        while self._items and (len(self._items) >= self.max_items or (
                self.max_bytes is not None and self._bytes + size > self.max_bytes)):
            self._drop(self._next_to_drop(), self._made_room)
        self._items[key] = _Entry(item, self.clock(), size)
        self._bytes += size

    def _next_to_drop(self) -> str:
        """A finished item (the one unused longest), else the item unused longest."""
        for key, entry in self._items.items():
            if self.finished(entry.item):
                return key
        return next(iter(self._items))

    def _expire(self) -> None:
        now = self.clock()
        while self._items:
            key, entry = next(iter(self._items.items()))
            if now - entry.used <= self.ttl_s:
                break
            self._drop(key, self._expired)

    def _drop(self, key: str, why: str) -> None:
        entry = self._items.pop(key)
        self._bytes -= entry.size
        self._gone[key] = why
        while len(self._gone) > 10 * self.max_items:
            self._gone.popitem(last=False)
        if self.on_drop is not None:
            self.on_drop(key)

    def _ttl_words(self) -> str:
        return f"{self.what}s expire after {minutes(self.ttl_s)} without a move"

    def _unknown(self, key: str, why: str | None) -> str:
        if why is None:
            if self.issued(key):   # made here, and gone (its reason forgotten since)
                why = (f"it is no longer kept ({self._ttl_words()}; a full server drops "
                       "finished ones and those unused longest)")
            elif self.lasting:
                why = f"this server never made a {self.what} under this id (a mistyped link?)"
            else:
                up = self.clock() - self.started
                ago = "a moment ago" if up < 60 else f"{minutes(up)} ago"
                why = (f"this server (started {ago}) never made it: a mistyped link, or a "
                       f"{self.what} from before it started ({self.what}s are kept in memory "
                       "only)")
        return f"no {self.what} {key[:40]!r} on this server: {why}: start a new {self.what}"
