"""HOPE Fig. 4 on the platform at hand: profile, schedule with every algorithm, run for real.

    PYTHONPATH=. python benchmarks/hope_fig4.py [--models a,b | --quick] [--budget SECONDS]
        [--repeat N] [--out DIR] [--platform FILE] [--no-check]
    PYTHONPATH=. python benchmarks/hope_fig4.py --plot-only DIR/hope_fig4.csv

For each model (smallest first): profile on every device (``hetlab.cost.profile``, its cache
reused; the problem is saved under ``DIR/problems/``), schedule CPU-only, GPU-only (see
``fig4_table``), mosaic, dmdar, heft, overseer, partitiontuner, greedy (HOPE:GS) and ilp
(HOPE:LP), then run each plan with ``hetlab.executor.run`` (prepared once, one warm-up, then
``n_runs`` timed repetitions; median/p10/p90 of their wall clocks) and check its outputs
against one plain onnxruntime session per model (``max_rel_err``). Writes ``DIR/hope_fig4.csv``
(rewritten after every row), ``DIR/platform.json``, ``DIR/summary.json`` and the figure
(``hope_fig4.html``; ``.png`` when kaleido can render). ``--budget`` shares the seconds
over the models by size and lowers profiling repeats, ILP time limits and run repeats to fit;
whatever does not fit is recorded as skipped.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import fig4_table as T
from fig4_env import Deadline, fingerprint, platform_slug, profile_model

from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json

ALL = ["squeezenet", "lstm", "googlenet", "resnet50", "inception_v3", "inception_v4", "pnasnet_mobile",
       "pnasnet_large", "nasnet_large"]  # fmt: skip
QUICK = ["squeezenet", "lstm", "googlenet"]


def say(msg: str) -> None:
    print(msg, flush=True)


def algo_params(algo: str, n_nodes: int, seconds: float | None, takes: set[str] | None = None) -> dict[str, Any]:
    """Scheduler parameters; under a budget the ILP's per-subgraph time limit shrinks (and
    one forward pass replaces two when even 0.05 s per window would not fit) so that its
    ``passes * n/12`` windows, ~0.1 s of model building each, take about ``seconds``."""
    if algo != "ilp" or seconds is None:
        return {}
    takes = {"time_limit", "passes"} if takes is None else takes
    for passes in (2, 1):
        windows = passes * max(1, math.ceil(n_nodes / 12))
        limit = seconds / windows - 0.1
        if limit >= 0.05 or passes == 1 or "passes" not in takes:
            break
    out: dict[str, Any] = {"time_limit": round(min(0.5, max(0.02, limit)), 3)}
    if "passes" in takes:
        out["passes"] = passes
    return out


def run_repeats(predicted_ms: float, seconds: float | None, most: int, least: int = 3) -> int:
    """Timed repetitions that fit ``seconds`` (with one warm-up and some slack) at the
    predicted latency; between ``least`` and ``most``."""
    if seconds is None:
        return most
    per = max(predicted_ms, 0.05) * 1.5 / 1000.0
    return int(max(least, min(most, seconds / per - 2)))


def bench_model(model: str, graph: Any, problem: Any, devices: list[Any], platform: str, rows: list[dict],
                emit: Any, deadline: Deadline, repeat: int, check: bool, feed: dict | None = None,
                trace_dir: Path | None = None) -> None:  # fmt: skip
    """Schedule ``problem`` with every algorithm and run each plan on ``devices``; each row
    goes to ``rows`` and ``emit(row)`` as soon as it exists; with ``trace_dir``, the median
    run's timeline of each plan as Chrome trace JSON there (``<model>-<label>.json``)."""
    from hetlab.executor import run
    from hetlab.executor.check import max_rel_err, random_inputs, reference_outputs
    from hetlab.schedulers import schedule

    devmap = {d.name: d for d in devices}
    device_set = "+".join(problem.devices)
    kinds = {d: T.device_kind_label(devmap[d]) for d in problem.devices}
    singles = {}
    for d in problem.devices:
        singles[d] = schedule(problem, f"single:{d}")
    # HOPE's own and its paper's baselines first: under a budget, what is left out is at the end
    hetero = sorted(T.HETERO, key=lambda la: T.RUN_FIRST.index(la[1]) if la[1] in T.RUN_FIRST else 99)
    plans_todo = T.single_device_plans({d: p.makespan for d, p in singles.items()}, kinds) + hetero
    feed = feed if feed is not None else random_inputs(graph, 0)
    ref = reference_outputs(graph.model_path, feed, list(graph.outputs)) if check and graph.model_path else None
    share = deadline.share()  # seconds for this model's scheduling + runs
    n_plans = len(plans_todo)
    slow = 1.0  # measured / predicted so far on this model: repeats are chosen at the measured pace
    for i, (label, algo) in enumerate(plans_todo):
        left_plans = n_plans - i
        if deadline.expired() and not algo.startswith("single:"):
            emit(T.row(model, platform, device_set, label, algo, status="skipped (budget)"))
            continue
        try:
            if algo.startswith("single:"):
                plan = singles[algo.split(":", 1)[1]]
            else:
                sched_s = None if share is None else 0.25 * deadline.model_left() / left_plans
                plan = schedule(problem, algo, **algo_params(algo, len(problem.nodes), sched_s, takes(algo)))
        except (HetlabError, ImportError) as e:  # ImportError: an algorithm not in this build
            emit(T.row(model, platform, device_set, label, algo, status=f"schedule error: {e}"))
            continue
        if deadline.expired():
            emit(T.row(model, platform, device_set, label, algo, plan, status="skipped (budget)"))
            continue
        run_s = None if share is None else 0.7 * deadline.model_left() / left_plans
        n = run_repeats(plan.makespan * slow, run_s, repeat)
        if share is not None and plan.makespan * slow * (n + 1) / 1000.0 > deadline.left():
            emit(T.row(model, platform, device_set, label, algo, plan, status="skipped (budget)"))
            continue
        t0 = time.perf_counter()
        try:
            rep = run(graph, plan, devmap, repeat=n, check=False, inputs=feed)
        except HetlabError as e:
            emit(T.row(model, platform, device_set, label, algo, plan, status=f"run error: {e}"))
            continue
        if ref is not None:
            rep.max_rel_err = max_rel_err(rep.outputs, ref)
        if trace_dir is not None:
            rep.write_trace(trace_dir / f"{model}-{label.replace(':', '_')}.json")
        if plan.makespan > 0:
            slow = min(50.0, max(slow, rep.latency_ms["median"] / plan.makespan))
        emit(T.row(model, platform, device_set, label, algo, plan, rep, run_wall_s=time.perf_counter() - t0))


