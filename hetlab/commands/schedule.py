"""``hetlab schedule``: compute a plan for a problem (spec §4) and write it atomically.

``PROBLEM`` is a problem JSON (spec §2), or a model name/path with ``--profile PROBLEM.json``
(the profile is loaded; profiling itself is ``hetlab profile``). A one-line summary (makespan,
lower bound, gap, solve seconds) goes to stderr; ``--list`` prints the algorithms and their
parameters (JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path

from hetlab.commands.options import add_precision_arg, precision_option
from hetlab.cost.problem import Problem
from hetlab.cost.queues import only_devices
from hetlab.devices.precision_choice import check_recorded
from hetlab.errors import HetlabError
from hetlab.schedulers.base import MODULES, algorithm, schedule
from hetlab.schedulers.bounds import lower_bound, validate_plan

# the algorithm parameters that have flags here, passed on when given
PARAM_FLAGS = (
    "epsilon",
    "nt",
    "k",
    "node_limit",
    "time_limit",
    "groups",
    "lookahead",
    "passes",
    "merge_threshold",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "problem", nargs="?", help="problem JSON (spec §2), or MODEL with --profile"
    )
    parser.add_argument(
        "--algo", help="algorithm name (see --list), e.g. ilp, ilp+, greedy, heft, single:cpu0"
    )
    parser.add_argument(
        "--profile", metavar="PROBLEM.json", help="the profiled problem when PROBLEM is a model"
    )
    parser.add_argument(
        "--out", metavar="PLAN.json", help="where to write the plan (default: stdout)"
    )
    parser.add_argument(
        "--devices",
        metavar="A,B",
        help="schedule over these of the problem's devices only (e.g. a GPU and its streams)",
    )
    add_precision_arg(parser)  # checked against the profile's: its costs are that precision's
    parser.add_argument(
        "--epsilon", type=float, help="ilp, ilp+: balance of the up-rank bisection [0, 1]"
    )
    parser.add_argument("--nt", type=int, help="ilp, ilp+: largest subgraph (vertices) per ILP")
    parser.add_argument("--k", type=int, help="greedy: ops mapped jointly per step")
    parser.add_argument(
        "--node-limit",
        type=int,
        dest="node_limit",
        help="ilp, ilp+: branch-and-bound nodes per subgraph ILP (the work budget: the same "
        "plan on any machine and under any load)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        dest="time_limit",
        help="ilp, ilp+: seconds per subgraph ILP, a wall-clock safety net behind --node-limit",
    )
    parser.add_argument(
        "--groups", action="store_true", default=None, help="ilp, ilp+: may choose fused groups"
    )
    parser.add_argument(
        "--lookahead", type=int, help="ilp+: following subgraphs each guided window also sees"
    )
    parser.add_argument("--passes", type=int, help="ilp+: guided passes after HOPE's")
    parser.add_argument(
        "--merge-threshold",
        type=float,
        dest="merge_threshold",
        help="greedy: cost below which an op joins its single predecessor",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the algorithms and their parameters"
    )
    parser.add_argument("--json", action="store_true", help="with --list: print JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or summary line")


def registry_listing() -> list[dict]:
    """Every algorithm with its title and parameters (what the widgets build controls from)."""

    out = []
    for name in MODULES:
        try:
            a = _lookup(name)
        except HetlabError:
            continue  # not built yet in this checkout
        shown = "single:DEVICE" if name == "single" else name
        out.append(
            {
                "name": shown,
                "title": a.title,
                "sequential": a.sequential,
                "params": [
                    {
                        "name": p.name,
                        "kind": p.kind,
                        "default": p.default,
                        "low": p.low,
                        "high": p.high,
                        "help": p.help,
                    }
                    for p in a.params
                ],
            }
        )
    return out


def _lookup(name: str):
    """``base.algorithm`` with a module missing from this build as a clear ``HetlabError``."""

    try:
        return algorithm(name)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("hetlab"):
            raise
        raise HetlabError(f"algorithm {name!r} is not available in this build") from None


def _progress(quiet: bool):
    if quiet:
        return None, None
    # lazy: tqdm is optional
    from tqdm import tqdm

    state: dict = {}

    def progress(done: int, total: int, msg: str) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(
                total=total, file=sys.stderr, delay=1.0, unit="subgraph", leave=False
            )
        bar.set_postfix_str(msg, refresh=False)
        bar.update(done - bar.n)

    def close() -> None:
        if state.get("bar") is not None:
            state["bar"].close()

    return progress, close


def _print_listing(as_json: bool) -> None:
    """``--list``: each algorithm with its title and its parameters' defaults."""
    items = registry_listing()
    if as_json:
        print(json.dumps(items, indent=1))
        return
    for a in items:
        ps = ", ".join(f"{p['name']}={p['default']}" for p in a["params"])
        print(f"{a['name']:16s} {a['title']}" + (f"  [{ps}]" if ps else ""))


