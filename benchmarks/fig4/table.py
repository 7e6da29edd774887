"""The HOPE Fig. 4 table: which plans to run, one tidy row per (model, plan), normalization.

HOPE (Xia et al., 2022, §6.2 and Fig. 4) runs each model as CPU-only, GPU-only, MOSAIC,
StarPU (dmdar), HOPE:GS and HOPE:LP and normalizes every latency to the GPU-only version.
We add HEFT, OverSeer and PartitionTuner. "CPU-only" is the CPU group with the smallest
predicted makespan; "GPU-only" the OpenCL device with the smallest one, named after its
OpenCL device type (``GPU-only`` for a GPU, ``OpenCL-CPU-only`` for PoCL on a CPU...).
Times are ms: ``predicted_ms`` from the simulator (spec §3) on the profiled problem,
``measured_*`` from ``hetlab.run`` wall clocks over ``n_runs`` rounds.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hetlab.fileio import atomic_write_bytes

# (label in the table/figure, hetlab algorithm name); single devices are added per platform
HETERO: list[tuple[str, str]] = [
    ("MOSAIC", "mosaic"),
    ("StarPU-dmdar", "dmdar"),
    ("HEFT", "heft"),
    ("OverSeer", "overseer"),
    ("PartitionTuner", "partitiontuner"),
    ("HOPE:GS", "greedy"),
    ("HOPE:LP", "ilp"),
]
RUN_FIRST = ["ilp", "greedy", "dmdar", "mosaic", "heft", "overseer", "partitiontuner"]
COLUMNS = [
    "model",
    "platform",
    "device_set",
    "algorithm",
    "algo",
    "devices_used",
    "predicted_ms",
    "measured_median_ms",
    "measured_p10_ms",
    "measured_p90_ms",
    "norm_to",
    "normalized",
    "normalized_cpu",
    "solve_seconds",
    "max_rel_err",
    "n_runs",
    "units",
    "fallbacks",
    "run_wall_s",
    "status",
    "same_plan_as",
    "rounds",
]


def device_kind_label(device: Any) -> str:
    """``GPU`` / ``CPU`` / ``ACCEL`` from an OpenCL device's type, ``CPU`` for a core group,
    ``info()['kind']`` upper-cased for anything else (fake devices)."""
    kind = getattr(device, "kind", "")
    if kind == "onnxruntime-cpu":
        return "CPU"
    if kind == "opencl":
        t = device.info().get("type", "")
        return {"GPU": "GPU", "ACCELERATOR": "ACCEL", "CPU": "OpenCL-CPU"}.get(t, "OpenCL")
    return str(kind or "DEV").upper()


def single_device_plans(
    predicted: dict[str, float], kinds: dict[str, str]
) -> list[tuple[str, str]]:
    """``[(label, "single:DEV")]``: the best (least predicted ms) CPU group as ``CPU-only``
    and the best non-CPU device as ``<KIND>-only`` (GPU-only on a GPU machine)."""
    out = []
    cpus = [d for d in predicted if kinds[d] == "CPU"]
    others = [d for d in predicted if kinds[d] != "CPU"]
    if cpus:
        out.append(("CPU-only", "single:" + min(cpus, key=lambda d: predicted[d])))
    if others:
        best = min(others, key=lambda d: predicted[d])
        out.append((f"{kinds[best]}-only", "single:" + best))
    return out


def norm_baseline(rows: Sequence[dict[str, Any]]) -> str | None:
    """The label rows of a model are normalized to: ``GPU-only`` when present, else the
    non-CPU single device (``OpenCL-CPU-only`` on PoCL), else ``CPU-only``."""
    labels = [r["algorithm"] for r in rows if str(r["algorithm"]).endswith("-only")]
    for want in ("GPU-only",):
        if want in labels:
            return want
    other = [lab for lab in labels if lab != "CPU-only"]
    return other[0] if other else ("CPU-only" if "CPU-only" in labels else None)


def _ms(r: dict[str, Any]) -> float:
    v = r.get("measured_median_ms")
    return float(v) if v not in (None, "") and not _nan(v) else math.nan


def _nan(v: Any) -> bool:
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def normalize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fill ``norm_to``/``normalized`` (measured median / the baseline's, per model and
    device set) and ``normalized_cpu`` (to CPU-only) in place; returns ``rows``."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["model"], r.get("device_set")), []).append(r)
    for grp in groups.values():
        base = norm_baseline(grp)
        ref = {r["algorithm"]: _ms(r) for r in grp}
        for r in grp:
            b = ref.get(base, math.nan) if base else math.nan
            c = ref.get("CPU-only", math.nan)
            r["norm_to"] = base or ""
            r["normalized"] = round(_ms(r) / b, 4) if b > 0 else math.nan
            r["normalized_cpu"] = round(_ms(r) / c, 4) if c > 0 else math.nan
    return rows


def row(
    model: str,
    platform: str,
    device_set: str,
    label: str,
    algo: str,
    plan: Any = None,
    report: Any = None,
    status: str = "ok",
    run_wall_s: float | None = None,
) -> dict[str, Any]:
    """One table row from a Plan and a RunReport (either may be None: not scheduled/run)."""
    r: dict[str, Any] = dict.fromkeys(COLUMNS, math.nan)
    r.update(
        model=model,
        platform=platform,
        device_set=device_set,
        algorithm=label,
        algo=algo,
        status=status,
        devices_used="",
        fallbacks="",
        same_plan_as="",
    )
    if plan is not None:
        r["predicted_ms"] = round(float(plan.makespan), 4)
        r["solve_seconds"] = round(float(plan.solve_seconds), 4)
        used: dict[str, int] = {}
        for a in plan.assignments:
            used[a.device] = used.get(a.device, 0) + 1
        r["devices_used"] = " ".join(f"{d}:{n}" for d, n in sorted(used.items()))
    if report is not None:
        lat = report.latency_ms
        r.update(
            measured_median_ms=lat["median"],
            measured_p10_ms=lat["p10"],
            measured_p90_ms=lat["p90"],
            n_runs=report.repeat,
            units=report.units,
            fallbacks=len(report.fallbacks),
        )
        if report.max_rel_err is not None:
            r["max_rel_err"] = float(f"{report.max_rel_err:.3g}")
    if run_wall_s is not None:
        r["run_wall_s"] = round(run_wall_s, 2)
    return r


def write_csv(path: str | Path, rows: Sequence[dict[str, Any]]) -> Path:
    """The whole table, rewritten atomically (a timeout never leaves half a file)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    return atomic_write_bytes(Path(path), buf.getvalue().encode())


