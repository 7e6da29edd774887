"""The GPU-queues table's CUDA columns: hetlab's kernels on ``cuda0`` run as one CUDA graph,
alone and as plans over ``--queues`` streams (``cuda0``, ``cuda0.q1``...), each with its
prediction and ``max_rel_err`` (``benchmarks/gpu_queues.py`` calls ``cuda_rows``).

The streams are priced as ``cost/queues.py`` prices a device's queues: the latency of a
dependency between two streams inside a graph and the slowdown of a copy of the model beside
copies on the other streams, both measured here (``devices/cuda/streams.py``).
"""

from __future__ import annotations

from typing import Any

from hetlab.cost.profiler import profile
from hetlab.cost.queues import only_devices, queue_names, queues_pay, with_queues
from hetlab.devices.cuda.streams import model_slowdown, queue_costs
from hetlab.errors import HetlabError
from hetlab.executor import run

CUDA = "cuda0"


def stream_costs(devs: dict[str, Any]) -> dict[str, float] | None:
    """The stream costs of ``cuda0`` (None where there is no CUDA device)."""
    return queue_costs(devs[CUDA]) if CUDA in devs else None


def cuda_rows(graph, feed, args, devs: dict, plan_row) -> dict[str, Any]:
    """``cuda0`` alone, and ``ALGOS``' plans over its streams (GPU only)."""
    if CUDA not in devs:
        return {}
    try:
        prob = profile(
            graph,
            [devs[CUDA]],
            repeat=5,
            rounds=1,
            seconds=args.seconds,
            handoff=False,
            concurrent=False,
        )
        single = run(graph, CUDA, devs, repeat=args.repeat, check=True, inputs=feed)
    except HetlabError as e:
        return {CUDA: {"error": str(e)[:200]}}
    row: dict[str, Any] = {
        CUDA: {
            "measured_ms": single.latency_ms["median"],
            "predicted_ms": round(sum(float(n.cost[CUDA] or 0) for n in prob.nodes), 4),
            "max_rel_err": single.max_rel_err,
        }
    }
    views = queue_names(CUDA, args.queues)[1:]
    slow = model_slowdown([devs[CUDA], *(devs[v] for v in views)], graph)
    row["streams"] = {**slow, **args.cuda_costs, "pay": queues_pay(slow["slowdown"], args.queues)}
    problem = with_queues(
        only_devices(prob, [CUDA]), {CUDA: views}, args.cuda_costs["event_ms"], slow["slowdown"]
    )
    for algo in args.algos:
        row[f"{algo}/streams"] = plan_row(graph, problem, algo, devs, feed, args)
    return row
