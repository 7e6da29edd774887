"""``hetlab recommend MODEL --devices A,B [--queues DEV=N] [--profile P.json] --out PLAN.json``
(spec §4): the plan hetlab would pick. It profiles the model (or reads ``--profile``),
computes the candidate plans, times them on the devices in interleaved rounds
(``hetlab.recommend`` with ``measure``), writes the chosen one as a plan and prints a table
of the candidates: predicted, measured, their ratio, and the error against onnxruntime.
"""

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
    progress_bar,
)
from hetlab.errors import HetlabError

DEFAULT_MEASURE = 10  # runs per round and candidate (the rounds: ``measured.ROUNDS``)


def configure(p: argparse.ArgumentParser) -> None:
    from hetlab.calibrate.recommend import DEFAULT_ALGO, MIXED_MARGIN

    p.add_argument("model", help="an .onnx file or a zoo model name (see `hetlab zoo`)")
    p.add_argument(
        "--devices",
        metavar="A,B",
        help="devices to profile (see `hetlab devices`); not needed with --profile",
    )
    add_platform_args(p)
    add_precision_arg(p)
    p.add_argument(
        "--error-budget",
        type=float,
        metavar="E",
        help="try every device at each precision it declares (and fp32), check each candidate "
        "against onnxruntime, and keep the fastest whose max_rel_err is at most E",
    )
    add_shape_arg(p)
    add_input_arg(p)
    p.add_argument(
        "--profile", metavar="PROBLEM.json", help="a profile from `hetlab profile` to start from"
    )
    p.add_argument(
        "--save-profile", metavar="PROBLEM.json", help="also write the profile made here"
    )
    p.add_argument(
        "--algo", default=DEFAULT_ALGO, help=f"the scheduler's candidate (default {DEFAULT_ALGO})"
    )
    p.add_argument(
        "--measure",
        type=int,
        default=DEFAULT_MEASURE,
        metavar="N",
        help=f"runs per round and candidate (default {DEFAULT_MEASURE}; 0: choose by the "
        "prediction alone, running nothing)",
    )
    p.add_argument(
        "--replay",
        action="store_true",
        help="with --profile: replay the profile's costs on a virtual clock instead of running "
        "on this machine's devices (a profile measured elsewhere); the replays rank the "
        "candidates only where they are within their tolerance of the predictions",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=MIXED_MARGIN,
        help=f"how much faster a plan over several devices must be than the best one-device "
        f"plan (default {MIXED_MARGIN})",
    )
    p.add_argument("--out", required=True, metavar="PLAN.json", help="where to write the plan")
    p.add_argument("--json", action="store_true", help="print the candidates as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    from hetlab.calibrate import recommend
    from hetlab.calibrate.report import problem_devices
    from hetlab.cost.problem import Problem
    from hetlab.devices.precision_choice import check_recorded
    from hetlab.executor.bad_inputs import check_inputs
    from hetlab.graph.inputs import model_inputs
    from hetlab.graph.onnx_io import load
    from hetlab.graph.shapes import parse_input_args, parse_shape_args

    if args.measure < 0 or not 0 <= args.margin < 1:
        raise HetlabError("--measure must be 0 or more and --margin in [0, 1)")
    if not args.profile and not args.devices:
        raise HetlabError("name the devices to profile (--devices cpu0,cl0) or give --profile")
    if args.replay:
        return _replayed(args)
    given = parse_input_args(args.input)
    graph = load(args.model, parse_shape_args(args.shape), given, args.fold)
    if given:  # the model's own run judges given inputs, as ``hetlab run`` does
        check_inputs(graph, model_inputs(graph, given))
    options = platform_options(args)
    feed = model_inputs(graph, given, 0) if args.measure else None
    if args.error_budget is not None:
        return _within(args, graph, options, given, feed)
    problem = Problem.load(args.profile) if args.profile else _profiled(args, graph, options, given)
    if args.profile:
        check_recorded(
            precision_option(args), problem.extra.get("precision") or {}, problem.devices
        )
    devs = problem_devices(problem, **options)  # the profile's own devices when made here
    plan = recommend(
        problem, graph, devs, algo=args.algo, margin=args.margin, measure=args.measure, inputs=feed
    )
    _write(args, plan)
    return 0


def _within(args: argparse.Namespace, graph: Any, options: dict, given: dict, feed: Any) -> int:
    """``--error-budget``: the candidates over every device's precisions
    (``recommend_precision``), the fastest within the budget written."""
    from hetlab.calibrate.recommend_precision import recommend_within
    from hetlab.devices import select

    if args.profile or args.replay:
        raise HetlabError("--error-budget profiles each precision: give --devices, not --profile")
    devs = select(args.devices, **options, precision=precision_option(args))
    note_precision(devs, precision_option(args))
    with progress_bar(graph.name, args.quiet) as progress:
        plan = recommend_within(
            graph,
            devs,
            args.error_budget,
            args.measure,
            inputs=feed,
            algo=args.algo,
            profile_options={"inputs": given, "progress": progress},
        )
    _write(args, plan, format_within)
    return 0


def format_within(rec: dict[str, Any]) -> str:
    """The candidates over precisions as a table: measured ms and error against plain
    onnxruntime, those within the budget marked ``ok``, the chosen one ``*``."""
    rows = sorted(rec["candidates"], key=lambda r: (r["measured"] is None, r["measured"] or 0))
    budget = rec["error_budget"]
    wp = max(len("precision"), *(len(r["precision"]) for r in rows)) + 2
    wc = max(len("candidate"), *(len(r["candidate"]) for r in rows)) + 2
    lines = [f"{'precision':<{wp}}{'candidate':<{wc}}{'measured':>10}{'max_rel_err':>13}"]
    for r in rows:
        err = r["max_rel_err"]
        within = "ok" if err is not None and err <= budget else "over"
        mark = " *" if f"{r['precision']} {r['candidate']}" == rec["chosen"] else ""
        ms = "failed" if r.get("error") else _ms(r["measured"])
        lines.append(
            f"{r['precision']:<{wp}}{r['candidate']:<{wc}}{ms:>10}"
            f"{'-' if err is None else f'{err:.1e}':>13}  {within}{mark}"
        )
    lines.append(
        f"(ms; the fastest within the error budget {budget:.1e}; * marks the plan written)"
    )
    lines += [
        f"{r['precision']} {r['candidate']} failed: {r['error']}" for r in rows if "error" in r
    ]
    return "\n".join(lines)


def _replayed(args: argparse.Namespace) -> int:
    """``--replay``: the candidates of ``--profile`` replayed on the virtual clock."""
    from hetlab.calibrate import recommend
    from hetlab.cost.problem import Problem
    from hetlab.devices.replay import graph_from_problem, replay_devices

    if not args.profile:
        raise HetlabError("--replay replays a profile: give it with --profile PROBLEM.json")
    problem = Problem.load(args.profile)
    plan = recommend(
        problem,
        graph_from_problem(problem),
        replay_devices(problem),
        algo=args.algo,
        margin=args.margin,
        measure=args.measure,
    )
    _write(args, plan)
    return 0


def _write(args: argparse.Namespace, plan: Any, table: Any = None) -> None:
    """Write the chosen plan to ``--out`` and print the candidates (``table``: their
    formatter, ``format_candidates`` by default)."""
    from hetlab.fileio import atomic_write_json

    atomic_write_json(args.out, plan.to_json())
    rec = plan.extra["recommended"]
    if args.json:
        json.dump(rec, sys.stdout, default=str)
        sys.stdout.write("\n")
    else:
        print((table or format_candidates)(rec))
        print(f"recommended {rec['chosen']} -> {args.out}")


def _profiled(args: argparse.Namespace, graph: Any, options: dict, given: dict) -> Any:
    """The model profiled on ``--devices`` with the default options (and a progress bar)."""
    from hetlab.calibrate import profile
    from hetlab.devices import select
    from hetlab.fileio import atomic_write_json

    precision = precision_option(args)
    devs = select(args.devices, **options, precision=precision)  # a bad name fails early
    note_precision(devs, precision)
    with progress_bar(graph.name, args.quiet) as progress:
        problem = profile(graph, devs, inputs=given, progress=progress)
    if args.save_profile:
        atomic_write_json(args.save_profile, problem.to_json())
    return problem


def format_candidates(rec: dict[str, Any]) -> str:
    """The candidates as a table: predicted and measured (or replayed) ms, their ratio, and
    the error against plain onnxruntime; the chosen one marked, and why the choice was the
    prediction's where replays were set aside."""
    predicted = rec.get("predicted", {})
    what = "replayed" if rec.get("replayed") else "measured"
    measured = rec.get(what) or {}
    errors, rel = rec.get("measure_errors", {}), rec.get("max_rel_err", {})
    names = sorted(predicted, key=lambda n: (measured.get(n) is None, measured.get(n) or 0, n))
    w = max(len(n) for n in names) + 2
    lines = [f"{'candidate':<{w}}{'predicted':>11}{what:>11}{'ratio':>8}{'max_rel_err':>13}"]
    for n in names:
        p, m = predicted.get(n), measured.get(n)
        ratio = f"{m / p:.2f}" if m and p else "-"
        err = f"{rel[n]:.1e}" if n in rel else "-"
        mark = " *" if n == rec.get("chosen") else ""
        ms = f"{m:.3f}" if m is not None else ("failed" if n in errors else "-")
        lines.append(f"{n:<{w}}{_ms(p):>11}{ms:>11}{ratio:>8}{err:>13}{mark}")
    basis = rec.get("basis")
    lines.append(f"(ms; chosen by {basis}, margin {rec.get('margin')}; * marks the plan written)")
    if rec.get("replayed"):
        lines.append("replayed: the profile's costs on a virtual clock, not a measurement")
    if rec.get("why"):
        lines.append(str(rec["why"]))
    for n, e in errors.items():
        lines.append(f"{n} failed: {e}")
    return "\n".join(lines)


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"
