"""Mixed plans run the way a user runs them: per model, ``hetlab profile`` on
``--devices``, ``hetlab schedule`` with each ``--algos`` (``single:DEV`` too), plus
``prefer:GPU`` (every node the GPU can run on it, the rest on the first CPU group), then
``hetlab run --plan --check --json`` in a fresh process per plan (``--processes N``: N of them,
in rounds over the plans, since a process's median varies from process to process).
Prints and writes per plan: nodes per device, units, predicted and measured median (ms; the
median process's), every process's median, max_rel_err and fallbacks.

Models: zoo names, or the real third-party models of ``hetlab.corpus`` (fetched by
``tests/thirdparty/fetch.py``); by default a detector (ddddocr's ``dddd_det``), an OCR
recognizer with attention (PP-OCRv4 ``ppocr_rec``, SVTR) and an audio LSTM (``silero_vad``; its LSTM sits inside an ``If``, so
the schedulers keep it on one CPU group and ``prefer:`` is its mixed plan).

    python tests/thirdparty/fetch.py   # the third-party models, into .cache/thirdparty/
    python -m benchmarks.mixed_plans --models dddd_det,ppocr_rec,silero_vad --out DIR
    python -m benchmarks.mixed_plans --models googlenet --devices cpu0,cpu1 --algos ilp,heft
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

from hetlab.corpus import CACHE, MODELS

THIRD_PARTY = ("dddd_det", "ppocr_rec", "silero_vad")  # the default models, of the corpus


def hetlab(*args: str) -> None:
    """``hetlab ARGS`` in a process of its own; if it fails (it has said why), stop here."""
    r = subprocess.run(
        [sys.executable, "-m", "hetlab", *args], check=False, stdout=subprocess.DEVNULL
    )
    if r.returncode:
        raise SystemExit(f"benchmark stopped: 'hetlab {args[0]}' exited {r.returncode}")


def model_source(m: str) -> tuple[str, list[str]] | None:
    """(MODEL as the CLI takes it, the arguments fixing its inputs) for a zoo name or a
    third-party model; None, with a line saying so, when a third-party file is missing."""
    if m not in MODELS:
        return m, []
    onnx = MODELS[m].path
    if not onnx.exists():
        print(f"{m}: {onnx} missing (run tests/thirdparty/fetch.py); skipped", flush=True)
        return None
    return str(onnx), MODELS[m].cli_args(CACHE)


def model_graph(m: str) -> tuple[Any, dict[str, Any]]:
    """The model's ``OpGraph`` with the inputs the corpus fixes (a zoo name or a corpus
    model) and those inputs' values; stops with one line when its file is missing."""
    from hetlab import load

    src = model_source(m)
    if src is None:
        raise SystemExit(f"{m}: model file missing")
    if m not in MODELS:
        return load(src[0]), {}
    c = MODELS[m]
    return load(src[0], c.shapes or None, c.inputs() or None), c.inputs()


def profiled_models(
    models: str, devices: str, out: Path
) -> Iterator[tuple[str, str, list[str], Path]]:
    """``(model, MODEL for the CLI, its input arguments, its profile)`` for each of the
    comma-separated ``models`` whose file is here, profiled into ``out`` (``quick_profile``)."""
    out.mkdir(parents=True, exist_ok=True)
    for m in models.split(","):
        src = model_source(m)
        if src is None:
            continue
        prob = out / f"{m}.problem.json"
        quick_profile(src[0], devices, src[1], prob)
        yield m, src[0], src[1], prob


def quick_profile(onnx: str, devices: str, args: list[str], out: Path, *extra: str) -> None:
    """``hetlab profile`` with the benchmarks' small budget (5 repeats, 1 round, 0.05 s)."""
    hetlab(
        "profile",
        onnx,
        "--devices",
        devices,
        *args,
        "--repeat",
        "5",
        "--rounds",
        "1",
        "--seconds",
        "0.05",
        "--quiet",
        *extra,
        "--out",
        str(out),
    )


def prefer_plan(problem_path: Path, gpu: str, out: Path) -> None:
    """Every node with a cost on ``gpu`` there, the rest on the first other device."""
    from hetlab import Plan, Problem
    from hetlab.fileio import atomic_write_json, read_json

    prob = Problem.from_json(read_json(problem_path))
    other = next(d for d in prob.devices if d != gpu)
    dev = {n.id: gpu if n.cost.get(gpu) is not None else other for n in prob.nodes}
    plan = Plan.build(prob, f"prefer:{gpu}", dev, [n.id for n in prob.nodes])
    atomic_write_json(out, plan.to_json())


