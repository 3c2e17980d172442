"""Playing the games of a schedule, in this process or in a pool of worker processes.

Games are played in chunks; each finished chunk's rows are handed to ``on_rows`` in the
calling process (which stores them), so workers never touch the database. A chunk's games
depend on their tasks alone (see :mod:`tournament.schedule`), so the results do not
depend on the number of workers or the order chunks finish in.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

from threadpoolctl import threadpool_limits

from cribenv.game import Rules
from tournament.games import play_task
from tournament.schedule import GameTask

Rows = list[dict[str, Any]]


def chunks(tasks: list[GameTask], size: int) -> Iterator[list[GameTask]]:
    """``tasks`` in consecutive lists of ``size`` (the last may be shorter)."""
    for k in range(0, len(tasks), size):
        yield tasks[k:k + size]


def play_chunk(tasks: list[GameTask], rules_dict: dict[str, Any]) -> Rows:
    """Play ``tasks`` under ``Rules(**rules_dict)``; their rows (runs in a worker)."""
    rules = Rules(**rules_dict)
    return [play_task(t, rules) for t in tasks]


def init_worker() -> None:
    """Set up a worker process of a pool of games (the tournament's, the ladder's, expert
    iteration's and the scripts'): one BLAS thread, Ctrl-C left to the parent, exit with it."""
    # Ctrl-C goes to the parent, which stops the pool; workers must not print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One core a worker: with OpenBLAS's default each worker of the search's tournament on 2
    # cores kept a second thread spinning as busy as its own, and the workers crawled.
    threadpool_limits(1)
    _exit_with_parent()


def _exit_with_parent(every_s: float = 0.5) -> None:
    """Watch the parent from a daemon thread and exit once it is gone (a ``kill -9`` of the
    tournament would otherwise leave the workers blocked on its pipe forever)."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(every_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def cores() -> int:
    """The CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def play_tasks(todo: list[GameTask], chunk_size: int, workers: int,
               rules_dict: dict[str, Any], on_rows: Callable[[Rows], None]) -> int:
    """Play ``todo`` in chunks (``workers == 1``: in this process), calling ``on_rows`` with
    each finished chunk's rows; returns the number of games played."""
    if workers == 1:
        played = 0
        for chunk in chunks(todo, chunk_size):
            rows = play_chunk(chunk, rules_dict)
            on_rows(rows)
            played += len(rows)
        return played
    if not todo:
        return 0
    return _play_in_pool(todo, chunk_size, workers, rules_dict, on_rows)


def _play_in_pool(todo: list[GameTask], chunk_size: int, workers: int,
                  rules_dict: dict[str, Any], on_rows: Callable[[Rows], None]) -> int:
    played = 0
    pieces = chunks(todo, chunk_size)
    ex = cf.ProcessPoolExecutor(max_workers=workers, initializer=init_worker)
    try:
        pending: set[cf.Future] = set()

        def submit_next() -> bool:
            chunk = next(pieces, None)
            if chunk is None:
                return False
            pending.add(ex.submit(play_chunk, chunk, rules_dict))
            return True

        for _ in range(workers * 2):
            if not submit_next():
                break
        while pending:
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                pending.discard(fut)
                rows = fut.result()
                on_rows(rows)
                played += len(rows)
                submit_next()
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return played
