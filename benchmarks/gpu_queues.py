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

Everything goes through hetlab's public API, as a user's ``hetlab profile --queues``,
``hetlab schedule``, ``hetlab recommend`` and ``hetlab run --profile`` do: the queues are
priced by ``hetlab.profile(..., queues=...)`` (``extra.queues``: the measured slowdown and
event latency), and each plan's end-to-end predictions come from ``hetlab.run(...,
problem=...)``.

    python -m benchmarks.gpu_queues --models squeezenet,googlenet --queues 4 \
        --out benchmarks/results/<platform>/gpu_queues.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import hetlab
from benchmarks.gpu_commands import profile_options, row_commands
from benchmarks.gpu_streams import CUDA, PREDICTIONS, cuda_rows
from benchmarks.gpu_timing import ort_all_cores, ort_session, paired_ms, timed_runs, torch_times
from hetlab.cost import only_devices
from hetlab.devices import default_groups, is_accelerator, platform_devices
from hetlab.errors import HetlabError
from hetlab.executor import random_inputs
from hetlab.fileio import atomic_write_json
from hetlab.zoo import path as zoo_path

MODELS = "squeezenet,googlenet,inception_v3,inception_v4,resnet50,pnasnet_mobile,nasnet_large"
ALGOS = ("ilp", "greedy", "heft")
RECOMMENDED = "recommended"  # hetlab.recommend: ilp+, greedy, heft or one device
# the column families, each selectable with --parts
PARTS = ("ort", "torch", "cl0", "cl-queues", "cuda", RECOMMENDED, "cpu")


def profile(graph, names: list[str], args, calibrated: bool = False) -> Any:
    """``hetlab.profile`` of ``names`` with the GPUs' ``--queues`` queues, on the devices
    ``main`` found (the same options give the same device objects)."""
    opts = profile_options(args, calibrated)
    return hetlab.profile(graph, ",".join(names), queues=args.queue_opts, **opts)