def run_plan(
    onnx: str,
    plan: Path,
    prob: Path,
    args: list[str],
    repeat: str,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> dict | None:
    """``hetlab run --plan --profile [--check] --json`` in a fresh process (``env``: its
    environment): its report, or None (said why)."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "hetlab",
            "run",
            str(onnx),
            "--plan",
            str(plan),
            "--profile",
            str(prob),
            *args,
            *(["--check"] if check else []),
            "--repeat",
            repeat,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if r.returncode:
        print(f"{plan.name}: run failed: {r.stderr.strip()[-300:]}", flush=True)
        return None
    return json.loads(r.stdout)


def row_of(m: str, algo: str, plan: Path, reps: list[dict]) -> dict:
    """One row per plan; with several processes, medians are the median over them."""
    per_dev: dict[str, int] = {}
    for x in json.loads(plan.read_text())["assignments"]:
        per_dev[x["device"]] = per_dev.get(x["device"], 0) + 1
    meds = [d["latency_ms"]["median"] for d in reps]
    d = reps[sorted(range(len(reps)), key=meds.__getitem__)[len(reps) // 2]]  # the median process
    row = {
        "model": m,
        "algo": algo,
        "nodes": per_dev,
        "units": d.get("units"),
        "predicted_ms": d["predicted_ms"],
        "median_ms": d["latency_ms"]["median"],
        "p10_ms": d["latency_ms"]["p10"],
        "p90_ms": d["latency_ms"]["p90"],
        "process_medians_ms": meds,
        "predicted_io_ms": d.get("predicted_io_ms"),
        "predicted_host_ms": d.get("predicted_host_ms"),
        "max_rel_err": max(x.get("max_rel_err") or 0.0 for x in reps),
        "fallbacks": d.get("fallbacks"),
        "nodes_executed": d.get("nodes_executed"),
    }
    best = row["predicted_host_ms"] or row["predicted_io_ms"] or row["predicted_ms"]
    spread = (
        f" processes {', '.join(f'{x:.3f}' for x in meds)} (x{min(meds) / best:.2f}-{max(meds) / best:.2f})"
        if len(meds) > 1
        else ""
    )
    print(
        f"{m:<10} {algo:<11} nodes {per_dev} units {row['units']} predicted "
        f"{row['predicted_ms']:.3f} measured {row['median_ms']:.3f} "
        f"(x{row['median_ms'] / row['predicted_ms']:.2f}; with host I/O {row['predicted_io_ms'] or row['predicted_ms']:.3f}, "
        f"x{row['median_ms'] / (row['predicted_io_ms'] or row['predicted_ms']):.2f}; host-serial "
        f"{row['predicted_host_ms'] or float('nan'):.3f}, x{row['median_ms'] / (row['predicted_host_ms'] or float('nan')):.2f}){spread} "
        f"max_rel_err {row['max_rel_err']:.2e} fallbacks {row['fallbacks'] or 'none'}",
        flush=True,
    )
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cpu0,cpu1,cl0")
    ap.add_argument("--algos", default="ilp,greedy,heft")
    ap.add_argument("--gpu", default="cl0", help="the device of the prefer: plan ('' for none)")
    ap.add_argument("--models", default=",".join(THIRD_PARTY))
    ap.add_argument("--repeat", default="10")
    ap.add_argument("--out", default="thirdparty-out")
    ap.add_argument(
        "--processes",
        type=int,
        default=1,
        help="fresh processes per plan, in rounds; the row's median is their medians' median",
    )
    a = ap.parse_args()
    out = Path(a.out)
    rows = []
    for m, onnx, args, prob in profiled_models(a.models, a.devices, out):
        prefer = [f"prefer:{a.gpu}"] if a.gpu and a.gpu in a.devices.split(",") else []
        algos = [*a.algos.split(","), *prefer]
        plans = {}
        for algo in algos:
            plans[algo] = out / f"{m}.{algo.replace(':', '-')}.plan.json"
            if algo.startswith("prefer:"):
                prefer_plan(prob, a.gpu, plans[algo])
            else:
                hetlab("schedule", str(prob), "--algo", algo, "--out", str(plans[algo]))
        runs: dict[str, list[dict]] = {algo: [] for algo in algos}
        for k in range(a.processes):  # rounds: each plan once per round, in a fresh process
            for algo in algos:
                d = run_plan(onnx, plans[algo], prob, args, a.repeat)
                if d is None:
                    print(f"{m} {algo}: run {k + 1} failed", flush=True)
                    continue
                tag = "" if a.processes == 1 else f".p{k + 1}"
                (out / f"{m}.{algo.replace(':', '-')}{tag}.run.json").write_text(json.dumps(d))
                runs[algo].append(d)
        for algo in algos:
            if runs[algo]:
                rows.append(row_of(m, algo, plans[algo], runs[algo]))
                (out / "mixed_plans.json").write_text(json.dumps(rows, indent=1))
        mine = [r for r in rows if r["model"] == m]
        singles = {
            r["algo"]: r["median_ms"] / r["predicted_ms"]
            for r in mine
            if r["algo"].startswith("single:")
        }
        for (
            r
        ) in mine:  # measured/predicted over the single-device plan's: the machine's drift cancels
            dev = max(r["nodes"], key=r["nodes"].get)
            if f"single:{dev}" in singles:
                r["vs_single"] = round(
                    r["median_ms"] / r["predicted_ms"] / singles[f"single:{dev}"], 3
                )
        if singles:
            print(
                f"{m} vs single: "
                + ", ".join(f"{r['algo']} x{r['vs_single']:.2f}" for r in mine if "vs_single" in r),
                flush=True,
            )
            (out / "mixed_plans.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
