"""The GPU-queues table's CUDA columns: hetlab's kernels on ``cuda0`` run as one CUDA graph,
alone and as plans over ``--queues`` streams (``cuda0``, ``cuda0.q1``...), each with its
prediction and ``max_rel_err`` (``benchmarks/gpu_queues.py`` calls ``cuda_rows``).

The streams are priced as ``cost/queues.py`` prices a device's queues: the latency of a
dependency between two streams inside a graph and the slowdown of a copy of the model beside
copies on the other streams, both measured here (``devices/cuda/streams.py``). Each plan is
also predicted end to end with the streams sharing the GPU (``predicted_shared_ms``).
"""

from __future__ import annotations

from typing import Any

from hetlab.calibrate.report import io_prediction
from hetlab.calibrate.shared import graph_run_ms, model_run_ms
from hetlab.cost.profiler import profile
from hetlab.cost.queues import only_devices, queue_names, queues_pay, with_queues
from hetlab.devices.base import is_accelerator
from hetlab.devices.cuda.streams import model_slowdown, queue_costs
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
    slow = model_slowdown([devs[CUDA], *(devs[v] for v in views)], graph)
    queues = {**slow, **args.cuda_costs, "pay": queues_pay(slow["slowdown"], args.queues)}
    full = with_queues(full, {CUDA: views}, args.cuda_costs["event_ms"], slow["slowdown"])
    full.extra["queues"][CUDA].update(queues)
    got = model_run_ms(devs[CUDA], full, graph, host[0].name) if host else None
    queues["run_ms"] = full.extra["queues"][CUDA]["run_ms"] = (
        graph_run_ms(devs[CUDA]) if got is None else got
    )
    problem = only_devices(full, [CUDA, *views])
    alone = schedule(problem, f"single:{CUDA}")
    io = io_prediction(full, graph, alone.device_of, alone.order, False, devs, alone.fused)
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
