"""The GPU-queues table: one model per row, every way of running it side by side.

Columns (batch 1, fp32, medians of ``--repeat`` runs after a warm-up, one process):
onnxruntime on every CPU core; torch eager and torch CUDA graph (the model converted by
onnx2torch, where torch sees a GPU and onnx2torch is importable); hetlab on ``cl0`` as one
queue; and hetlab's ``ilp``, ``greedy`` and ``heft`` plans over ``--queues`` queues of
``cl0``, without and with the CPU groups, each with its prediction and ``max_rel_err``;
where CuPy finds a CUDA device, the same kernels on ``cuda0`` as one CUDA graph, alone and
as plans over ``--queues`` streams (``gpu_streams.py``); the recommended plan over the CPU
groups and the GPU's queues (``cuda0``'s streams where CUDA is here), and the CPU-only
platform's recommended plan, also measured in rounds alternating with the onnxruntime
reference (``paired``). ``--parts`` picks column families.

    python -m benchmarks.gpu_queues --models squeezenet,googlenet --queues 4 \
        --out benchmarks/results/<platform>/gpu_queues.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.gpu_streams import cuda_rows, stream_costs
from hetlab.calibrate import profile as profile_with_calibrations
from hetlab.calibrate import recommend
from hetlab.calibrate.report import io_prediction
from hetlab.cost.profiler import profile
from hetlab.cost.queues import only_devices, queue_names, queues_pay, with_queues
from hetlab.devices.base import is_accelerator
from hetlab.devices.opencl.queues import model_slowdown, queue_costs
from hetlab.devices.platform import default_groups
from hetlab.devices.platform import devices as platform_devices
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.executor.check import random_inputs
from hetlab.executor.interpreter import Executor
from hetlab.fileio import atomic_write_json
from hetlab.graph import load
from hetlab.schedulers.base import schedule
from hetlab.zoo import path as zoo_path

MODELS = "squeezenet,googlenet,inception_v3,inception_v4,resnet50,pnasnet_mobile,nasnet_large"
ALGOS = ("ilp", "greedy", "heft")
RECOMMENDED = "recommended"  # hetlab.calibrate.recommend: ilp+, greedy, heft or one device
# the column families, each selectable with --parts
PARTS = ("ort", "torch", "cl0", "cl-queues", "cuda", RECOMMENDED, "cpu")


def warm_up(fn, seconds: float = 0.5) -> None:
    """Unmeasured runs of ``fn`` for ``seconds``."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()


def median_ms(fn, repeat: int, warmup_s: float = 0.5) -> float:
    warm_up(fn, warmup_s)
    times = []
    for _ in range(repeat):
        a = time.perf_counter()
        fn()
        times.append((time.perf_counter() - a) * 1e3)
    return float(np.median(times))


def ort_session(onnx_path: str) -> Any:
    """One plain onnxruntime session with a thread per core: the reference users compare with."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = len(os.sched_getaffinity(0))
    return ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])


def ort_all_cores(onnx_path: str, feed: dict[str, np.ndarray], repeat: int) -> float:
    sess = ort_session(onnx_path)
    return median_ms(lambda: sess.run(None, feed), repeat)


def paired_ms(fns: dict[str, Any], rounds: int = 8, per_round: int = 15) -> dict[str, float]:
    """Medians (ms) of each of ``fns`` measured in alternating rounds (3 unmeasured runs
    before each round): the host drifts between measurement windows by as much as two CPU
    plans differ, and rounds give each the same drift."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        warm_up(fn)
    for _ in range(rounds):
        for k, fn in fns.items():
            for _ in range(3):
                fn()
            for _ in range(per_round):
                a = time.perf_counter()
                fn()
                samples[k].append((time.perf_counter() - a) * 1e3)
    return {k: round(float(np.median(v)), 4) for k, v in samples.items()}


def torch_times(onnx_path: str, feed: dict[str, np.ndarray], repeat: int) -> dict[str, Any]:
    """torch eager and CUDA-graph medians (ms), or why they are missing."""
    try:
        import torch
        from onnx2torch import convert
    except ImportError as e:
        return {"torch_note": f"not importable: {e}"}
    if not torch.cuda.is_available():
        return {"torch_note": "torch sees no GPU"}
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        model = convert(onnx_path).cuda().eval()
    except Exception as e:  # noqa: BLE001 - an op onnx2torch lacks: the row says so
        return {"torch_note": f"onnx2torch: {type(e).__name__}: {str(e)[:80]}"}
    xs = [torch.from_numpy(np.ascontiguousarray(v)).cuda() for v in feed.values()]

    def eager():
        with torch.no_grad():
            model(*xs)
        torch.cuda.synchronize()

    out: dict[str, Any] = {"torch_eager_ms": median_ms(eager, repeat)}
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.no_grad():
        for _ in range(3):
            model(*xs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph), torch.no_grad():
            model(*xs)
    except RuntimeError as e:  # a converted op that reads back to the host cannot be captured
        return {**out, "torch_note": f"no CUDA graph: {str(e).splitlines()[0][:80]}"}

    def replay():
        graph.replay()
        torch.cuda.synchronize()

    out["torch_graph_ms"] = median_ms(replay, repeat)
    return out