def takes(algo: str) -> set[str]:
    """The parameters ``algo`` takes in this build (none when it is missing)."""
    from hetlab.schedulers.base import algorithm

    try:
        return {p.name for p in algorithm(algo).params}
    except (HetlabError, ImportError):
        return set()


def print_row(r: dict[str, Any]) -> None:
    def f(v: Any, fmt: str) -> str:
        return "-" if isinstance(v, float) and math.isnan(v) else format(v, fmt)

    say(f"{r['model']:<15} {r['algorithm']:<17} pred {f(r['predicted_ms'], '9.2f')}  meas "
        f"{f(r['measured_median_ms'], '9.2f')} [{f(r['measured_p10_ms'], '.2f')}..{f(r['measured_p90_ms'], '.2f')}]"
        f" n={f(r['n_runs'], '.0f')} solve {f(r['solve_seconds'], '.2f')}s err {f(r['max_rel_err'], '.1e')}"
        + ("" if r["status"] == "ok" else f"  ({r['status']})"))  # fmt: skip


def make_figure(csv_path: Path, out_dir: Path) -> list[str]:
    """The figure next to the table; returns the files written (none without plotly)."""
    try:
        from fig4_plot import write_figure
    except ImportError:
        return []
    try:
        return write_figure(T.read_csv(csv_path), out_dir)
    except ImportError as e:
        say(f"figure skipped: {e}")
        return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help=f"comma-separated zoo models (default all: {','.join(ALL)})")
    ap.add_argument("--quick", action="store_true", help=f"only {','.join(QUICK)}")
    ap.add_argument("--budget", type=float, help="seconds of wall time for everything (lowers repeats)")
    ap.add_argument("--repeat", type=int, default=20, help="most timed runs per plan (default 20)")
    ap.add_argument("--out", help="result folder (default benchmarks/results/<platform-slug>/)")
    ap.add_argument("--platform", help="platform file (TOML/JSON) for hetlab.devices.platform")
    ap.add_argument("--devices", help="comma-separated subset of the platform's devices")
    ap.add_argument("--no-check", action="store_true", help="skip the output check")
    ap.add_argument("--traces", action="store_true", help="write each plan's median-run timeline to DIR/traces/")
    ap.add_argument("--plot-only", metavar="CSV", help="only make the figure from a table")
    a = ap.parse_args(argv)
    try:
        if a.plot_only:
            files = make_figure(Path(a.plot_only), Path(a.plot_only).resolve().parent)
            say("wrote " + (", ".join(files) if files else "nothing (plotly missing)"))
            return 0
        return bench(a)
    except HetlabError as e:
        print(f"hope_fig4: {e}", file=sys.stderr)
        return 2


