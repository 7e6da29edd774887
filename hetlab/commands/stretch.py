"""``hetlab stretch MODEL --devices a,b[,c] [--alpha A --beta B] --out BRANCHED.onnx``:
branch a sequential CNN for several devices (NN-Stretch). Also writes a run plan (branch i on
device i) next to it, for ``hetlab run BRANCHED.onnx --plan PLAN.json --check``. The written
model has fresh random weights: its accuracy needs retraining, which is out of scope here."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hetlab.commands.options import add_shape_arg
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    p.add_argument(
        "--devices",
        required=True,
        metavar="A,B[,C]",
        help="one branch per device (see `hetlab devices`)",
    )
    p.add_argument(
        "--out", required=True, metavar="BRANCHED.onnx", help="where to write the stretched model"
    )
    p.add_argument("--plan-out", metavar="PLAN.json", help="run plan (default: BRANCHED.plan.json)")
    p.add_argument(
        "--alpha",
        type=float,
        default=0.1,
        help="eq. 4: meeting comm <= alpha x segment latency (0.1)",
    )
    p.add_argument(
        "--beta",
        type=float,
        default=1.1,
        help="eq. 5: branch latency <= beta x segment latency (1.1)",
    )
    p.add_argument(
        "--min-depth", type=float, default=0.5, help="lower bound of the depth ratio (0.5)"
    )
    p.add_argument(
        "--min-width", type=float, default=0.5, help="lower bound of the width ratio (0.5)"
    )
    p.add_argument(
        "--capacity",
        type=float,
        default=1.0,
        help="branches' FLOPs / segment FLOPs, at least (1.0)",
    )
    p.add_argument(
        "--throughput", metavar="A=GFLOPS,...", help="device throughputs instead of measuring them"
    )
    p.add_argument(
        "--profile", metavar="PROBLEM.json", help="take device throughputs from a profiled problem"
    )
    p.add_argument(
        "--profiler",
        action="store_true",
        help="profile the original model (hetlab.profiling.profile, small budget) for the throughputs and link",
    )
    p.add_argument("--algo", default="heft", help="scheduler that scores candidates (default heft)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fresh weights (default 0)")
    p.add_argument(
        "--platform",
        metavar="FILE",
        help="TOML/JSON file naming CPU core groups and OpenCL devices",
    )
    add_shape_arg(p)
    p.add_argument("--json", action="store_true", help="print the chosen configuration as JSON")


def _throughput(text: str, names: list[str]) -> dict[str, float]:
    out = {}
    for item in text.split(","):
        k, sep, v = item.partition("=")
        try:
            out[k.strip()] = float(v) * 1e6  # GFLOP/s -> FLOPs per ms
        except ValueError:
            sep = ""
        if not sep or out.get(k.strip(), 0) <= 0:
            raise HetlabError(f"--throughput: expected NAME=GFLOPS (positive), got {item!r}")
    missing = [d for d in names if d not in out]
    if missing:
        raise HetlabError(f"--throughput gives no value for device {missing[0]!r}")
    return out


def main(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_shape_args
    from hetlab.stretch.onnx_rewrite import write
    from hetlab.stretch.search import branch_plan, estimated_problem, main_device, search
    from hetlab.stretch.transform import Constraints

    names, out = _checked(args)
    g = load(args.model, parse_shape_args(args.shape), fold=args.fold)
    c = Constraints(args.alpha, args.beta, args.min_depth, args.min_width, args.capacity)
    cm = _cost_model(args, g, names)
    best, rows = search(g, names, cm, c, algo=args.algo)
    path = write(g, best.plan, out, seed=args.seed)
    plan_out = Path(args.plan_out) if args.plan_out else out.with_suffix(".plan.json")
    final = load(str(path), fold=args.fold)
    plan = branch_plan(final, estimated_problem(final, cm, names), names, main_device(cm, names))
    atomic_write_json(plan_out, plan.to_json())
    doc = {
        "model": str(path),
        "plan": str(plan_out),
        "original_flops": sum(n.flops for n in g.nodes),
        "flops": sum(n.flops for n in final.nodes),
        "throughput_gflops": {d: round(v / 1e6, 3) for d, v in cm.throughput.items()},
        "candidates": rows,
        **best.plan.summary(),
        "note": "fresh random weights: the stretched model needs retraining for accuracy",
    }
    if args.json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
    else:
        _print_summary(doc, best, len(final.nodes))
    return 0


def _checked(args: argparse.Namespace) -> tuple[list[str], Path]:
    """The device names and the output path, after checking every numeric option."""
    names = [d.strip() for d in args.devices.split(",") if d.strip()]
    if len(names) < 2:
        raise HetlabError(f"--devices needs at least two devices, got {args.devices!r}")
    for k in ("alpha", "beta", "capacity"):
        if getattr(args, k) <= 0:
            raise HetlabError(f"--{k} must be positive, got {getattr(args, k)}")
    for k in ("min_depth", "min_width"):
        if not 0 < getattr(args, k) <= 1:
            raise HetlabError(f"--{k.replace('_', '-')} must be in (0, 1], got {getattr(args, k)}")
    out = Path(args.out)
    if out.suffix != ".onnx":
        raise HetlabError(f"--out must name an .onnx file, got {args.out!r}")
    return names, out


def _cost_model(args: argparse.Namespace, g: Any, names: list[str]) -> Any:
    """The devices' cost model: from --throughput, from a --profile, or measured here."""
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.stretch.search import costs_from_problem, measure_costs
    from hetlab.stretch.transform import CostModel

    if args.throughput:
        return CostModel(_throughput(args.throughput, names), dict.fromkeys(names, 0.02))
    if args.profile:
        # lazy: building the command-line parser imports this module; the run needs these
        from hetlab.cost.problem import Problem

        return costs_from_problem(g, Problem.load(args.profile), names)
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.devices.platform import devices

    devs = {d.name: d for d in devices(args.platform)}
    unknown = [d for d in names if d not in devs]
    if unknown:
        raise HetlabError(
            f"unknown device {unknown[0]!r}; devices here: {', '.join(devs)} (see 'hetlab devices')"
        )
    if args.profiler:
        # lazy: building the command-line parser imports this module; the run needs these
        from hetlab.calibrate import profile

        prob = profile(g, [devs[d] for d in names], repeat=3, warmup=1, seconds=0.05, rounds=1)
        return costs_from_problem(g, prob, names)
    return measure_costs(g, devs, names)


def _print_summary(doc: dict[str, Any], best: Any, nodes: int) -> None:
    print(
        f"wrote {doc['model']} ({nodes} nodes, {doc['flops'] / 1e9:.2f} GFLOPs vs "
        f"{doc['original_flops'] / 1e9:.2f}) and plan {doc['plan']}"
    )
    for r in doc["candidates"]:
        print(
            f"  candidate meeting={r['meeting']:6s} strategy={r['strategy']:5s} predicted {r['predicted_ms']:.2f} ms ({r['placement']})"
        )
    for p in best.plan.parts:
        br = ", ".join(
            f"{b.device}: depth {b.layout.depth} width {b.layout.width:.3f}" for b in p.branches
        )
        print(f"  segments {p.segs}: {br}")
    print("  note: fresh random weights; accuracy needs retraining (out of scope)")
