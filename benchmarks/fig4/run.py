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
from pathlib import Path
from typing import Any

import hetlab
from benchmarks.fig4 import table as T
from benchmarks.fig4.env import ROOT, Deadline, fingerprint, platform_slug, profile_model
from benchmarks.fig4.model import bench_model, say
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
