"""The processes of a self-play run (``workers``): one learner on every core of a machine.

With ``workers=N`` the run is N processes, data-parallel in the manner of DD-PPO (Wijmans et
al., 2020) and CleanRL's multi-GPU PPO: each plays its share of the games with the same
network, computes the gradient of its share of every minibatch, and the gradients are summed
across the processes (``torch.distributed`` over gloo, on the loopback) before each optimiser
step, which every process takes alike, so all hold the same weights at every step. The process
the command runs (rank 0, the *leader*) also writes: snapshots, evaluations, checkpoints, logs.

:class:`Solo` is the run of one process: every collective is the identity, so ``workers=1`` is
the trainer as it always was. :class:`Team` is one process of N; :func:`team` starts the N - 1
others (each runs the function it is given, :func:`train.selfplay.follow`) and waits for them.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import math
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

#: how long a process waits for the others at a collective: the leader's evaluation games run
#: while the followers wait (a peer that dies ends the wait at once: its socket closes)
WAIT = datetime.timedelta(hours=24)
HOST = "127.0.0.1"


class Solo:
    """The run of one process: every collective is the identity.

    >>> Solo().sum([1.0, 2.0]), Solo().gather({"a": 1}), Solo().any(False)
    ([1.0, 2.0], [{'a': 1}], False)
    """

    rank, size, leader = 0, 1, True

    def sum(self, values: list[float]) -> list[float]:
        """``values`` summed over the processes, element by element."""
        return list(values)

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` is true in any process."""
        return bool(flag)

    def gather(self, obj: Any) -> list[Any]:
        """Every process's ``obj`` (picklable), in rank order, in every process."""
        return [obj]

    def share(self, obj: Any) -> Any:
        """The leader's ``obj``, in every process."""
        return obj

    def add_gradients(self, params: list[torch.Tensor]) -> None:
        """Replace each parameter's gradient by its sum over the processes."""

    def parts(self, n: int, size: int) -> int:
        """How many minibatches each process cuts its ``n`` rows into so that the team's hold
        about ``size`` rows each (0 for one process, which cuts slices of ``size``; 0 too when
        a process has no row: then none learns from this batch)."""
        return 0

    def barrier(self) -> None:
        """Wait until every process is here."""


SOLO = Solo()


class Team(Solo):
    """Process ``rank`` of ``size``, joined through the store at ``HOST:port``."""

    def __init__(self, rank: int, size: int, store: dist.Store) -> None:
        self.rank, self.size, self.leader = rank, size, rank == 0
        dist.init_process_group("gloo", store=store, rank=rank, world_size=size, timeout=WAIT)

    def sum(self, values: list[float]) -> list[float]:
        t = torch.tensor(values, dtype=torch.float64)
        dist.all_reduce(t)
        return t.tolist()

    def any(self, flag: bool) -> bool:
        return self.sum([float(bool(flag))])[0] > 0

    def gather(self, obj: Any) -> list[Any]:
        out: list[Any] = [None] * self.size
        dist.all_gather_object(out, obj)
        return out

    def share(self, obj: Any) -> Any:
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def parts(self, n: int, size: int) -> int:
        counts = self.gather(n)
        return min(math.ceil(sum(counts) / size), min(counts))

    def add_gradients(self, params: list[torch.Tensor]) -> None:
        """One all-reduce of every gradient, flattened (the same parameters have a gradient
        in every process: they run the same losses)."""
        grads = [p.grad for p in params if p.grad is not None]
        if not grads:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        start = 0
        for g in grads:
            g.copy_(flat[start:start + g.numel()].view_as(g))
            start += g.numel()

    def barrier(self) -> None:
        dist.barrier()

    def close(self) -> None:
        dist.destroy_process_group()


def weights_digest(module: torch.nn.Module) -> str:
    """A digest of ``module``'s weights, bit for bit: the processes compare theirs at every
    checkpoint (:func:`check_same_weights`)."""
    h = hashlib.sha256()
    for name, w in module.state_dict().items():
        h.update(name.encode())
        h.update(w.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def check_same_weights(digests: list[str]) -> None:
    """A RuntimeError when the processes' weights differ (never expected: each takes the same
    step from the same summed gradient)."""
    if len(set(digests)) > 1:
        raise RuntimeError(f"the processes' weights differ: digests {digests}")


@contextlib.contextmanager
def team(workers: int, follow: Callable[[Team], None]):
    """The run's processes: :class:`Solo` for one; for more, this process as the leader of
    a :class:`Team` and ``workers - 1`` followers started (spawned, each running
    ``follow(its Team)``) and, on leaving, waited for (or ended, when the leader fails)."""
    if workers == 1:
        yield Solo()
        return
    store = dist.TCPStore(HOST, 0, workers, is_master=True, wait_for_workers=False)
    spawn = multiprocessing.get_context("spawn")
    followers = [spawn.Process(target=_follower_main, args=(follow, rank, workers, store.port),
                               name=f"cribenv-selfplay-{rank}", daemon=True)
                 for rank in range(1, workers)]
    for p in followers:
        p.start()
    leader = None
    try:
        leader = Team(0, workers, store)
        yield leader
    except BaseException:
        deadline = time.monotonic() + 3   # a follower that failed is exiting: its code
        for p in followers:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        failed = [f"worker {rank} (exit code {p.exitcode})"
                  for rank, p in enumerate(followers, 1) if p.exitcode not in (None, 0)]
        for p in followers:
            p.terminate()
        if failed:   # a follower's error ended the run: say so (its traceback is above)
            raise RuntimeError(f"self-play stopped: {', '.join(failed)} failed") from None
        raise
    finally:
        for p in followers:
            p.join(timeout=60)
        if leader is not None:
            leader.close()


def _follower_main(follow: Callable[[Team], None], rank: int, size: int, port: int) -> None:
    """A follower process: join the team and run ``follow`` in it."""
    store = dist.TCPStore(HOST, port, size, is_master=False,
                          timeout=datetime.timedelta(seconds=60))
    member = Team(rank, size, store)
    try:
        follow(member)
    finally:
        member.close()
