"""The corpus table: every model of ``hetlab.corpus`` profiled, scheduled and run checked.

Per model: its source package, file size, node count (before and after folding), how many
nodes each device supports (with the op types the first OpenCL device does not, and why), what
``hetlab run --device D --check`` does (D the first accelerator: nodes per device, those D
refuses staying on the first CPU, and its ``max_rel_err`` beside onnxruntime's own
``reference_spread``), and per algorithm the plan's nodes per device, predicted and measured
median and ``max_rel_err`` against onnxruntime. The plans are timed in interleaved rounds, each
round of a plan one ``hetlab.run`` (``plan_rows``); names whose plans run one program share its
measurement (``same_as``), and ``rec_vs_best_single`` is the recommended plan's median over the
best ``single:DEVICE``'s, from the same rounds. Writes
``benchmarks/results/<platform>/corpus.csv`` and ``corpus.md``
(the table of docs/corpus.md).

    python tests/thirdparty/fetch.py                          # the models, into .cache/thirdparty/
    python -m benchmarks.corpus --devices cpu0,cl0            # the 2-core VM (cl0: PoCL)
    python -m benchmarks.corpus --devices cpu0,cpu1,cl0 --rounds 20 --out $OUT/corpus   # GPU host
    python -m benchmarks.corpus --algos recommended,ilp,greedy,heft,single:cpu0,single:cl0
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import hetlab
from benchmarks.corpus_table import coverage, device_run, markdown, plan_cell
from benchmarks.fig4.env import ROOT, fingerprint, platform_slug
from hetlab.corpus import MODELS, CorpusModel

QUICK = {"repeat": 3, "warmup": 1, "rounds": 1, "seconds": 0.02, "context": 0, "comm": False}
FIELDS = [
    "model",
    "package",
    "kind",
    "size_mb",
    "nodes",
    "nodes_before_fold",
    "supported",
    "opencl_unsupported",
    "no_measure",
    "device_run",
    "device_run_nodes",
    "device_run_err",
    "reference_spread",
    "profile_s",
    "algo",
    "same_as",
    "plan_nodes",
    "predicted_ms",
    "median_ms",
    "rounds",
    "max_rel_err",
    "status",
    "run_s",
    "best_single",
    "rec_vs_best_single",
]


def model_rows(
    m: CorpusModel,
    devices: list[Any],
    algos: list[str],
    rounds: int,
    repeat: int,
    quick: bool,
    seed: int = 0,
    measure: int = 0,
) -> list[dict[str, Any]]:
    """One row per algorithm: profile once, schedule, time the plans in rounds, checked."""
    from hetlab.executor import load_inputs

    graph = hetlab.load(str(m.path), m.shapes or None, m.inputs() or None)
    counts, refused = coverage(graph, devices)
    t0 = time.perf_counter()
    settings = QUICK if quick else {"repeat": 5, "rounds": 1, "seconds": 0.05}
    prob = hetlab.profile(graph, devices, inputs=m.inputs() or None, cache=not quick, **settings)
    base = {
        "model": m.name,
        "package": m.package,
        "kind": m.kind,
        "size_mb": round(sum(f.stat().st_size for f in _files(m)) / 2**20, 2),
        "nodes": len(graph.nodes),
        "nodes_before_fold": graph.fold_summary()["vertices_before"],
        "supported": " ".join(f"{k}={v}" for k, v in counts.items()),
        "opencl_unsupported": refused,
        "no_measure": prob.extra["profile"].get("no_measure", 0),
        "profile_s": round(time.perf_counter() - t0, 2),
    }
    feed = load_inputs(graph, m.inputs())
    base.update(device_run(graph, devices, feed))
    plans = {  # "recommended": hetlab.recommend's choice
        a: hetlab.recommend(prob, graph, devices, measure=measure, inputs=feed)
        if a == "recommended"
        else hetlab.schedule(prob, a)
        for a in with_singles(algos, [d.name for d in devices])
    }
    return [{**base, **r} for r in plan_rows(graph, plans, devices, feed, rounds, repeat, seed)]


def plan_rows(
    graph: Any,
    plans: dict[str, Any],
    devices: list[Any],
    feed: dict[str, Any],
    rounds: int,
    repeat: int,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The plans' rows: each distinct plan (``rounds.program_key``) timed in up to ``rounds``
    rounds, each round one ``hetlab.run`` (two untimed runs, then the median of ``repeat``);
    a plan's time is the median over its rounds. Its first round is checked against
    onnxruntime (``max_rel_err``)."""
    from benchmarks import rounds as F
    from hetlab.executor import reference_outputs

    same = F.same_as({a: F.program_key(graph, p) for a, p in plans.items()})
    timed = {a: F.Timed(plans[a]) for a in plans if not same[a]}
    ref = reference_outputs(graph.model_path or "", feed, list(graph.outputs))
    try:
        F.measure(
            list(timed.values()),
            graph,
            devices,
            feed,
            rounds,
            lambda: None,
            repeat=repeat,
            warmup=2,
            ref=ref,
            seed=seed,
            least=min(3, rounds),
        )
    finally:
        F.release(devices)
    return timed_rows(plans, same, timed)


