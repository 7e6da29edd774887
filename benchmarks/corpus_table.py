"""The corpus table's cells (``benchmarks.corpus``): what each device supports and why
OpenCL refuses the rest, what a ``--device`` run does with a model, and the markdown table
of docs/corpus.md."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import hetlab

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


def device_run(graph: Any, devices: list[Any], feed: dict[str, Any]) -> dict[str, Any]:
    """What ``hetlab run --device D --check`` does with the model, D the first device that
    is an accelerator (or the first device): the nodes per device (those D refuses stay on the
    first CPU), its ``max_rel_err`` and onnxruntime's own ``reference_spread`` on the same
    inputs (optimisations off against on), or the error that stopped it."""
    from hetlab.devices import is_accelerator

    dev = next((d for d in devices if is_accelerator(d)), devices[0])
    out: dict[str, Any] = {"device_run": dev.name}
    try:
        rep = hetlab.run(graph, dev.name, devices, check=True, inputs=feed, warmup=0)
    except Exception as e:  # noqa: BLE001 - the failure is the finding
        return {**out, "device_run_nodes": f"failed: {type(e).__name__}: {str(e)[:160]}"}
    per = sorted(rep.devices.items())
    spread = rep.extra.get("reference_spread")
    return {
        **out,
        "device_run_nodes": " ".join(f"{d}={k}" for d, k in per),
        "device_run_err": _sci(rep.max_rel_err),
        "reference_spread": _sci(spread),
    }


def _sci(x: float | None) -> str:
    return "" if x is None else f"{x:.1e}"


def markdown(rows: list[dict[str, Any]]) -> str:
    """The table of docs/corpus.md: one line per model; the ``--device`` run's nodes per
    device (those it refuses stay on the CPU) and its error beside onnxruntime's own spread;
    errors and medians per algorithm (a name that shares another's plan says ``= other``),
    the recommended over the best single."""
    out = [
        "| model | package | MB | nodes before/after folding | supported "
        + "| not on OpenCL (why) | no-measure | `--device` run: nodes per device "
        + "| its max_rel_err / reference_spread "
        + "| max_rel_err (median) per plan | recommended / best single |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in dict.fromkeys(r["model"] for r in rows):
        rs = [r for r in rows if r["model"] == name]
        r = rs[0]
        errs = ", ".join(plan_cell(x) for x in rs)
        ratio = r["rec_vs_best_single"]
        vs = f"{'-' if ratio is None else f'{ratio:.2f}x'} ({r['best_single'] or '-'})"
        spread = f"{r.get('device_run_err') or '-'} / {r.get('reference_spread') or '-'}"
        out.append(
            f"| {name} | {r['package']} | {r['size_mb']} "
            f"| {r['nodes_before_fold']}/{r['nodes']} | {r['supported']} "
            f"| {r['opencl_unsupported'] or '-'} | {r['no_measure']} "
            f"| {r.get('device_run', '')}: {r.get('device_run_nodes', '')} | {spread} "
            f"| {errs} | {vs} |"
        )
    return "\n".join(out) + "\n"


def plan_cell(r: dict[str, Any]) -> str:
    """``algo [= same_as] max_rel_err (median ms)``, or the plan's error."""
    name = r["algo"] + (f" = {r['same_as']}" if r["same_as"] else "")
    if r["median_ms"] is None:
        return f"{name} ({r['status']})"
    return f"{name} {r['max_rel_err']} ({r['median_ms']:.3g} ms)"
