"""The GPU-queues table's CUDA columns: hetlab's kernels on ``cuda0`` run as one CUDA graph,
alone and as plans over ``--queues`` streams (``cuda0``, ``cuda0.q1``...), each with its
prediction and ``max_rel_err`` (``benchmarks/gpu_queues.py`` calls ``cuda_rows``).

The streams are priced as a user's profile prices them (``calibrate.profile.add_queues``):
the latency of a dependency between two streams inside a graph, the slowdown of a copy of the
model beside copies on the other streams (``devices/cuda/streams.py``) and what a run of the
graph costs the executor (``run_ms``). Each plan is also predicted end to end with the
streams sharing the GPU (``predicted_shared_ms``).
"""

from __future__ import annotations

from typing import Any

from hetlab.calibrate.profile import add_queues
from hetlab.calibrate.report import io_prediction
from hetlab.cost.profiler import profile
from hetlab.cost.queues import only_devices, queue_names
from hetlab.devices.base import is_accelerator
from hetlab.devices.cuda.streams import queue_costs
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.schedulers.base import schedule

CUDA = "cuda0"


def stream_costs(devs: dict[str, Any]) -> dict[str, float] | None:
    """The stream costs of ``cuda0`` (None where there is no CUDA device)."""
    return queue_costs(devs[CUDA]) if CUDA in devs else None


def cuda_rows(graph, feed, args, devs: dict, plan_row) -> dict[str, Any]:
    """``cuda0`` alone, and ``ALGOS``' plans over its streams (GPU only), each with its
    predictions: §3's makespan and, from the host's links, the end-to-end ones
    (``predicted_shared_ms``: the streams sharing the GPU, ``calibrate/shared.py``)."""
    if CUDA not in devs:
        return {}
    host = [d for d in devs.values() if not is_accelerator(d)][:1]
    try:
        full = profile(
            graph,
            [*host, devs[CUDA]],
            repeat=5,
            rounds=1,
            seconds=args.seconds,
            handoff=False,
            concurrent=False,
        )
        single = run(graph, CUDA, devs, repeat=args.repeat, check=True, inputs=feed)
    except HetlabError as e:
        return {CUDA: {"error": str(e)[:200]}}
    views = queue_names(CUDA, args.queues)[1:]
    full = add_queues(full, graph, [*host, devs[CUDA]], [devs[v] for v in views])
    queues = full.extra["queues"][CUDA]
    problem = only_devices(full, [CUDA, *views])
    alone = schedule(problem, f"single:{CUDA}")
    io = io_prediction(
        full, graph, alone.device_of, alone.order, alone.sequential, devs, alone.fused
    )
    row: dict[str, Any] = {
        CUDA: {
            "measured_ms": single.latency_ms["median"],
            "predicted_ms": round(float(alone.makespan), 4),
            **io,
            "max_rel_err": single.max_rel_err,
        },
        "streams": queues,
    }
    for algo in args.algos:
        row[f"{algo}/streams"] = plan_row(graph, problem, algo, devs, feed, args, full)
    return row
