"""How long the workbench's figures take to build: the DAG, the cost heatmap and a plan's
Gantt chart of each HOPE phone profile given (default: the largest, nasnet-large's 1049
nodes), median of ``--repeat`` builds each, with the plan's solve time.

    python -m benchmarks.figures [--profiles nasnet-large-huawei_p40] [--repeat 5] [--out F]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import hetlab
from hetlab.cost import load_hope_profile
from hetlab.fileio import atomic_write_json
from hetlab.viz import dag_figure, gantt_figure, heatmap_figure


def median_s(build: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        build()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4)


def profile_row(name: str, repeat: int) -> dict[str, Any]:
    p = load_hope_profile(name)
    t0 = time.perf_counter()
    plan = hetlab.schedule(p, "greedy")
    solve = round(time.perf_counter() - t0, 4)
    return {
        "profile": name,
        "nodes": len(p.nodes),
        "greedy_solve_s": solve,
        "dag_s": median_s(lambda: dag_figure(p), repeat),
        "heatmap_s": median_s(lambda: heatmap_figure(p), repeat),
        "gantt_s": median_s(lambda: gantt_figure(plan, p), repeat),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", default="nasnet-large-huawei_p40")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None, help="the rows as JSON")
    args = ap.parse_args(argv)
    rows = [profile_row(name, args.repeat) for name in args.profiles.split(",")]
    for r in rows:
        print(", ".join(f"{k} {v}" for k, v in r.items()))
    if args.out is not None:
        atomic_write_json(args.out, {"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
