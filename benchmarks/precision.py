"""The precision table: each model in PyTorch and in hetlab at each precision, on one GPU, in
one process, every column with its error against onnxruntime's fp32 outputs on the same
inputs.

PyTorch's columns (``torch_precision.py``): fp32, TF32, TF32 with branches on 4 streams,
fp16 and bf16 channels_last, each a CUDA graph replay. hetlab's: ``cuda0`` alone and the
``ilp`` plan over its streams (a user's profile with ``--queues cuda0=N``), at each
precision the device declares, through the public API (``hetlab.profile``,
``hetlab.schedule``, ``hetlab.run`` with ``check=True``: the report's tolerance is the
precision's). Medians of ``--repeat`` runs in ms.

    python -m benchmarks.precision --models googlenet,inception_v3,resnet50,squeezenet \
        --out benchmarks/results/<platform>/precision.json
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import hetlab
from benchmarks.gpu_commands import profile_options
from benchmarks.torch_precision import torch_columns
from hetlab.devices import platform_devices
from hetlab.errors import HetlabError
from hetlab.executor import random_inputs, reference_outputs
from hetlab.fileio import atomic_write_json
from hetlab.zoo import path as zoo_path

CUDA = "cuda0"
MODELS = "googlenet,inception_v3,resnet50,squeezenet"


def devices_at(precision: str, queues: int) -> dict[str, Any]:
    """This machine's CPU group ``cpu0``, ``cuda0`` and its stream views, the GPU's at
    ``precision``."""
    found = platform_devices(queues={CUDA: queues})
    at = [d.with_precision(precision) if d.root.name == CUDA else d for d in found]
    return {d.name: d for d in at if d.name == "cpu0" or d.root.name == CUDA}


def report_row(rep: Any) -> dict[str, Any]:
    return {
        "measured_ms": rep.latency_ms["median"],
        "max_rel_err": rep.max_rel_err,
        "tolerance": rep.extra.get("tolerance"),
        "precision": rep.extra.get("precision"),
        "devices": rep.devices,
    }


def hetlab_columns(graph, feed, precision: str, args) -> dict[str, Any]:
    """``cuda0`` alone and ``ilp`` over its streams at ``precision``."""
    devs = devices_at(precision, args.queues)
    row: dict[str, Any] = {}
    try:
        rep = hetlab.run(graph, CUDA, devs, repeat=args.repeat, check=True, inputs=feed)
        row[f"hetlab_{precision}"] = report_row(rep)
        prob = hetlab.profile(
            graph,
            list(devs.values()),
            queues={CUDA: args.queues},
            **profile_options(args, calibrated=False),
        )
        streams = [d for d in prob.devices if d == CUDA or d.startswith(CUDA + ".")]
        plan = hetlab.schedule(
            hetlab.cost.only_devices(prob, streams), "ilp", time_limit=args.time_limit
        )
        rep = hetlab.run(graph, plan, devs, repeat=args.repeat, check=True, inputs=feed)
        row[f"hetlab_{precision}_streams"] = {
            **report_row(rep),
            "predicted_ms": round(float(plan.makespan), 4),
        }
    except HetlabError as e:
        row[f"hetlab_{precision}"] = {"error": str(e)[:200]}
    return row


def model_row(name: str, args: argparse.Namespace) -> dict[str, Any]:
    onnx_path = str(zoo_path(name))
    graph = hetlab.load(onnx_path)
    feed = random_inputs(graph, 0)
    ref = reference_outputs(onnx_path, feed, list(graph.outputs))
    row: dict[str, Any] = {"model": name}
    if "torch" in args.parts:
        row.update(torch_columns(onnx_path, feed, ref, args.repeat))
    if "hetlab" in args.parts:
        for p in args.precisions.split(","):
            row.update(hetlab_columns(graph, feed, p, args))
    return row


def summary(row: dict[str, Any]) -> str:
    cells = []
    for k, v in row.items():
        if isinstance(v, dict) and "measured_ms" in v:
            cells.append(f"{k}={v['measured_ms']:.3f}ms/{v['max_rel_err']:.1e}")
        elif isinstance(v, dict):
            cells.append(f"{k}: {v.get('error', v)}")
    return f"{row['model']}: " + "  ".join(cells)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    ap.add_argument("--parts", default="torch,hetlab")
    ap.add_argument("--queues", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=0.03, help="profiler budget per op")
    ap.add_argument("--time-limit", type=float, default=0.5, help="ilp's time per subgraph")
    ap.add_argument("--out", default=None, help="the table as JSON")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    doc: dict[str, Any] = {"command": " ".join(sys.argv), "rows": []}
    try:
        doc["device"] = devices_at("fp32", 1)[CUDA].info()
    except (HetlabError, KeyError):
        print("precision: no CUDA device cuda0 here", file=sys.stderr)
        return 2
    for name in args.models.split(","):
        row = model_row(name, args)
        print(summary(row), flush=True)
        doc["rows"].append(row)
        if args.out:  # rewritten after each model: a cut-off run keeps its rows
            atomic_write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
