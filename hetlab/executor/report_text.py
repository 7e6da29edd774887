"""The run report (spec §5) as the lines ``hetlab run`` prints."""

from __future__ import annotations

from typing import Any

from hetlab.executor.check import check_line
from hetlab.executor.left_behind import left_behind_line


def format_report(doc: dict[str, Any]) -> str:
    lat = doc["latency_ms"]
    lines = [
        f"model      {doc.get('model')}  ({doc['model_path']})",
        (
            f"latency    median {lat['median']:.3f} ms  (p10 {lat['p10']:.3f}, p90 {lat['p90']:.3f}; "
            f"{doc['repeat']} runs)"
        ),
    ]
    lines += _prediction_lines(doc)
    cp = doc.get("critical_path")
    if cp:
        pr = (
            f" (profiled {cp['predicted_run_ms']:.3f})"
            if cp.get("predicted_run_ms") is not None
            else ""
        )
        lines.append(
            f"path       {cp['units']} units ({cp['cross_device']} after another device): run "
            f"{cp['run_ms']:.3f} ms{pr}, dispatch {cp['dispatch_ms']:.3f}, copies "
            f"{cp['copies_ms']:.3f}, tail {cp['tail_ms']:.3f}"
        )
    if (line := check_line(doc)) is not None:
        lines.append(f"check      {line}")
    lines.append(
        "devices    "
        + ", ".join(f"{k} {v} nodes{_at(doc, k)}" for k, v in doc["devices"].items())
        + f"; {doc['units']} units"
    )
    lines += _opencl_share_lines(doc)
    if doc.get("left_behind"):
        lines.append("elsewhere  " + left_behind_line(doc["left_behind"], doc.get("model")))
    for f in doc.get("fallbacks", []):
        lines.append(
            f"fallback   unit {f['unit']} ({f['nodes']} nodes from {f['first']}) ran on "
            f"{f['to']} instead of {f['device']}: {f['error']}"
        )
    return "\n".join(lines)


def _prediction_lines(doc: dict[str, Any]) -> list[str]:
    """The predicted latency against the measured median, its breakdown by term and, where
    given, the deprecated partial sums (with host I/O, with the host's dispatch)."""
    median, lines = doc["latency_ms"]["median"], []
    if doc.get("predicted_ms") is not None:
        pred = doc["predicted_ms"]
        ratio = f"  measured/predicted {median / pred:.2f}" if pred else ""
        lines.append(f"predicted  {pred:.3f} ms{ratio}")
    terms = (doc.get("prediction") or {}).get("terms") or {}
    if terms:  # the calibrated prediction's breakdown: what each term added
        lines.append("  by term    " + ", ".join(f"{k} {v:+.3f}" for k, v in terms.items()))
    if doc.get("predicted_io_ms") and doc["predicted_io_ms"] != doc.get("predicted_ms"):
        io = doc["predicted_io_ms"]
        lines.append(
            f"  with inputs/outputs to and from host memory {io:.3f} ms  "
            f"measured/predicted {median / io:.2f}"
        )
    if doc.get("predicted_host_ms"):
        hs = doc["predicted_host_ms"]
        lines.append(
            f"  with each unit's host dispatch one at a time {hs:.3f} ms  "
            f"measured/predicted {median / hs:.2f}"
        )
    return lines


def _opencl_share_lines(doc: dict[str, Any]) -> list[str]:
    """What share of the model ran on OpenCL, and the If-body nodes the host resolved."""
    share = doc.get("opencl_share")
    if share is None:
        return []
    ex, hr = doc.get("nodes_executed", {}), doc.get("host_resolved", {})
    bodies = " incl. If bodies" if sum(ex.values()) != sum(doc["devices"].values()) else ""
    vertices, executed = 100 * share["vertices"], 100 * share["executed"]
    lines = [
        (
            f"opencl     {vertices:.1f}% of vertices; {executed:.1f}% of the "
            f"{sum(ex.values())} nodes executed per run{bodies}"
        )
    ]
    if hr.get("shape_arithmetic") or hr.get("constant_folded"):
        lines.append(
            f"host       {hr['shape_arithmetic']} shape-arithmetic and {hr['constant_folded']} "
            f"constant-folded If-body nodes resolved once per input signature "
            f"({100 * share['with_host_resolved']:.1f}% on OpenCL counting them)"
        )
    return lines


def _at(doc: dict[str, Any], device: str) -> str:
    """`` at tf32`` where ``device`` ran at another precision than fp32, else nothing."""
    p = (doc.get("precision") or {}).get(device, "fp32")
    return "" if p == "fp32" else f" at {p}"
