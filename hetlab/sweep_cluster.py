"""The Dask cluster of a sweep, sized from the container's cgroup (``devices.cgroup``):
one single-threaded worker per CPU the quota grants, as many as the memory allows."""

from __future__ import annotations

from typing import Any

from hetlab.devices import cgroup
from hetlab.errors import HetlabError

WORKER_MEMORY = 1 << 30  # the least memory a sweep worker is given (bytes)


def worker_sizing(
    workers: int | None = None, lim: Any = None, visible: int | None = None
) -> tuple[int, int | None]:
    """``(workers, memory bytes per worker)`` for a LocalCluster: one worker per CPU the
    cgroup grants (``hetlab.devices.cgroup``: the quota, within the visible cores), fewer when
    the memory would leave a worker less than ``WORKER_MEMORY``; ``workers`` overrides the
    count; ``lim`` (``cgroup.Limits``) and ``visible`` (cores) default to this process's. The
    memory is None when unknown (Dask's default then)."""
    lim = cgroup.limits() if lim is None else lim
    mem = cgroup.memory_bytes(lim)
    n = cgroup.cpu_count(visible, lim)
    if mem is not None:
        n = max(1, min(n, mem // WORKER_MEMORY))
    n = workers or n
    return n, (None if mem is None else int(mem // n))


def local_client(workers: int | None = None, threads: bool = False, dashboard: bool = False) -> Any:
    """A Client on a new LocalCluster of single-threaded workers sized by ``worker_sizing``,
    as processes (or threads of this process with ``threads``); ``dashboard`` serves Dask's
    dashboard on a free port."""
    try:
        # lazy: dask is optional and slow to import
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise HetlabError('hetlab sweep needs Dask: pip install "dask[distributed]"') from None
    n, mem = worker_sizing(workers)
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=not threads,
        memory_limit=mem if mem is not None and not threads else "auto",
        dashboard_address=":0" if dashboard else None,
    )
    return Client(cluster)
