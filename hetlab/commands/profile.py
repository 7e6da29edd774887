"""``hetlab profile MODEL --devices a,b [--queues DEV=N] [--shape ...] [--repeat N] [--groups]
--out PROBLEM.json`` (spec §2): measure a model on real devices and write the problem
atomically."""

from __future__ import annotations

import argparse
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
    progress_bar,
)
from hetlab.errors import HetlabError


def configure(p: argparse.ArgumentParser) -> None:
    from hetlab.profiling.options import ProfileOptions

    o = ProfileOptions()  # the one source of the defaults

    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    p.add_argument(
        "--devices",
        required=True,
        metavar="A,B",
        help="comma-separated device names (see `hetlab devices`)",
    )
    add_shape_arg(p)
    add_input_arg(p)
    _add_budget_args(p, o)
    p.add_argument(
        "--groups",
        action="store_true",
        help="also measure fused groups (Conv->Relu, Conv->BatchNormalization->Relu, MatMul->Add)",
    )
    p.add_argument(
        "--pattern",
        action="append",
        default=[],
        metavar="A->B",
        help="a group pattern instead of the defaults (repeatable; implies --groups)",
    )
    p.add_argument(
        "--no-comm", action="store_true", help="skip link calibration and edge transfers"
    )
    p.add_argument(
        "--no-calibrate",
        action="store_true",
        help="skip the executor's calibrations (unit boundaries on the links, concurrent units)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="measure everything again, cache nothing"
    )
    add_platform_args(p)
    add_precision_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--out", required=True, metavar="PROBLEM.json", help="where to write the problem"
    )


def _add_budget_args(p: argparse.ArgumentParser, o: Any) -> None:
    """How long each op is measured: repeats, warm-up, seconds, rounds and the context window
    (defaults from ``ProfileOptions``)."""
    p.add_argument(
        "--repeat",
        type=int,
        default=o.repeat,
        metavar="N",
        help=f"most timed runs per op and device (fewer for slow ops; default {o.repeat})",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=o.warmup,
        metavar="N",
        help=f"untimed runs first (default {o.warmup})",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=o.seconds,
        metavar="S",
        help=f"time one op's measurement may take before repeats are cut (default {o.seconds})",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=o.rounds,
        metavar="R",
        help=f"visits per op; its samples are spread over them against load drift "
        f"(default {o.rounds})",
    )
    p.add_argument(
        "--context",
        type=int,
        default=o.context,
        metavar="W",
        help="window of consecutive ops measured together to correct isolated costs "
        f"(default {o.context}; 0 = isolated costs only)",
    )


def main(args: argparse.Namespace) -> int:
    from hetlab.calibrate import profile
    from hetlab.calibrate.busy import busy_lines
    from hetlab.devices import select
    from hetlab.executor.bad_inputs import check_inputs
    from hetlab.fileio import atomic_write_json
    from hetlab.graph.inputs import model_inputs
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_input_args, parse_shape_args
    from hetlab.profiling.groups import DEFAULT_PATTERNS, parse_patterns

    if args.repeat < 1:
        raise HetlabError(f"--repeat must be at least 1 (got {args.repeat})")
    if args.warmup < 0 or args.seconds <= 0 or args.rounds < 1:
        raise HetlabError("--warmup must be >= 0, --seconds > 0 and --rounds >= 1")
    patterns = parse_patterns(args.pattern) if args.pattern else list(DEFAULT_PATTERNS)
    shapes, values = parse_shape_args(args.shape), parse_input_args(args.input)
    precision = precision_option(args)
    devs = select(args.devices, **platform_options(args), precision=precision)
    note_precision(devs, precision)
    graph = load(args.model, shapes, values, args.fold)
    if values:  # the model's own run judges given inputs, as ``hetlab run`` does
        check_inputs(graph, model_inputs(graph, values))
    with progress_bar(graph.name, args.quiet) as progress:
        p = profile(
            graph,
            devs,
            repeat=args.repeat,
            warmup=args.warmup,
            seconds=args.seconds,
            rounds=args.rounds,
            context=args.context,
            inputs=values,
            groups=args.groups or bool(args.pattern),
            patterns=patterns,
            progress=progress,
            cache=not args.no_cache,
            comm=not args.no_comm,
            handoff=not args.no_calibrate,
            concurrent=not args.no_calibrate,
        )
    atomic_write_json(args.out, p.to_json())
    prof = p.extra.get("profile", {})
    print(
        f"{graph.name}: {len(p.nodes)} nodes, {prof.get('signatures')} distinct ops on "
        f"{', '.join(p.devices)} in {prof.get('wall_s')} s -> {args.out}",
        file=sys.stderr,
    )
    line = estimated_summary(p)
    if line:
        print(line, file=sys.stderr)
    for line in busy_lines(p, f"rerun 'hetlab profile {args.model} --devices {args.devices}'"):
        print(line, file=sys.stderr)
    return 0


def estimated_summary(p: Any, shown: int = 3) -> str | None:
    """One line on the costs estimated because their measurement failed (``unmeasured.py``):
    how many of all the costs, and the first few with the reason; None when there are none."""
    prof = p.extra.get("profile", {})
    marked = [(n, d) for n in p.nodes if n.extra.get("estimated") for d in n.extra["no_measure"]]
    if not marked:
        return None
    total = prof.get("costs") or sum(c is not None for n in p.nodes for c in n.cost.values())
    parts = [
        f"{n.id} ({n.op_type}) on {d}: {n.extra.get('estimate_reason', {}).get(d, '?')}"
        for n, d in marked[:shown]
    ]
    more = f"; {len(marked) - shown} more" if len(marked) > shown else ""
    return (
        f"{len(marked)} of {total} costs estimated from the device's measured throughput "
        f"(nodes[].estimated): {'; '.join(parts)}{more}"
    )