def plan_row(
    graph, problem, algo: str, devs, feed, args, io_problem=None, keep: list | None = None
) -> dict[str, Any]:
    """One plan's row; with ``io_problem`` (the problem with the host's links), also its
    end-to-end predictions (``hetlab.calibrate.report.io_prediction``). ``keep`` receives
    the plan."""
    params = {"time_limit": args.time_limit} if algo in ("ilp", "ilp+") else {}
    t0 = time.perf_counter()
    try:
        if algo == RECOMMENDED:
            plan = recommend(problem, graph, devs, measure=args.measure, inputs=feed)
        else:
            plan = schedule(problem, algo, **params)
        solve = time.perf_counter() - t0
        rep = run(graph, plan, devs, repeat=args.repeat, check=True, inputs=feed)
    except HetlabError as e:
        return {"error": str(e)[:200]}
    if keep is not None:
        keep.append(plan)
    io = {}
    if io_problem is not None:
        io = io_prediction(
            io_problem, graph, plan.device_of, plan.order, plan.sequential, devs, plan.fused
        )
    return {
        "measured_ms": rep.latency_ms["median"],
        "predicted_ms": round(float(plan.makespan), 4),
        **io,
        "max_rel_err": rep.max_rel_err,
        "devices": sorted(set(plan.device_of.values())),
        "units": rep.units,
        "solve_s": round(solve, 2),
        **({"alternative": plan.extra["alternative"]} if "alternative" in plan.extra else {}),
        **({"recommended": plan.extra["recommended"]} if "recommended" in plan.extra else {}),
    }


def gpu_rows(graph, feed, args, devs: dict) -> dict[str, Any]:
    """cl0 alone and, in ``--parts``, the plans over its queues (with and without the CPU
    groups)."""
    single = run(graph, "cl0", devs, repeat=args.repeat, check=True, inputs=feed)
    row: dict[str, Any] = {
        "cl0": {"measured_ms": single.latency_ms["median"], "max_rel_err": single.max_rel_err}
    }
    if "cl-queues" not in args.parts:
        return row
    cpus = [d for d in devs.values() if not is_accelerator(d)]
    prob = profile(
        graph,
        [*cpus, devs["cl0"]],
        repeat=5,
        rounds=1,
        seconds=args.seconds,
        handoff=False,
        concurrent=False,
    )
    row["cl0"]["predicted_ms"] = round(sum(float(n.cost["cl0"] or 0) for n in prob.nodes), 4)
    views = queue_names("cl0", args.queues)[1:]
    slow = model_slowdown([devs["cl0"], *(devs[v] for v in views)], graph)
    row["queues"] = {**slow, **args.costs, "pay": queues_pay(slow["slowdown"], args.queues)}
    latency, factor = args.costs["event_ms"], slow["slowdown"]
    gpu_only = with_queues(only_devices(prob, ["cl0"]), {"cl0": views}, latency, factor)
    mixed = with_queues(prob, {"cl0": views}, latency, factor)
    for label, problem in (("queues", gpu_only), ("queues+cpu", mixed)):
        for algo in ALGOS:  # end-to-end predictions from the problem with the host's links
            row[f"{algo}/{label}"] = plan_row(graph, problem, algo, devs, feed, args, mixed)
    return row


def recommended_row(graph, feed, args, devs: dict) -> dict[str, Any]:
    """The plan a user is recommended (``hetlab.calibrate.recommend``) over the CPU groups
    and one GPU with its queues: ``cuda0`` and its streams where CUDA is here, else ``cl0``
    and its queues (the same GPU either way, so never both), with its end-to-end
    predictions."""
    gpu = "cuda0" if "cuda0" in devs else "cl0"
    names = [d for d, dev in devs.items() if not is_accelerator(dev)]
    names += queue_names(gpu, args.queues)
    chosen = {d: devs[d] for d in names}
    calibrated = profile_with_calibrations(
        graph, list(chosen.values()), repeat=5, rounds=1, seconds=args.seconds
    )
    row = plan_row(graph, calibrated, RECOMMENDED, chosen, feed, args, calibrated)
    return {RECOMMENDED: row}


def calibrated_profile(graph, devices: list[Any], args: argparse.Namespace) -> Any:
    """The profile a user gets (``hetlab.profile``): the measurements, which the cache keeps
    from the first profile, and the executor's calibrations of unit boundaries and of units
    running beside each other."""
    return profile_with_calibrations(graph, devices, repeat=5, rounds=1, seconds=args.seconds)


