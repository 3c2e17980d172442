"""Playing the games of a schedule on a Ray cluster (``cribenv tournament --ray ADDRESS``).

The contract of :func:`tournament.workers.play_tasks`, spread over the cluster's CPUs:
each chunk of tasks is one Ray task (:func:`tournament.workers.play_chunk` on whichever
node has a free CPU) and each finished chunk's rows are handed to ``on_rows`` in this process,
the one SQLite writer. Ray retries a chunk whose worker process or node dies (up to
:data:`RETRIES` times) on another node; a chunk's games depend on its tasks alone, so the
retried chunk gives exactly the rows the lost one would have, and ``on_rows`` sees every chunk
once (the insert skips a game already stored in any case). A driver killed mid-run loses the
chunks in flight only; running the tournament again resumes it.

Every node must be able to import cribenv and build the agents (a ``ppo:PATH`` file must be
at the same path on every node).
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from tournament.schedule import GameTask
from tournament.workers import Rows, chunks, play_chunk

#: times Ray runs a chunk again after its worker process or node died
RETRIES = 5


def _play_on_node(tasks: list[GameTask], rules_dict: dict[str, Any]) -> tuple[str, Rows]:
    """(the node's id, the rows of ``tasks``): runs on a Ray worker."""
    import ray

    return ray.get_runtime_context().get_node_id(), play_chunk(tasks, rules_dict)


def join_cluster(address: str) -> bool:
    """Join the Ray cluster at ``address`` (``HOST:PORT``, or ``"auto"``: the one started on
    this machine); ``True`` if this call connected (the caller disconnects with
    ``ray.shutdown()``); ``ValueError`` naming the address when nothing answers there."""
    import ray

    if ray.is_initialized():
        return False
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if sep and port.isdigit():   # fail in seconds, not after Ray's minutes of retries
        try:
            socket.create_connection((host or "127.0.0.1", int(port)), timeout=5).close()
        except OSError as exc:
            raise ValueError(f"cannot join the Ray cluster at {address!r}: nothing answers "
                             f"there ({exc})") from None
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level="warning")
    except (ConnectionError, ValueError, RuntimeError, SystemExit) as exc:
        raise ValueError(f"cannot join the Ray cluster at {address!r}: {exc}") from None
    return True


def cluster_cpus() -> int:
    """The CPUs of the connected cluster (at least 1)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def map_tasks(fn: Callable[..., Any], args: Iterable[tuple],
              on_result: Callable[[tuple, Any], None], in_flight: int) -> None:
    """Run ``fn(*a)`` for each ``a`` of ``args`` as a Ray task (1 CPU, run again up to
    :data:`RETRIES` times if its worker or node dies) on the connected cluster, at most
    ``in_flight`` at once; ``on_result(a, result)`` is called here as each finishes (in
    completion order). On an error or Ctrl-C the tasks in flight are cancelled."""
    import ray

    remote = ray.remote(num_cpus=1, max_retries=RETRIES)(fn)
    todo = iter(args)
    pending: dict[Any, tuple] = {}

    def submit_next() -> None:
        a = next(todo, None)
        if a is not None:
            pending[remote.remote(*a)] = a

    for _ in range(max(1, in_flight)):
        submit_next()
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            result = ray.get(done[0])
            on_result(pending.pop(done[0]), result)
            submit_next()
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def play_tasks_ray(todo: list[GameTask], chunk_size: int, rules_dict: dict[str, Any],
                   on_rows: Callable[[Rows], None], in_flight: int) -> dict[str, int]:
    """Play ``todo`` in chunks as Ray tasks (at most ``in_flight`` at once) on the connected
    cluster, calling ``on_rows`` with each finished chunk's rows; returns the games played
    per node id."""
    import ray

    rules_ref = ray.put(rules_dict)
    per_node: Counter[str] = Counter()

    def got(_args: tuple, result: tuple[str, Rows]) -> None:
        node, rows = result
        on_rows(rows)
        per_node[node] += len(rows)

    map_tasks(_play_on_node, ((chunk, rules_ref) for chunk in chunks(todo, chunk_size)), got,
              in_flight)
    return dict(per_node)
