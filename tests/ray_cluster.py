"""A local Ray cluster on loopback for the multi-node tests (``tests/test_rllib.py``,
``tests/test_ray_tournament.py``): a head node without CPUs, so nothing that needs one runs
there, and one worker node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MB = 1024 ** 2


def head_and_worker(worker_cpus: int, **head_config: Any) -> Iterator[tuple[Any, Any]]:
    """Start the cluster and yield ``(cluster, worker_node)``; shut it down when resumed.
    ``head_config`` adds Ray settings of the head node (``_system_config``, ...)."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "object_store_memory": 100 * MB,
        **head_config})
    worker = cluster.add_node(num_cpus=worker_cpus, object_store_memory=100 * MB)
    cluster.wait_for_nodes()
    try:
        yield cluster, worker
    finally:
        ray.shutdown()
        cluster.shutdown()
