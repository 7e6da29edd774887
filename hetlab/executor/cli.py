"""``hetlab run MODEL (--plan PLAN.json | --device NAME) ...`` (spec §5): run for real."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def configure(p: argparse.ArgumentParser) -> None:
    from hetlab.graph.cli import add_input_arg, add_shape_arg

    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--plan", metavar="PLAN.json", help="a plan from `hetlab schedule` (spec §4)")
    how.add_argument("--device", metavar="NAME",
                     help="run every node NAME supports on it, the rest on the first CPU device")  # fmt: skip
    add_shape_arg(p)
    p.add_argument("--repeat", type=int, default=10, metavar="N", help="measured runs (default 10)")
    p.add_argument("--warmup", type=int, default=1, metavar="N", help="unmeasured runs first (default 1)")
    p.add_argument("--check", action="store_true", help="compare outputs with a plain onnxruntime session")
    p.add_argument("--trace", metavar="TRACE.json", help="write the timeline as Chrome trace-event JSON")
    add_input_arg(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--platform", metavar="FILE", help="TOML/JSON file naming CPU core groups and OpenCL devices")
    p.add_argument("--profile", metavar="PROBLEM.json",
                   help="with --device: predict the run's time on this problem (spec §2)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the report of spec §5 as JSON")


def main(args: argparse.Namespace) -> int:
    from hetlab.devices.platform import devices
    from hetlab.errors import HetlabError
    from hetlab.executor.api import run
    from hetlab.executor.check import load_inputs
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_input_args, parse_shape_args

    if args.repeat < 1:
        raise HetlabError(f"--repeat must be at least 1, got {args.repeat}")
    if args.warmup < 0:
        raise HetlabError(f"--warmup must be 0 or more, got {args.warmup}")
    shapes = parse_shape_args(args.shape)
    given = parse_input_args(args.input)
    plan: Any
    problem = None
    if args.plan:
        from hetlab.schedulers.plan import Plan

        plan = Plan.load(args.plan)
    if args.profile:
        from hetlab.cost.problem import Problem

        problem = Problem.load(args.profile)
    devs = devices(args.platform)
    if args.device:
        names = [d.name for d in devs]
        if args.device not in names:
            raise HetlabError(f"unknown device {args.device!r}; devices here: {', '.join(names)} "
                              "(see 'hetlab devices')")  # fmt: skip
        plan = args.device
    graph = load(args.model, shapes, given)
    feed = load_inputs(graph, given, args.seed)
    report = run(graph, plan, devs, repeat=args.repeat, check=args.check, inputs=feed,
                 warmup=args.warmup, problem=problem, trace=args.trace)  # fmt: skip
    doc = report.to_json()
    if args.json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_report(doc))
    return 0


def format_report(doc: dict[str, Any]) -> str:
    lat = doc["latency_ms"]
    lines = [
        f"model      {doc.get('model')}  ({doc['model_path']})",
        (f"latency    median {lat['median']:.3f} ms  (p10 {lat['p10']:.3f}, p90 {lat['p90']:.3f}; "
         f"{doc['repeat']} runs)"),
    ]
    if doc.get("predicted_ms") is not None:
        pred = doc["predicted_ms"]
        ratio = f"  measured/predicted {lat['median'] / pred:.2f}" if pred else ""
        lines.append(f"predicted  {pred:.3f} ms{ratio}")
    if doc.get("max_rel_err") is not None:
        lines.append(f"check      max_rel_err {doc['max_rel_err']:.2e} against plain onnxruntime")
    lines.append("devices    " + ", ".join(f"{k} {v} nodes" for k, v in doc["devices"].items())
                 + f"; {doc['units']} units")  # fmt: skip
    for f in doc.get("fallbacks", []):
        lines.append(f"fallback   unit {f['unit']} ({f['nodes']} nodes from {f['first']}) ran on "
                     f"{f['to']} instead of {f['device']}: {f['error']}")  # fmt: skip
    return "\n".join(lines)