def read_csv(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a table written by ``write_csv`` (numbers back as floats, blanks as NaN)."""
    with open(path, newline="") as f:
        out = []
        for r in csv.DictReader(f):
            for k, v in r.items():
                if k in (
                    "predicted_ms",
                    "measured_median_ms",
                    "measured_p10_ms",
                    "measured_p90_ms",
                    "normalized",
                    "normalized_cpu",
                    "solve_seconds",
                    "max_rel_err",
                    "n_runs",
                    "run_wall_s",
                    "rounds",
                ):
                    r[k] = float(v) if v not in ("", None) else math.nan
            out.append(r)
    return out


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per model: HOPE:LP's measured gain over the best single device and over dmdar/heft/
    mosaic (``1 - lp / other``, positive = LP faster), and ``lp_same_plan_as`` (the row whose
    plan LP's is, when one is; both then report one measurement); and the mean over models."""
    models: dict[str, dict[str, float]] = {}
    lp_same: dict[str, str] = {}
    for r in rows:
        models.setdefault(r["model"], {})[r["algorithm"]] = _ms(r)
        if r["algorithm"] == "HOPE:LP":
            lp_same[r["model"]] = str(r.get("same_plan_as") or "")
    out: dict[str, Any] = {}
    for m, by in models.items():
        lp = by.get("HOPE:LP", math.nan)
        singles = [v for k, v in by.items() if k.endswith("-only") and not math.isnan(v)]
        d = {"best_single": min(singles) if singles else math.nan}
        for k, v in [
            ("best_single", d["best_single"]),
            ("StarPU-dmdar", by.get("StarPU-dmdar", math.nan)),
            ("HEFT", by.get("HEFT", math.nan)),
            ("MOSAIC", by.get("MOSAIC", math.nan)),
        ]:
            d[f"lp_gain_vs_{k}"] = (
                round(1 - lp / v, 4) if v > 0 and not math.isnan(lp) else math.nan
            )
        d["lp_same_plan_as"] = lp_same.get(
            m, ""
        )  # e.g. "GPU-only": LP chose that plan (gain 0 by construction)
        out[m] = d
    keys = {k for d in out.values() for k in d if k.startswith("lp_gain")}
    out["_mean"] = {
        k: round(sum(vals) / len(vals), 4)
        if (vals := [d[k] for d in out.values() if k in d and not math.isnan(d[k])])
        else math.nan
        for k in sorted(keys)
    }
    return out
