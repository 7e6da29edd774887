"""Scheduler benchmarks (issue 3 acceptance): run ``python benchmarks/schedulers.py [--part a|b]``.

(a) a 1000-node, 2-device random layered DAG shaped like NASNet-large: wall time of ``greedy``
    and ``ilp`` (NT=12), makespans, gap to the lower bound, and ``ilp <= heft`` when heft exists.
(b) the 34 real phone profiles in ``../shared/hope-profiles`` (read in place, never copied):
    ``ilp`` (NT=12, 10 s per subgraph) against HOPE's own ILP plan re-simulated under spec §3
    (``_hope_results.device_maps``: the cpu-2 map's ``simulated_makespan_ms_this_problem``),
    the gap to the lower bound and the gain over the best single device.
(grid) the inception-v3 / Huawei P40 phone profile over epsilon x NT (5 x 5): ``ilp`` (HOPE as
    published) and ``ilp+`` at their defaults, and ``greedy``; makespans, the longest ``ilp``
    solve, the cells where ``ilp`` beats ``greedy``, and where ``ilp+`` differs from ``ilp``
    and what decided it (``plan.extra["decided_by"]``).
Results: ``benchmarks/results/<platform>/schedulers_{layered,hope,grid}.csv``.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import math
import os
import socket
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from hetlab import Problem
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_bytes
from hetlab.schedulers import algorithm, defaults, lower_bound, schedule, validate_plan
from tests.schedulers.helpers import layered_problem

PROFILES = ROOT / "data" / "hope-profiles"


def write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        return
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    atomic_write_bytes(path, buf.getvalue().encode())


def has(name: str) -> bool:
    try:
        algorithm(name)
        return True
    except (HetlabError, ModuleNotFoundError):
        return False


def single_best(p: Problem) -> tuple[str, float]:
    """Best whole-model single device: the sum of its costs (no transfers), if it runs all."""
    best = ("-", math.inf)
    for j, d in enumerate(p.devices):
        col = p.cost_matrix[:, j]
        if all(math.isfinite(c) for c in col) and col.sum() < best[1]:
            best = (d, float(col.sum()))
    return best


def part_a(out: Path, time_limit: float | None) -> None:
    p = layered_problem(1, 1000, 8, 2)
    lb = lower_bound(p)
    rows = []
    algos = ["greedy", "ilp", "ilp+"] + (["heft"] if has("heft") else [])
    res = {}
    for a in algos:
        kw = {"nt": 12} if a.startswith("ilp") else {}
        if a.startswith("ilp") and time_limit:
            kw["time_limit"] = time_limit
        t = time.perf_counter()
        plan = schedule(p, a, **kw)
        dt = time.perf_counter() - t
        validate_plan(p, plan)
        res[a] = plan.makespan
        info = plan.extra.get("ilp", {})
        rows.append(
            {
                "algo": a,
                "nodes": len(p.nodes),
                "devices": 2,
                "makespan_ms": round(plan.makespan, 4),
                "lower_bound_ms": round(lb, 4),
                "gap_to_lb": round(plan.makespan / lb - 1, 4),
                "wall_s": round(dt, 3),
                "time_limit_per_subgraph_s": info.get("time_limit_s", ""),
                "pass_makespans_ms": " ".join(f"{x:.1f}" for x in info.get("passes", [])),
                "pass_s": " ".join(map(str, info.get("pass_s", []))),
                "load_avg_1min": round(os.getloadavg()[0], 2),
            }
        )
        print(
            f"(a) {a:7s} makespan {plan.makespan:9.2f} ms  lb {lb:8.2f}  gap {plan.makespan / lb - 1:6.1%}  "
            f"wall {dt:7.2f} s",
            flush=True,
        )
    if "heft" in res:
        print(
            f"(a) ilp+ <= heft: {res['ilp+'] <= res['heft'] + 1e-9} "
            f"({res['ilp+']:.2f} vs {res['heft']:.2f}); ilp {res['ilp']:.2f}"
        )
    else:
        print("(a) heft not in this build: ilp+ <= heft not checked")
    write_csv(out / "schedulers_layered.csv", rows)


def hope_plan_ms(doc: dict) -> float | None:
    maps = (doc.get("_hope_results") or {}).get("device_maps") or {}
    for name, info in (maps.get("files") or {}).items():
        if name.endswith("-cpu-2.txt.op") and isinstance(info, dict):
            return float(info["simulated_makespan_ms_this_problem"])
    return None


def part_b(
    out: Path, pattern: str, time_limit: float, nt: int, passes: int | None, tag: str, algo: str
) -> None:
    files = sorted(glob.glob(str(PROFILES / pattern)), key=lambda f: (os.path.getsize(f), f))
    rows, ratios, worse = [], [], []
    for f in files:
        doc = json.loads(Path(f).read_text())
        p = Problem.from_json(doc, f)
        lb = lower_bound(p)
        t = time.perf_counter()
        kw = {"passes": passes} if algo == "ilp+" else {}
        plan = schedule(p, algo, nt=nt, time_limit=time_limit, **kw)
        dt = time.perf_counter() - t
        validate_plan(p, plan)
        g = schedule(p, "greedy").makespan
        hope = hope_plan_ms(doc)
        dev, single = single_best(p)
        info = plan.extra.get("ilp", {})
        row = {
            "problem": Path(f).stem,
            "nodes": len(p.nodes),
            "ilp_ms": round(plan.makespan, 4),
            "greedy_ms": round(g, 4),
            "hope_plan_ms": hope if hope is not None else "",
            "ilp_over_hope": round(plan.makespan / hope, 4) if hope else "",
            "lower_bound_ms": round(lb, 4),
            "gap_to_lb": round(plan.makespan / lb - 1, 4),
            "best_single": dev,
            "best_single_ms": round(single, 4),
            "gain_over_single": round(single / plan.makespan - 1, 4),
            "subgraphs": len(plan.extra.get("subgraphs", [])),
            "limit_hits": plan.extra.get("windows_limit"),
            "time_limit_s": time_limit,
            "passes": len(info.get("passes") or [1]),
            "wall_s": round(dt, 2),
            "load_avg_1min": round(os.getloadavg()[0], 2),
        }
        rows.append(row)
        if hope:
            ratios.append(plan.makespan / hope)
            if plan.makespan > hope + 1e-9:
                worse.append(row["problem"])
        print(
            f"(b) {row['problem']:32s} n={len(p.nodes):4d} ilp {plan.makespan:9.2f} hope {hope or float('nan'):9.2f} "
            f"ratio {row['ilp_over_hope'] or '-':>6}  lb-gap {row['gap_to_lb']:6.1%}  "
            f"vs single {dev} {row['gain_over_single']:6.1%}  {dt:6.1f} s",
            flush=True,
        )
        write_csv(out / f"schedulers_hope{tag}.csv", rows)
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(
            f"(b) geometric mean ilp/HOPE over {len(ratios)} plans: {gm:.4f} (need <= 0.95: {gm <= 0.95}); "
            f"worse than HOPE on: {worse or 'none'}"
        )


GRID_EPS = (0.05, 0.1, 0.2, 0.3, 0.5)
GRID_NT = (4, 8, 12, 16, 24)


def part_grid(out: Path, name: str = "inception-v3-huawei_p40") -> None:
    p = Problem.load(PROFILES / f"{name}.json")
    g = schedule(p, "greedy").makespan
    print(
        f"(grid) {name}: {len(p.nodes)} nodes, greedy {g:.2f} ms, defaults: ilp {defaults('ilp')}"
    )
    print(
        f"{'eps':>5} {'NT':>3} {'ilp ms':>8} {'ilp s':>6} {'win':>4} {'opt':>4} {'lim':>4} "
        f"{'kept':>4} {'ilp+ ms':>8} {'ilp+ s':>6}  decided_by"
    )
    rows = []
    for eps in GRID_EPS:
        for nt in GRID_NT:
            t = time.perf_counter()
            a = schedule(p, "ilp", epsilon=eps, nt=nt)
            a_s = time.perf_counter() - t
            t = time.perf_counter()
            b = schedule(p, "ilp+", epsilon=eps, nt=nt)
            b_s = time.perf_counter() - t
            for plan in (a, b):
                validate_plan(p, plan)
            e = a.extra
            row = {
                "epsilon": eps,
                "nt": nt,
                "ilp_ms": round(a.makespan, 3),
                "ilp_s": round(a_s, 2),
                "windows": e["windows"],
                "optimal": e["windows_optimal"],
                "limit": e["windows_limit"],
                "start_kept": e["windows_start_kept"],
                "mip_nodes": e.get("mip_nodes", ""),
                "clock_stopped": e.get("windows_time_limit", ""),
                "ilp_plus_ms": round(b.makespan, 3),
                "ilp_plus_s": round(b_s, 2),
                "decided_by": b.extra["decided_by"],
                "greedy_ms": round(g, 3),
            }
            rows.append(row)
            print(
                f"{eps:5.2f} {nt:3d} {a.makespan:8.2f} {a_s:6.2f} {row['windows']:4d} "
                f"{row['optimal']:4d} {row['limit']:4d} {row['start_kept']:4d} "
                f"{b.makespan:8.2f} {b_s:6.2f}  {row['decided_by']}",
                flush=True,
            )
    write_csv(out / "schedulers_grid.csv", rows)
    beats = sum(r["ilp_ms"] < r["greedy_ms"] - 1e-9 for r in rows)
    worse = [r for r in rows if r["ilp_plus_ms"] > r["ilp_ms"] + 1e-9]
    differ = [r for r in rows if abs(r["ilp_plus_ms"] - r["ilp_ms"]) > 1e-9]
    by: dict[str, int] = {}
    for r in differ:
        by[r["decided_by"]] = by.get(r["decided_by"], 0) + 1
    print(f"(grid) ilp beats greedy ({g:.2f} ms) in {beats} of {len(rows)} cells")
    print(f"(grid) longest ilp solve: {max(r['ilp_s'] for r in rows):.2f} s (need <= 3 s)")
    print(f"(grid) ilp+ worse than ilp in {len(worse)} cells (need 0)")
    print(f"(grid) ilp+ differs from ilp in {len(differ)} cells, decided by: {by or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["a", "b", "both", "grid"], default="both")
    ap.add_argument("--files", default="*.json", help="glob inside the profiles folder (a subset)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="(b) seconds per subgraph")
    ap.add_argument(
        "--a-time-limit", type=float, default=None, help="(a) seconds per subgraph (default: ilp's)"
    )
    ap.add_argument("--nt", type=int, default=12)
    ap.add_argument("--b-algo", default="ilp+", choices=["ilp", "ilp+"], help="(b) which ILP")
    ap.add_argument("--passes", type=int, default=None, help="(b) ilp+ passes (default: ilp+'s)")
    ap.add_argument("--tag", default="", help="(b) suffix of the CSV name, for subsets")
    ap.add_argument("--platform", default=socket.gethostname().split(".")[0] or "local")
    args = ap.parse_args()
    out = ROOT / "benchmarks" / "results" / args.platform
    if args.part in ("a", "both"):
        part_a(out, args.a_time_limit)
    if args.part in ("b", "both"):
        part_b(out, args.files, args.time_limit, args.nt, args.passes, args.tag, args.b_algo)
    if args.part == "grid":
        part_grid(out)


if __name__ == "__main__":
    main()