def plan_row(
    graph, problem, algo: str, devs, feed, args, io_problem=None, keep: list | None = None
) -> dict[str, Any]:
    """One plan's row; with ``io_problem`` (the problem with the host's links), also its
    end-to-end predictions (``hetlab.run(..., problem=io_problem)``). ``keep`` receives the
    plan."""
    params = {"time_limit": args.time_limit} if algo in ("ilp", "ilp+") else {}
    t0 = time.perf_counter()
    try:
        if algo == RECOMMENDED:
            plan = hetlab.recommend(problem, graph, devs, measure=args.measure, inputs=feed)
        else:
            plan = hetlab.schedule(problem, algo, **params)
        solve = time.perf_counter() - t0
        rep = hetlab.run(
            graph, plan, devs, repeat=args.repeat, check=True, inputs=feed, problem=io_problem
        )
    except HetlabError as e:
        return {"error": str(e)[:200]}
    if keep is not None:
        keep.append(plan)
    return {
        "measured_ms": rep.latency_ms["median"],
        "predicted_ms": round(float(plan.makespan), 4),
        **{k: rep.extra[k] for k in PREDICTIONS if k in rep.extra},
        **(
            {"prediction_ms": rep.predicted_ms, "terms": rep.extra["prediction"]["terms"]}
            if "prediction" in rep.extra
            else {}
        ),
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
    single = hetlab.run(graph, "cl0", devs, repeat=args.repeat, check=True, inputs=feed)
    row: dict[str, Any] = {
        "cl0": {"measured_ms": single.latency_ms["median"], "max_rel_err": single.max_rel_err}
    }
    if "cl-queues" not in args.parts:
        return row
    cpus = [d for d, dev in devs.items() if not is_accelerator(dev)]
    mixed = profile(graph, [*cpus, "cl0"], args)
    row["cl0"]["predicted_ms"] = round(sum(float(n.cost["cl0"] or 0) for n in mixed.nodes), 4)
    row["queues"] = mixed.extra.get("queues", {}).get("cl0", {"views": []})
    gpu_only = only_devices(mixed, ["cl0", *row["queues"]["views"]])
    for label, problem in (("queues", gpu_only), ("queues+cpu", mixed)):
        for algo in ALGOS:  # end-to-end predictions from the problem with the host's links
            row[f"{algo}/{label}"] = plan_row(graph, problem, algo, devs, feed, args, mixed)
    return row


def recommended_row(graph, feed, args, devs: dict) -> dict[str, Any]:
    """The plan a user is recommended (``hetlab.recommend``) over the CPU groups and one GPU
    with its queues: ``cuda0`` and its streams where CUDA is here, else ``cl0`` and its
    queues (the same GPU either way, so never both), with its end-to-end predictions."""
    gpu = CUDA if CUDA in devs else "cl0"
    names = [d for d, dev in devs.items() if not is_accelerator(dev)] + [gpu]
    calibrated = profile(graph, names, args, calibrated=True)
    chosen = {d: devs[d] for d in calibrated.devices}
    row = plan_row(graph, calibrated, RECOMMENDED, chosen, feed, args, calibrated)
    return {RECOMMENDED: row}


def cpu_rows(graph, feed, args) -> dict[str, Any]:
    """The CPU-only platform: two core groups and the whole CPU as alternatives, every core
    (the onnxruntime reference's), the recommended plan measured against the reference:
    alone (``measured_ms``) and in rounds alternating with it (``paired``)."""
    platform = {"cpu": default_groups(), "opencl": {"include": []}, "cuda": {"include": []}}
    found = platform_devices(platform, whole_cpu="cpu")
    devs = {d.name: d for d in found}
    prob = hetlab.profile(graph, found, **profile_options(args, calibrated=True))
    kept: list[Any] = []
    row = plan_row(graph, prob, RECOMMENDED, devs, feed, args, keep=kept)
    if kept and graph.model_path:
        plan, sess = kept[0], ort_session(graph.model_path)
        fns = {
            "ort_cpu_ms": lambda n: timed_runs(lambda: sess.run(None, feed), n),
            "measured_ms": lambda n: (
                hetlab.run(graph, plan, devs, repeat=n, warmup=3, inputs=feed).samples_ms
            ),
        }
        paired = paired_ms(fns)
        row["paired"] = {**paired, "ratio": round(paired["measured_ms"] / paired["ort_cpu_ms"], 3)}
    return {"cpu_recommended": row}


def model_row(name: str, args: argparse.Namespace, devs: dict) -> dict[str, Any]:
    onnx_path = str(zoo_path(name))
    graph = hetlab.load(onnx_path)
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
    cpus = [d for d, dev in devs.items() if not is_accelerator(dev)]
    row["commands"] = row_commands(name, row, args, cpus)  # the same entries from the CLI
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


def measured_costs(row: dict[str, Any], key: str) -> dict[str, float] | None:
    """The launch, event and chain costs (ms) that the row's profile measured for the
    queues (``key``: ``queues`` for ``cl0``, ``streams`` for ``cuda0``), if it has them."""
    q = row.get(key) or {}
    return {k: q[k] for k in ("launch_ms", "event_ms", "chain_ms")} if "event_ms" in q else None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
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
    return ap.parse_args(argv)


def gpu_devices(n: int) -> tuple[dict[str, int], list[Any]]:
    """This machine's devices with ``n`` queues on ``cl0`` and ``cuda0`` (``cl0`` alone
    where CUDA is not here), as ``hetlab run --queues`` finds them, and those queues."""
    for queues in ({"cl0": n, CUDA: n}, {"cl0": n}):
        try:
            return queues, platform_devices(queues=queues)
        except HetlabError:  # no cuda0 here (or no cl0: the caller says so)
            continue
    return {}, platform_devices()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.parts = set(args.parts.split(","))
    unknown = sorted(args.parts - set(PARTS))
    if unknown:
        print(
            f"gpu_queues: unknown part {unknown[0]!r}; the parts are {','.join(PARTS)}",
            file=sys.stderr,
        )
        return 2
    args.queue_opts, found = gpu_devices(args.queues)
    devs = {d.name: d for d in found}
    if "cl0" not in devs:
        print("gpu_queues: no OpenCL device cl0 here", file=sys.stderr)
        return 2
    args.algos = ALGOS
    info = {**devs["cl0"].info(), "cpu_groups": [d.name for d in found if not is_accelerator(d)]}
    print("device:", info["device"], "| cpu groups:", info["cpu_groups"])
    doc: dict[str, Any] = {"device": info, "queue_costs": None, "stream_costs": None}
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
        for key, col in (("queue_costs", "queues"), ("stream_costs", "streams")):
            doc[key] = doc[key] or measured_costs(row, col)
        if args.out is not None:  # rewritten after each model: a cut-off run keeps its rows
            atomic_write_json(args.out, {**doc, "rows": rows})
    print("queue costs (ms):", doc["queue_costs"], "| stream costs (ms):", doc["stream_costs"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