def _load_problem(args: argparse.Namespace) -> Problem:
    """The problem file (PROBLEM.json, or MODEL's ``--profile``), restricted to ``--devices``."""
    src = args.problem
    if args.profile:
        src = args.profile
    elif not src.endswith(".json") and not Path(src).is_file():
        raise HetlabError(
            f"schedule: {src!r} is not a problem file; for a model give --profile PROBLEM.json "
            "(made by 'hetlab profile')"
        )
    problem = Problem.load(src)
    if args.devices:
        problem = only_devices(problem, [d for d in args.devices.split(",") if d])
    recorded = problem.extra.get("precision") or {}
    check_recorded(precision_option(args), recorded, problem.devices)
    return problem


def main(args: argparse.Namespace) -> int:
    if args.list:
        _print_listing(args.json)
        return 0
    if not args.problem:
        raise HetlabError(
            "schedule: give a PROBLEM.json (or MODEL --profile PROBLEM.json), or --list"
        )
    if not args.algo:
        raise HetlabError("schedule: --algo is required (see 'hetlab schedule --list')")
    algo = _lookup(args.algo)  # unknown names fail before any work
    problem = _load_problem(args)
    params = {k: getattr(args, k) for k in PARAM_FLAGS if getattr(args, k) is not None}
    progress, close = _progress(args.quiet)
    if progress is not None and "progress" in inspect.signature(algo.func).parameters:
        params["progress"] = progress
    try:
        plan = schedule(problem, args.algo, **params)
    finally:
        if close is not None:
            close()
    validate_plan(problem, plan)
    lb = lower_bound(problem)
    if args.out:
        plan.save(args.out)
    else:
        print(json.dumps(plan.to_json(), indent=1))
    if not args.quiet:
        gap = (plan.makespan / lb - 1.0) * 100 if lb > 0 else 0.0
        print(
            f"{args.algo}: makespan {plan.makespan:.4g} {problem.units}, lower bound {lb:.4g} "
            f"(gap {gap:.1f}%), solve {plan.solve_seconds:.2f} s"
            + (f" -> {args.out}" if args.out else ""),
            file=sys.stderr,
        )
        if "windows_optimal" in plan.extra:
            print(f"{args.algo}: {windows_line(plan.extra)}", file=sys.stderr)
    return 0


def gap_text(gap) -> str:
    """A plan's ``mip_gap_max`` for people: a percentage, or what it says instead (no
    incumbent from the ILP, or no gap reported)."""
    if isinstance(gap, (int, float)) and not isinstance(gap, bool):
        return f"{gap:.2%}"
    return "none reported" if gap is None else str(gap)


def windows_line(extra: dict) -> str:
    """How the ILP windows of an ``ilp``/``ilp+`` plan ended, in one line."""
    line = (
        f"{extra['windows_optimal']}/{extra['windows']} windows optimal, "
        f"max MIP gap {gap_text(extra.get('mip_gap_max'))}, "
        f"{extra.get('mip_nodes', 0)} B&B nodes, ILP time {extra.get('solve_s', 0.0):.2f} s "
        f"(sum over windows), decided by {extra.get('decided_by')}"
    )
    clock = extra.get("windows_time_limit") or 0
    if clock:
        line += f"; {clock} stopped by the time limit (those may differ between runs)"
    return line