def bench(a: argparse.Namespace) -> int:
    from hetlab import zoo
    from hetlab.devices.platform import devices as platform_devices
    from hetlab.graph import load

    t_start = time.monotonic()
    models = QUICK if a.quick else (a.models.split(",") if a.models else ALL)
    for m in models:
        zoo.info(m)  # unknown names fail now, not after an hour
    devs = platform_devices(a.platform)
    if a.devices:
        want = a.devices.split(",")
        missing = sorted(set(want) - {d.name for d in devs})
        if missing:
            raise HetlabError(f"--devices: no device {missing[0]!r} here (have {', '.join(d.name for d in devs)})")
        devs = [d for d in devs if d.name in want]
    fp = fingerprint(devs)
    slug = platform_slug(fp)
    out = Path(a.out) if a.out else ROOT / "benchmarks" / "results" / slug
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "platform.json", fp)
    csv_path = out / "hope_fig4.csv"
    sizes = {m: zoo.info(m).get("vertices", 100) for m in models}
    deadline = Deadline(a.budget, sizes, t_start)
    rows: list[dict[str, Any]] = []

    def emit(r: dict[str, Any]) -> None:
        rows.append(r)
        T.write_csv(csv_path, T.normalize(rows))
        print_row(r)

    say(f"platform {slug}: {', '.join(f'{d.name}={T.device_kind_label(d)}' for d in devs)}; models {models}")
    for m in models:
        if not deadline.start_model(m):
            say(f"{m:<15} skipped: budget spent")
            continue
        t0 = time.monotonic()
        graph = load(str(zoo.path(m)))
        problem, how = profile_model(graph, devs, out / "problems" / f"{m}.json", deadline.profile_settings())
        say(f"{m:<15} {len(problem.nodes)} nodes, profile {how} in {time.monotonic() - t0:.1f}s")
        bench_model(m, graph, problem, devs, slug, rows, emit, deadline, a.repeat, not a.no_check,
                    trace_dir=out / "traces" if a.traces else None)  # fmt: skip
    summ = {"summary": T.summary(rows), "wall_s": round(time.monotonic() - t_start, 1), "budget_s": a.budget,
            "models": models, "platform": slug}  # fmt: skip
    atomic_write_json(out / "summary.json", summ)
    files = make_figure(csv_path, out) if rows else []
    say(f"wrote {csv_path}" + "".join(f", {f}" for f in files) + f" in {summ['wall_s']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
