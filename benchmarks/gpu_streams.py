"""The GPU-queues table's CUDA columns: hetlab's kernels on ``cuda0`` run as one CUDA graph,
alone and as plans over ``--queues`` streams (``cuda0``, ``cuda0.q1``...), each with its
prediction and ``max_rel_err`` (``benchmarks/gpu_queues.py`` calls ``cuda_rows``).

The streams are priced as a user's profile prices them (``hetlab.profile(...,
queues={"cuda0": N})``, its ``extra.queues.cuda0``): the latency of a dependency between two
streams inside a graph, the slowdown of a copy of the model beside copies on the other
streams and what a run of the graph costs the executor (``run_ms``). Each plan is also
predicted end to end with the streams sharing the GPU (``predicted_shared_ms``, from
``hetlab.run(..., problem=...)``).
"""

from __future__ import annotations

from typing import Any

import hetlab
from benchmarks.gpu_commands import profile_options
from hetlab.cost import only_devices
from hetlab.devices import is_accelerator
from hetlab.errors import HetlabError

CUDA = "cuda0"
# the end-to-end predictions hetlab.run adds to a report given the problem
PREDICTIONS = ("predicted_io_ms", "predicted_host_ms", "predicted_shared_ms")


def cuda_rows(graph, feed, args, devs: dict, plan_row) -> dict[str, Any]:
    """``cuda0`` alone, and ``args.algos``' plans over its streams (GPU only), each with its
    predictions: §3's makespan and, from the host's links, the end-to-end ones
    (``predicted_shared_ms``: the streams sharing the GPU)."""
    if CUDA not in devs:
        return {}
    host = [d for d, dev in devs.items() if not is_accelerator(dev)][:1]
    try:
        full = hetlab.profile(
            graph,
            ",".join([*host, CUDA]),
            queues=args.queue_opts,
            **profile_options(args, calibrated=False),
        )
        streams = full.extra.get("queues", {}).get(CUDA, {"views": []})
        problem = only_devices(full, [CUDA, *streams["views"]])
        alone = hetlab.schedule(problem, f"single:{CUDA}")
        single = hetlab.run(
            graph, alone, devs, repeat=args.repeat, check=True, inputs=feed, problem=full
        )
    except HetlabError as e:
        return {CUDA: {"error": str(e)[:200]}}
    row: dict[str, Any] = {
        CUDA: {
            "measured_ms": single.latency_ms["median"],
            "predicted_ms": round(float(alone.makespan), 4),
            **{k: single.extra[k] for k in PREDICTIONS if k in single.extra},
            "max_rel_err": single.max_rel_err,
        },
        "streams": streams,
    }
    for algo in args.algos:
        row[f"{algo}/streams"] = plan_row(graph, problem, algo, devs, feed, args, full)
    return row
