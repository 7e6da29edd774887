"""Memory safety of every GPU path a user reaches: NVIDIA's compute-sanitizer over the CLI.

For each zoo model: ``hetlab run --device cuda0 --check``, ``hetlab profile`` over
``cpu0,cuda0`` with the default options and over ``cuda0`` as ``--queues`` streams, then per
profile each algorithm's plan (``hetlab schedule``) and the recommended one (``hetlab
recommend``), each run by ``hetlab run --plan --check``. For each corpus model (fetched by
``tests/thirdparty/fetch.py``): ``hetlab run --device cuda0 --check``. Every command that
touches the GPU runs under ``compute-sanitizer --tool memcheck``; ``--racecheck MODEL`` also
runs racecheck over that model's ``cuda0`` run. The bar is zero errors everywhere.

    python -m benchmarks.sanitize --models squeezenet,googlenet --corpus all \\
        --out benchmarks/results/<platform>/sanitize.json

The JSON holds one row per command: ``tool``, ``command``, ``errors`` (the sanitizer's
ERROR SUMMARY, or null where it printed none), ``rc`` and ``seconds``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hetlab.corpus import MODELS
from hetlab.fileio import atomic_write_json

# memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: ... (N errors"
SUMMARY = re.compile(r"(?:ERROR SUMMARY: |RACECHECK SUMMARY: .*?\()(\d+) error")


def hetlab(*args: str) -> list[str]:
    return [sys.executable, "-m", "hetlab", *args]


def checked(cmd: list[str], tool: str | None, timeout: float) -> dict[str, Any]:
    """Run ``cmd`` (under the sanitizer's ``tool`` unless None); its row."""
    full = ["compute-sanitizer", "--tool", tool, "--print-limit", "20", *cmd] if tool else cmd
    t0 = time.perf_counter()
    try:
        r = subprocess.run(full, check=False, capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = str(e.stdout or "") + str(e.stderr or ""), "timeout"
    found = SUMMARY.findall(out)
    row = {
        "tool": tool,
        "command": " ".join(["hetlab", *cmd[3:]]),
        "errors": int(found[-1]) if found else None,
        "rc": rc,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if rc != 0 or (found and int(found[-1])):
        row["tail"] = out[-1500:]
    print(json.dumps({k: v for k, v in row.items() if k != "tail"}), flush=True)
    return row


def zoo_model(
    model: str, queues: int, algos: list[str], work: Path, timeout: float
) -> list[dict[str, Any]]:
    """Every path of one zoo model (see the module doc)."""
    rows = [
        checked(
            hetlab("run", model, "--device", "cuda0", "--check", "--repeat", "3"),
            "memcheck",
            timeout,
        )
    ]
    profiles = {
        "mixed": ["--devices", "cpu0,cuda0"],
        "streams": ["--devices", "cuda0", "--queues", f"cuda0={queues}"],
    }
    for name, devices in profiles.items():
        prof = work / f"{model}-{name}.json"
        rows.append(
            checked(
                hetlab("profile", model, *devices, "--quiet", "--out", str(prof)),
                "memcheck",
                timeout,
            )
        )
        if not prof.exists():
            continue
        plans = []
        for algo in algos:
            plan = work / f"{model}-{name}-{algo}.plan.json"
            rows.append(
                checked(
                    hetlab("schedule", str(prof), "--algo", algo, "--quiet", "--out", str(plan)),
                    None,
                    timeout,
                )
            )
            plans.append(plan)
        rec = work / f"{model}-{name}-recommended.plan.json"
        rows.append(
            checked(
                hetlab(
                    "recommend", model, "--profile", str(prof), "--measure", "2", "--out", str(rec)
                ),
                "memcheck",
                timeout,
            )
        )
        for plan in [*plans, rec]:
            if plan.exists():
                rows.append(
                    checked(
                        hetlab("run", model, "--plan", str(plan), "--check", "--repeat", "3"),
                        "memcheck",
                        timeout,
                    )
                )
    return rows


def corpus_runs(names: str, tmp: Path) -> list[list[str]]:
    """``hetlab run`` arguments of the corpus models fetched here (``all``, or those named)."""
    models = dict(MODELS)
    wanted = list(models) if names == "all" else names.split(",")
    out = []
    for n in wanted:
        m = models.get(n)
        if m is None or not m.path.exists():
            print(f"sanitize: corpus model {n} is not here; skipped", file=sys.stderr)
            continue
        out.append([str(m.path), *m.cli_args(tmp)])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="squeezenet,googlenet,inception_v3,resnet50,pnasnet_mobile")
    ap.add_argument("--corpus", default="", help="corpus models run on cuda0 alone (or 'all')")
    ap.add_argument("--queues", type=int, default=4, help="streams of the streams profile")
    ap.add_argument("--algos", default="ilp,greedy,heft", help="the schedulers whose plans run")
    ap.add_argument("--racecheck", default="squeezenet", help="a model for racecheck ('' none)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per command")
    ap.add_argument("--out", required=True, help="the JSON rows")
    args = ap.parse_args(argv)
    if shutil.which("compute-sanitizer") is None:
        print(
            "sanitize: compute-sanitizer is not on PATH (a CUDA toolkit provides it)",
            file=sys.stderr,
        )
        return 2
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in [m for m in args.models.split(",") if m]:
            rows += zoo_model(model, args.queues, args.algos.split(","), Path(tmp), args.timeout)
            atomic_write_json(args.out, {"rows": rows})
        for run in corpus_runs(args.corpus, Path(tmp)) if args.corpus else []:
            cmd = hetlab("run", *run, "--device", "cuda0", "--check", "--repeat", "3")
            rows.append(checked(cmd, "memcheck", args.timeout))
            atomic_write_json(args.out, {"rows": rows})
    if args.racecheck:
        rows.append(
            checked(
                hetlab("run", args.racecheck, "--device", "cuda0", "--repeat", "2"),
                "racecheck",
                args.timeout,
            )
        )
    errors = sum(r["errors"] or 0 for r in rows)
    unclear = [r["command"] for r in rows if r["tool"] and r["errors"] is None]
    atomic_write_json(args.out, {"rows": rows, "errors": errors, "without_summary": unclear})
    print(f"sanitize: {len(rows)} commands, {errors} errors, {len(unclear)} without a summary")
    return 0 if errors == 0 and not unclear else 1


if __name__ == "__main__":
    sys.exit(main())