def cpu_rows(graph, feed, args) -> dict[str, Any]:
    """The CPU-only platform: two core groups and the whole CPU as alternatives, every core
    (the onnxruntime reference's), the recommended plan measured against the reference:
    alone (``measured_ms``) and in rounds alternating with it (``paired``)."""
    found = platform_devices(
        {
            "cpu": default_groups(),
            "whole_cpu": "cpu",
            "opencl": {"include": []},
            "cuda": {"include": []},
        }
    )
    devs = {d.name: d for d in found}
    prob = calibrated_profile(graph, found, args)
    kept: list[Any] = []
    row = plan_row(graph, prob, RECOMMENDED, devs, feed, args, keep=kept)
    if kept and graph.model_path:
        plan, sess = kept[0], ort_session(graph.model_path)
        with Executor(graph, plan.device_of, devs, plan.order, plan.sequential) as ex:
            ex.prepare()
            fns = {
                "ort_cpu_ms": lambda: sess.run(None, feed),
                "measured_ms": lambda: ex.run_once(feed),
            }
            paired = paired_ms(fns)
        row["paired"] = {**paired, "ratio": round(paired["measured_ms"] / paired["ort_cpu_ms"], 3)}
    return {"cpu_recommended": row}


def model_row(name: str, args: argparse.Namespace, devs: dict) -> dict[str, Any]:
    onnx_path = str(zoo_path(name))
    graph = load(onnx_path)
    feed = random_inputs(graph, 0)
    row: dict[str, Any] = {"model": name, "nodes": len(graph.nodes)}
    if "ort" in args.parts:
        row["ort_cpu_ms"] = ort_all_cores(onnx_path, feed, args.repeat)
    if "torch" in args.parts:
        row.update(torch_times(onnx_path, feed, args.repeat))
    if {"cl0", "cl-queues"} & args.parts and "cl0" in devs:
        row.update(gpu_rows(graph, feed, args, devs))
    if "cuda" in args.parts:
        row.update(cuda_rows(graph, feed, args, devs, plan_row))
    if RECOMMENDED in args.parts:
        row.update(recommended_row(graph, feed, args, devs))
    if "cpu" in args.parts:
        row.update(cpu_rows(graph, feed, args))
    return row


def summary_line(row: dict[str, Any]) -> str:
    def ms(key: str) -> str:
        v = row.get(key)
        v = v.get("measured_ms") if isinstance(v, dict) else v
        return "-" if v is None else f"{v:.2f}"

    cols = ["ort_cpu_ms", "torch_eager_ms", "torch_graph_ms", "cl0"]
    cols += [f"{a}/{lbl}" for lbl in ("queues", "queues+cpu") for a in ALGOS]
    cols += ["recommended", "cpu_recommended", "cuda0"] + [f"{a}/streams" for a in ALGOS]
    return f"{row['model']:<15}" + "".join(f"{ms(c):>10}" for c in cols)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--queues", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=0.03, help="profiler budget per op")
    ap.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"the column families to measure (default all: {','.join(PARTS)})",
    )
    ap.add_argument(
        "--measure",
        type=int,
        default=5,
        help="recommend chooses among its candidates by N timed runs per round (0: predicted)",
    )
    ap.add_argument("--time-limit", type=float, default=0.5, help="ilp's time per subgraph")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the table as JSON (benchmarks/results/<platform>/gpu_queues.json)",
    )
    args = ap.parse_args(argv)
    args.parts = set(args.parts.split(","))
    unknown = sorted(args.parts - set(PARTS))
    if unknown:
        print(
            f"gpu_queues: unknown part {unknown[0]!r}; the parts are {','.join(PARTS)}",
            file=sys.stderr,
        )
        return 2
    found = platform_devices(
        {"opencl": {"queues": {"cl0": args.queues}}, "cuda": {"queues": {"cuda0": args.queues}}}
    )
    devs = {d.name: d for d in found}
    if "cl0" not in devs:
        print("gpu_queues: no OpenCL device cl0 here", file=sys.stderr)
        return 2
    args.costs = queue_costs(devs["cl0"])
    args.cuda_costs = stream_costs(devs)
    args.algos = ALGOS
    print("queue costs (ms):", args.costs, "| stream costs (ms):", args.cuda_costs)
    info = {**devs["cl0"].info(), "cpu_groups": [d.name for d in found if not is_accelerator(d)]}
    print("device:", info["device"], "| cpu groups:", info["cpu_groups"])
    rows: list[dict[str, Any]] = []
    print(f"{'model':<15}{'ort_cpu':>10}{'eager':>10}{'graph':>10}{'cl0':>10}", end="")
    print(
        "".join(f"{a + '/q':>10}" for a in ALGOS) + "".join(f"{a + '/q+c':>10}" for a in ALGOS),
        end="",
    )
    print(f"{'recomm.':>10}{'cpu rec.':>10}{'cuda0':>10}", end="")
    print("".join(f"{a + '/s':>10}" for a in ALGOS))
    for name in args.models.split(","):
        try:
            row = model_row(name, args, devs)
        except HetlabError as e:
            print(f"{name}: {e}", file=sys.stderr)
            continue
        print(summary_line(row), flush=True)
        rows.append(row)
        if args.out is not None:  # rewritten after each model: a cut-off run keeps its rows
            doc = {"device": info, "queue_costs": args.costs, "stream_costs": args.cuda_costs}
            atomic_write_json(args.out, {**doc, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
