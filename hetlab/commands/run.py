"""``hetlab run MODEL (--plan PLAN.json | --device NAME) ...`` (spec §5): run for real."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hetlab.commands.options import (
    add_input_arg,
    add_platform_args,
    add_precision_arg,
    add_shape_arg,
    note_precision,
    platform_options,
    precision_option,
)
from hetlab.commands.run_adaptive import check_status, main_adaptive
from hetlab.commands.run_per_node import main_per_node
from hetlab.devices.base import is_accelerator, unsupported_summary
from hetlab.devices.binding import bind
from hetlab.errors import HetlabError
from hetlab.executor.bad_inputs import check_inputs
from hetlab.executor.report_text import format_report
from hetlab.graph.inputs import model_inputs


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--plan", metavar="PLAN.json", help="a plan from `hetlab schedule` (spec §4)")
    how.add_argument(
        "--device",
        metavar="NAME",
        help="run every node NAME supports on it, the rest on the first CPU device",
    )
    add_shape_arg(p)
    p.add_argument("--repeat", type=int, default=10, metavar="N", help="measured runs (default 10)")
    p.add_argument(
        "--warmup",
        type=int,
        default=None,
        metavar="N",
        help="unmeasured runs first (default: as many as fit in 0.5 s, at least 1, at most 200)",
    )
    p.add_argument(
        "--check", action="store_true", help="compare outputs with a plain onnxruntime session"
    )
    p.add_argument(
        "--per-node",
        nargs="?",
        const=1e-4,
        type=float,
        metavar="TOL",
        help="with --device and --check: run each node on the device alone, fed onnxruntime's "
        "values of its inputs, and name every node whose output differs from onnxruntime's by "
        "a relative error above TOL (default 1e-4), instead of timing the model",
    )
    p.add_argument(
        "--trace", metavar="TRACE.json", help="write the timeline as Chrome trace-event JSON"
    )
    add_input_arg(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    add_platform_args(p)
    add_precision_arg(p)
    p.add_argument(
        "--profile",
        metavar="PROBLEM.json",
        help="the profiled problem (spec §2): with --device, predicts the run's time; with any "
        "plan, predicts the run from it (predicted_ms, and its breakdown by term in "
        "prediction)",
    )
    p.add_argument("--json", action="store_true", help="print the report of spec §5 as JSON")
    _add_adaptive_args(p)


def _add_adaptive_args(p: argparse.ArgumentParser) -> None:
    a = p.add_argument_group("adaptive execution (NN-Stretch)")
    a.add_argument(
        "--adaptive",
        action="store_true",
        help="re-plan away from a device that slows down (contention) and back when it recovers",
    )
    a.add_argument(
        "--threshold", type=float, default=1.5, help="slowdown that counts as contention (1.5)"
    )
    a.add_argument(
        "--patience", type=int, default=2, help="consecutive slow runs before switching (2)"
    )
    a.add_argument(
        "--probe-every", type=int, default=4, help="runs between probes of the original plan (4)"
    )
    a.add_argument(
        "--interfere",
        metavar="DEVICE:START[:STOP]",
        help="run a CPU burner on DEVICE's cores (or a busy OpenCL queue) during runs START..STOP-1",
    )
    a.add_argument(
        "--compare",
        action="store_true",
        help="with --adaptive: also run without adapting, same schedule",
    )
    a.add_argument(
        "--adaptive-trace", metavar="TRACE.json", help="write the adaptive latency trace as JSON"
    )


def main(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.calibrate import run  # the run, and the calibrated predictions of --profile
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_input_args, parse_shape_args

    _check_counts(args)
    shapes = parse_shape_args(args.shape)
    given = parse_input_args(args.input)
    plan, problem, devs = _plan_and_devices(args)
    graph = load(args.model, shapes, given, args.fold)
    if args.device and args.per_node is None:
        _device_refusals(graph, devs, args.device)
    bound = bind(plan, graph, devs)  # checked, memory too, before any input is made
    feed = model_inputs(graph, given, args.seed)
    if given:  # kernel devices do not check indices: the model's own run judges the inputs
        check_inputs(graph, feed)
    if args.per_node is not None:  # compares the nodes the device runs, moves none
        return main_per_node(args, graph, devs, feed)
    if args.adaptive:
        return main_adaptive(args, bound, feed, problem)
    if args.interfere or args.compare or args.adaptive_trace:
        raise HetlabError("--interfere, --compare and --adaptive-trace need --adaptive")
    report = run(
        graph,
        bound,
        devs,
        repeat=args.repeat,
        check=args.check,
        inputs=feed,
        warmup=args.warmup,
        problem=problem,
        trace=args.trace,
    )
    doc = report.to_json()
    if args.json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_report(doc))
    return check_status(doc)


def _plan_and_devices(args: argparse.Namespace) -> tuple[Any, Any, list]:
    """What runs where: the ``--plan`` (or the ``--device`` name), the ``--profile``'s
    problem (or None) and the devices they name, at ``--precision`` or else at what the plan
    or the problem records; an unknown ``--device`` is one clear line."""
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.calibrate.report import plan_devices

    plan: Any = None
    problem = None
    if args.plan:
        from hetlab.schedulers.plan import Plan

        plan = Plan.load(args.plan)
    if args.profile:
        from hetlab.cost.problem import Problem

        problem = Problem.load(args.profile)
    precision = precision_option(args)
    devs = plan_devices(
        plan if args.plan else args.device, problem, **platform_options(args), precision=precision
    )
    note_precision(devs, precision)
    if args.device:
        names = [d.name for d in devs]
        if args.device not in names:
            raise HetlabError(
                f"unknown device {args.device!r}; devices here: {', '.join(names)} "
                "(see 'hetlab devices')"
            )
        plan = args.device
    return plan, problem, devs


def _check_counts(args: argparse.Namespace) -> None:
    """One clear line for a count or tolerance out of range, before anything loads."""
    if args.repeat < 1:
        raise HetlabError(f"--repeat must be at least 1, got {args.repeat}")
    if args.warmup is not None and args.warmup < 0:
        raise HetlabError(f"--warmup must be 0 or more, got {args.warmup}")
    if args.per_node is not None and not (args.device and args.check):
        raise HetlabError("--per-node needs --device NAME and --check")
    if args.per_node is not None and args.per_node <= 0:
        raise HetlabError(f"--per-node tolerance must be positive, got {args.per_node}")


def _device_refusals(graph: Any, devs: list, name: str) -> None:
    """With ``--device``: the nodes it cannot run, grouped by op with the reasons; an error
    when no other device takes them, else a note on stderr naming the fallback."""

    dev = next(d for d in devs if d.name == name)
    why = unsupported_summary(dev, graph)
    if why is None:
        return
    cpus = [d.name for d in devs if not is_accelerator(d)]
    if not cpus or cpus[0] == name:
        raise HetlabError(why)
    print(f"note: {why}; they run on {cpus[0]}", file=sys.stderr)
