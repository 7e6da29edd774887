"""The corpus table: every model of ``hetlab.graph.corpus`` profiled, scheduled and run checked.

Per model: its source package, file size, node count, how many nodes each device supports
(with the op types the first OpenCL device does not, and why), and per algorithm the plan's
nodes per device, predicted and measured median and ``max_rel_err`` against onnxruntime.
Writes ``benchmarks/results/<platform>/corpus.csv`` and ``corpus.md`` (the table of
docs/corpus.md).

    python tests/thirdparty/fetch.py                          # the models, into .cache/thirdparty/
    python -m benchmarks.corpus --devices cpu0,cl0            # the 2-core VM (cl0: PoCL)
    python -m benchmarks.corpus --devices cpu0,cpu1,cl0 --repeat 20 --out $OUT/corpus   # GPU host
    python -m benchmarks.corpus --algos recommended,ilp,greedy,heft,single:cpu0,single:cl0
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.fig4.env import ROOT, fingerprint, platform_slug
from hetlab.graph.corpus import MODELS, CorpusModel

QUICK = {"repeat": 3, "warmup": 1, "rounds": 1, "seconds": 0.02, "context": 0, "comm": False}
FIELDS = [
    "model",
    "package",
    "kind",
    "size_mb",
    "nodes",
    "supported",
    "opencl_unsupported",
    "no_measure",
    "profile_s",
    "algo",
    "plan_nodes",
    "predicted_ms",
    "median_ms",
    "max_rel_err",
    "run_s",
]


REASONS = [  # an OpenCL refusal's class, from its message
    (r"is (u?int\d+|bool)\b", "integer tensors"),
    (r"has no OpenCL kernel", "no kernel"),
    (r"outside the ONNX domain", "not ai.onnx"),
    (r"must be (integer )?constants", "non-constant input"),
]


def reason(why: str) -> str:
    for pat, label in REASONS:
        if re.search(pat, why):
            return label
    return re.sub(r"'[^']*'", "X", why.split(";")[0])[:60]


def coverage(graph: Any, devices: list[Any]) -> tuple[dict[str, int], str]:
    """Nodes each device supports; the op types the first OpenCL device refuses, by reason."""
    counts = {d.name: sum(bool(d.supports(n, graph)) for n in graph.nodes) for d in devices}
    cl = next((d for d in devices if d.kind == "opencl"), None)
    if cl is None:
        return counts, ""
    why: dict[str, Counter[str]] = {}
    for n in graph.nodes:
        w = cl.why_not(n, graph)
        if w:
            why.setdefault(reason(w), Counter())[n.op_type] += 1
    return counts, "; ".join(
        f"{r}: " + ", ".join(f"{t} {k}" for t, k in sorted(c.items()))
        for r, c in sorted(why.items())
    )


def model_rows(
    m: CorpusModel, devices: list[Any], algos: list[str], repeat: int, quick: bool
) -> list[dict[str, Any]]:
    """One row per algorithm: profile once, schedule, run each plan with the check."""
    from hetlab.calibrate import profile, recommend
    from hetlab.executor.api import run
    from hetlab.executor.check import load_inputs
    from hetlab.graph import load
    from hetlab.schedulers import schedule

    graph = load(str(m.path), m.shapes or None, m.inputs() or None)
    counts, refused = coverage(graph, devices)
    t0 = time.perf_counter()
    settings = QUICK if quick else {"repeat": 5, "rounds": 1, "seconds": 0.05}
    prob = profile(graph, devices, inputs=m.inputs() or None, cache=not quick, **settings)
    base = {
        "model": m.name,
        "package": m.package,
        "kind": m.kind,
        "size_mb": round(sum(f.stat().st_size for f in _files(m)) / 2**20, 2),
        "nodes": len(graph.nodes),
        "supported": " ".join(f"{k}={v}" for k, v in counts.items()),
        "opencl_unsupported": refused,
        "no_measure": prob.extra["profile"].get("no_measure", 0),
        "profile_s": round(time.perf_counter() - t0, 2),
    }
    feed = load_inputs(graph, m.inputs())
    rows = []
    for algo in algos:  # "recommended": hetlab.calibrate.recommend's choice
        plan = recommend(prob, graph, devices) if algo == "recommended" else schedule(prob, algo)
        t1 = time.perf_counter()
        rep = run(graph, plan, devices, repeat=repeat, check=True, inputs=feed, problem=prob)
        per = Counter(plan.device_of.values())
        rows.append(
            {
                **base,
                "algo": algo,
                "plan_nodes": " ".join(f"{d}={k}" for d, k in sorted(per.items())),
                "predicted_ms": round(plan.makespan, 3),
                "median_ms": rep.latency_ms["median"],
                "max_rel_err": f"{rep.max_rel_err:.1e}",
                "run_s": round(time.perf_counter() - t1, 2),
            }
        )
    return rows


def _files(m: CorpusModel) -> list[Path]:
    return [m.path.parent / f for f in m.files().values()]


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of docs/corpus.md: one line per model, errors per algorithm."""
    out = [
        "| model | package | kind | MB | nodes | supported | not on OpenCL (why) "
        + "| no-measure | max_rel_err (median) per plan |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in dict.fromkeys(r["model"] for r in rows):
        rs = [r for r in rows if r["model"] == name]
        r = rs[0]
        errs = ", ".join(f"{x['algo']} {x['max_rel_err']} ({x['median_ms']:.3g} ms)" for x in rs)
        out.append(
            f"| {name} | {r['package']} | {r['kind']} | {r['size_mb']} | {r['nodes']} | "
            f"{r['supported']} | {r['opencl_unsupported'] or '-'} | {r['no_measure']} | {errs} |"
        )
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu0,cl0")
    ap.add_argument("--algos", default="ilp,greedy,heft")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per plan")
    ap.add_argument("--quick", action="store_true", help="the corpus test's short profile")
    ap.add_argument("--out", default=None, help="folder (default benchmarks/results/<platform>)")
    a = ap.parse_args()
    from hetlab.devices.platform import get

    devices = [get(d) for d in a.devices.split(",")]
    out = (
        Path(a.out)
        if a.out
        else ROOT / "benchmarks" / "results" / platform_slug(fingerprint(devices))
    )
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for name in a.models.split(","):
        m = MODELS[name]
        if not m.path.exists():
            print(f"{name}: {m.path} missing (run tests/thirdparty/fetch.py); skipped", flush=True)
            continue
        t0 = time.perf_counter()
        try:
            mine = model_rows(m, devices, a.algos.split(","), a.repeat, a.quick)
        except Exception as e:  # noqa: BLE001 - one model's failure is a row, not the end
            print(f"{name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        rows += mine
        errs = ", ".join(f"{r['algo']} {r['median_ms']} ms {r['max_rel_err']}" for r in mine)
        print(f"{name}: {time.perf_counter() - t0:.1f} s; {errs}", flush=True)
        with open(out / "corpus.csv", "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            w.writeheader()
            w.writerows(rows)
        (out / "corpus.md").write_text(markdown(rows))
    print(f"-> {out / 'corpus.csv'}, {out / 'corpus.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