def timed_rows(
    plans: dict[str, Any], same: dict[str, str], timed: dict[str, Any]
) -> list[dict[str, Any]]:
    """``plan_rows``' rows from its rounds: each name gets its distinct plan's (``timed``,
    ``rounds.Timed``) median over the rounds, check error, status and time spent."""
    status = {a: t.error or "ok" for a, t in timed.items()}
    med = {
        a: round(float(np.median(t.rounds_ms)), 4) if status[a] == "ok" else None
        for a, t in timed.items()
    }
    best, ratio = vs_best_single({a: med[same[a] or a] for a in plans})
    rows = []
    for a, plan in plans.items():
        own = timed[same[a] or a]
        per = Counter(plan.device_of.values())
        rows.append(
            {
                "algo": a,
                "same_as": same[a],
                "plan_nodes": " ".join(f"{d}={k}" for d, k in sorted(per.items())),
                "predicted_ms": round(plan.makespan, 3),
                "median_ms": med[same[a] or a],
                "rounds": len(own.rounds_ms),
                "max_rel_err": "" if own.max_rel_err is None else f"{own.max_rel_err:.1e}",
                "status": status[same[a] or a],
                "run_s": "" if same[a] else round(own.spent_s, 2),
                "best_single": best,
                "rec_vs_best_single": ratio,
            }
        )
    return rows


def with_singles(algos: list[str], devices: list[str]) -> list[str]:
    """``algos``, and with ``recommended`` among them every ``single:DEVICE`` not listed: the
    recommended plan is judged against the best single device, timed in the same rounds."""
    if "recommended" not in algos:
        return list(algos)
    return list(dict.fromkeys([*algos, *(f"single:{d}" for d in devices)]))


def vs_best_single(medians: dict[str, float | None]) -> tuple[str, float | None]:
    """The fastest ``single:DEVICE`` plan and the recommended plan's time over its time, both
    medians of the same rounds; ``("", None)`` where either is missing."""
    singles = {a: t for a, t in medians.items() if a.startswith("single:") and t}
    rec = medians.get("recommended")
    if not singles:
        return "", None
    best = min(singles, key=singles.__getitem__)
    return best, None if rec is None else round(rec / singles[best], 3)


def _files(m: CorpusModel) -> list[Path]:
    return [m.path.parent / f for f in m.files().values()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu0,cl0")
    ap.add_argument(
        "--algos",
        default="recommended,ilp,greedy,heft",
        help="with recommended, every single:DEVICE is timed too (default %(default)s)",
    )
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=10, help="rounds per model")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per plan in each round")
    ap.add_argument("--seed", type=int, default=0, help="seed of the plans' order in each round")
    ap.add_argument("--quick", action="store_true", help="the corpus test's short profile")
    ap.add_argument(
        "--measure",
        type=int,
        default=0,
        help="recommended chooses among its candidates by N timed runs per round (0: predicted)",
    )
    ap.add_argument("--out", default=None, help="folder (default benchmarks/results/<platform>)")
    a = ap.parse_args()
    from hetlab.devices import select

    devices = select(a.devices)
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
            mine = model_rows(
                m, devices, a.algos.split(","), a.rounds, a.repeat, a.quick, a.seed, a.measure
            )
        except Exception as e:  # noqa: BLE001 - one model's failure is a row, not the end
            print(f"{name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        rows += mine
        vs = mine[0]["rec_vs_best_single"]
        print(
            f"{name}: {time.perf_counter() - t0:.1f} s, {mine[0]['rounds']} rounds; "
            + ", ".join(plan_cell(r) for r in mine)
            + ("" if vs is None else f"; recommended / {mine[0]['best_single']} = {vs}x"),
            flush=True,
        )
        with open(out / "corpus.csv", "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            w.writeheader()
            w.writerows(rows)
        (out / "corpus.md").write_text(markdown(rows))
    print(f"-> {out / 'corpus.csv'}, {out / 'corpus.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
