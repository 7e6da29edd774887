"""HOPE Fig. 4 on the platform at hand: profile, schedule with every algorithm, run for real.

    python -m benchmarks.fig4 [--models a,b | --quick] [--budget SECONDS]
        [--repeat N] [--seed S] [--out DIR] [--platform FILE] [--devices a,b] [--no-check] [--traces]
    python -m benchmarks.fig4 --plot-only DIR/fig4.csv

For each model (smallest first): profile on every device (``hetlab.profile``, its cache
reused; the problem is saved under ``DIR/problems/``), schedule CPU-only, GPU-only (see
``table``), mosaic, dmdar, heft, overseer, partitiontuner, greedy (HOPE:GS) and ilp
(HOPE:LP). Algorithms whose plans would run the same program share one measurement
(``same_plan_as``); each distinct plan is run once to check its outputs against one plain
onnxruntime session per model (``max_rel_err``), then all of them are timed interleaved: 3
to ``--repeat`` rounds that each run every plan once in a seeded, changing order
(``rounds``), so host drift hits every plan alike, each plan's turn one ``hetlab.run`` (one
untimed run, then one timed); median/p10/p90 over a plan's ``n_runs`` (= ``rounds``) wall
clocks. Writes
``DIR/fig4.csv`` (rewritten after every model, and during its rounds every 5 s),
``DIR/platform.json``, ``DIR/fig4_summary.json`` and the figure (``fig4.html``; ``.png``
when kaleido can render). ``--budget`` shares the seconds over the models by size and
lowers profiling repeats, ILP time limits and rounds to fit; whatever does not fit is
recorded as skipped.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hetlab
from benchmarks import rounds as F
from benchmarks.fig4 import table as T
from benchmarks.fig4.env import ROOT, Deadline, fingerprint, platform_slug, profile_model
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json

ALL = [
    "squeezenet",
    "lstm",
    "googlenet",
    "resnet50",
    "inception_v3",
    "inception_v4",
    "pnasnet_mobile",
    "pnasnet_large",
    "nasnet_large",
]
QUICK = ["squeezenet", "lstm", "googlenet"]


def say(msg: str) -> None:
    print(msg, flush=True)


def algo_params(
    algo: str, n_nodes: int, seconds: float | None, takes: set[str] | None = None
) -> dict[str, Any]:
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


@dataclass
class Entry:
    """One algorithm's row in the making: its plan, the distinct plan's rounds it is measured
    by (shared with the rows of the same program), or why it has none (``status``)."""

    label: str
    algo: str
    plan: Any = None
    status: str = "ok"
    timed: F.Timed | None = None
    same_plan_as: str = ""


def bench_model(
    model: str,
    graph: Any,
    problem: Any,
    devices: list[Any],
    platform: str,
    rows: list[dict],
    emit: Any,
    deadline: Deadline,
    repeat: int,
    check: bool,
    feed: dict | None = None,
    trace_dir: Path | None = None,
    seed: int = 0,
    progress: Any = None,
) -> None:
    """Schedule ``problem`` with every algorithm, check each distinct plan once
    (``rounds.plan_key``), time them interleaved in rounds (``rounds.measure``,
    3 to ``repeat`` rounds as the budget allows) and ``emit(row)`` each algorithm's row at the
    end, in table order; ``progress(rows)`` gets the model's provisional rows after every
    round from the third on. With ``trace_dir``, each distinct plan's median-run timeline as
    Chrome trace JSON there (``<model>-<label of its first algorithm>.json``)."""
    from hetlab.executor import random_inputs, reference_outputs

    devmap = {d.name: d for d in devices}
    device_set = "+".join(problem.devices)
    kinds = {d: T.device_kind_label(devmap[d]) for d in problem.devices}
    singles = {d: hetlab.schedule(problem, f"single:{d}") for d in problem.devices}
    # HOPE's own and its paper's baselines first: under a budget, what is left out is at the end
    hetero = sorted(
        T.HETERO, key=lambda la: T.RUN_FIRST.index(la[1]) if la[1] in T.RUN_FIRST else 99
    )
    entries = [
        Entry(label, algo)
        for label, algo in T.single_device_plans({d: p.makespan for d, p in singles.items()}, kinds)
        + hetero
    ]
    feed = feed if feed is not None else random_inputs(graph, 0)
    ref = (
        reference_outputs(graph.model_path, feed, list(graph.outputs))
        if check and graph.model_path
        else None
    )
    share = deadline.share()  # seconds for this model's scheduling + runs
    for i, e in enumerate(entries):  # 1. schedule everything
        if deadline.expired() and not e.algo.startswith("single:"):
            e.status = "skipped (budget)"
            continue
        try:
            if e.algo.startswith("single:"):
                e.plan = singles[e.algo.split(":", 1)[1]]
            else:
                sched_s = (
                    None if share is None else 0.25 * deadline.model_left() / (len(entries) - i)
                )
                e.plan = hetlab.schedule(
                    problem,
                    e.algo,
                    **algo_params(e.algo, len(problem.nodes), sched_s, takes(e.algo)),
                )
        except (HetlabError, ImportError) as ex:  # ImportError: an optional solver is missing
            e.status = f"schedule error: {ex}"
    timed: list[F.Timed] = []
    first: dict[tuple, Entry] = {}
    slow = 1.0  # measured / predicted so far on this model
    try:
        for e in entries:  # 2. run each distinct plan once, check its outputs once
            if e.plan is None or e.status != "ok":
                continue
            key = F.plan_key(graph, e.plan)
            if key in first:
                e.timed, e.same_plan_as = first[key].timed, first[key].label
                e.status = first[key].status
                continue
            first[key] = e
            if deadline.expired() or (
                share is not None and e.plan.makespan * slow * 5 / 1000.0 > deadline.left()
            ):
                e.status = "skipped (budget)"
                continue
            e.timed = F.Timed(e.plan)
            try:
                once_ms = F.check(e.timed, graph, devices, feed, ref)
            except HetlabError as ex:
                e.status, e.timed = f"run error: {ex}", None
                continue
            timed.append(e.timed)
            if e.plan.makespan > 0:
                slow = min(50.0, max(slow, once_ms / e.plan.makespan))
        n_rounds, last_write = [0], [0.0]

        def on_round(done: int) -> None:  # provisional rows: after round 3, then every 5 s at most
            n_rounds[0] = done
            if (
                progress is not None
                and done >= 3
                and (done == 3 or time.monotonic() - last_write[0] > 5.0)
            ):
                progress(model_rows(model, platform, device_set, entries, done))
                last_write[0] = time.monotonic()

        t0 = time.monotonic()
        F.measure(
            timed,
            graph,
            devices,
            feed,
            repeat,
            deadline.model_seconds_left,
            seed=seed,
            on_round=on_round,
        )
        say(
            f"{model:<15} {len(timed)} distinct plan(s) of {sum(e.plan is not None for e in entries)}, "
            f"{n_rounds[0]} interleaved rounds in {time.monotonic() - t0:.1f}s"
        )
        for e in entries:
            if e.timed is not None and e.timed.error:
                e.status = e.timed.error
        if trace_dir is not None:
            for e in entries:
                if e.timed is not None and not e.same_plan_as and e.timed.rounds_ms:
                    e.timed.report().write_trace(
                        trace_dir / f"{model}-{e.label.replace(':', '_')}.json"
                    )
        for r in model_rows(model, platform, device_set, entries, n_rounds[0]):
            emit(r)
    finally:
        F.release(devices)


def model_rows(
    model: str, platform: str, device_set: str, entries: list[Entry], rounds: int
) -> list[dict[str, Any]]:
    """The model's rows from its entries (each algorithm's own plan, its distinct plan's
    rounds); ``run_wall_s``: the seconds the distinct plan's runs took, executors built
    included."""
    out = []
    for e in entries:
        t = e.timed
        ran = t is not None and bool(t.rounds_ms) and e.status == "ok"
        r = T.row(
            model,
            platform,
            device_set,
            e.label,
            e.algo,
            e.plan,
            t.report() if ran else None,
            status=e.status,
            run_wall_s=None if e.same_plan_as or not ran else t.spent_s,
        )
        r.update(same_plan_as=e.same_plan_as, rounds=rounds if ran else math.nan)
        out.append(r)
    return out


def takes(algo: str) -> set[str]:
    """The parameters ``algo`` takes in this build (none when it is missing)."""
    from hetlab.schedulers import algorithm

    try:
        return {p.name for p in algorithm(algo).params}
    except (HetlabError, ImportError):
        return set()


def print_row(r: dict[str, Any]) -> None:
    def f(v: Any, fmt: str) -> str:
        return "-" if isinstance(v, float) and math.isnan(v) else format(v, fmt)

    say(
        f"{r['model']:<15} {r['algorithm']:<17} pred {f(r['predicted_ms'], '9.2f')}  meas "
        f"{f(r['measured_median_ms'], '9.2f')} [{f(r['measured_p10_ms'], '.2f')}..{f(r['measured_p90_ms'], '.2f')}]"
        f" n={f(r['n_runs'], '.0f')} solve {f(r['solve_seconds'], '.2f')}s err {f(r['max_rel_err'], '.1e')}"
        + ("" if r["status"] == "ok" else f"  ({r['status']})")
    )


def make_figure(csv_path: Path, out_dir: Path) -> list[str]:
    """The figure next to the table; returns the files written (none without plotly)."""
    try:
        from benchmarks.fig4.plot import write_figure
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
    ap.add_argument(
        "--budget", type=float, help="seconds of wall time for everything (lowers repeats)"
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=20,
        help="most interleaved rounds, i.e. timed runs per plan (default 20; at least 3 are run)",
    )
    ap.add_argument(
        "--seed", type=int, default=0, help="seed of the plans' order in each round (default 0)"
    )
    ap.add_argument("--out", help="result folder (default benchmarks/results/<platform-slug>/)")
    ap.add_argument("--platform", help="platform file (TOML/JSON) for hetlab.devices.platform")
    ap.add_argument("--devices", help="comma-separated subset of the platform's devices")
    ap.add_argument("--no-check", action="store_true", help="skip the output check")
    ap.add_argument(
        "--traces", action="store_true", help="write each plan's median-run timeline to DIR/traces/"
    )
    ap.add_argument("--plot-only", metavar="CSV", help="only make the figure from a table")
    a = ap.parse_args(argv)
    try:
        if a.plot_only:
            files = make_figure(Path(a.plot_only), Path(a.plot_only).resolve().parent)
            say("wrote " + (", ".join(files) if files else "nothing (plotly missing)"))
            return 0
        return bench(a)
    except HetlabError as e:
        print(f"fig4: {e}", file=sys.stderr)
        return 2


def bench(a: argparse.Namespace) -> int:
    from hetlab import zoo
    from hetlab.devices import devices as platform_devices

    t_start = time.monotonic()
    models = QUICK if a.quick else (a.models.split(",") if a.models else ALL)
    for m in models:
        zoo.info(m)  # unknown names fail now, not after an hour
    devs = platform_devices(a.platform)
    if a.devices:
        want = a.devices.split(",")
        missing = sorted(set(want) - {d.name for d in devs})
        if missing:
            raise HetlabError(
                f"--devices: no device {missing[0]!r} here (have {', '.join(d.name for d in devs)})"
            )
        devs = [d for d in devs if d.name in want]
    fp = fingerprint(devs)
    slug = platform_slug(fp)
    out = Path(a.out) if a.out else ROOT / "benchmarks" / "results" / slug
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "platform.json", fp)
    csv_path = out / "fig4.csv"
    sizes = {m: zoo.info(m).get("vertices", 100) for m in models}
    deadline = Deadline(a.budget, sizes, t_start)
    rows: list[dict[str, Any]] = []

    def emit(r: dict[str, Any]) -> None:
        rows.append(r)
        T.write_csv(csv_path, T.normalize(rows))
        print_row(r)

    say(
        f"platform {slug}: {', '.join(f'{d.name}={T.device_kind_label(d)}' for d in devs)}; models {models}"
    )
    for m in models:
        if not deadline.start_model(m):
            say(f"{m:<15} skipped: budget spent")
            continue
        t0 = time.monotonic()
        graph = hetlab.load(str(zoo.path(m)))
        problem, how = profile_model(
            graph, devs, out / "problems" / f"{m}.json", deadline.profile_settings()
        )
        say(f"{m:<15} {len(problem.nodes)} nodes, profile {how} in {time.monotonic() - t0:.1f}s")
        bench_model(
            m,
            graph,
            problem,
            devs,
            slug,
            rows,
            emit,
            deadline,
            a.repeat,
            not a.no_check,
            trace_dir=out / "traces" if a.traces else None,
            seed=a.seed,
            progress=lambda part: T.write_csv(csv_path, T.normalize(rows + part)),
        )
    summ = {
        "summary": T.summary(rows),
        "wall_s": round(time.monotonic() - t_start, 1),
        "budget_s": a.budget,
        "models": models,
        "platform": slug,
    }
    atomic_write_json(out / "fig4_summary.json", summ)
    files = make_figure(csv_path, out) if rows else []
    say(f"wrote {csv_path}" + "".join(f", {f}" for f in files) + f" in {summ['wall_s']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
