"""What one op is and where each plan puts it: the data of the workbench's node panel
(``node_details``) and its HTML (``node_details_html``). Either source may be missing: a
profile explored without its model has no tensors, a model not yet profiled has no costs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape
from typing import Any

import numpy as np

from hetlab.errors import HetlabError
from hetlab.viz.common import fmt_ms

ATTR_CHARS = 60  # an attribute's value is cut to this many characters


def _attr(value: Any) -> str:
    """An attribute's value in one short line (a tensor attribute by its shape and dtype)."""
    if isinstance(value, np.ndarray):
        if value.size <= 8:
            text = np.array2string(value.ravel(), separator=", ")
        else:
            text = f"array {'x'.join(map(str, value.shape))} {value.dtype}"
    elif isinstance(value, bytes):
        text = value.decode(errors="replace")
    else:
        text = str(value)
    return text if len(text) <= ATTR_CHARS else text[: ATTR_CHARS - 1] + "…"


def _tensor(graph: Any, name: str, producer: Mapping[str, str]) -> dict[str, Any]:
    t = graph.tensors.get(name)
    shape = None if t is None or t.shape is None else list(t.shape)
    return {
        "name": name,
        "shape": shape,
        "dtype": t.dtype if t is not None else None,
        "bytes": t.nbytes if t is not None else 0,
        "weight": name in graph.consts,
        "producer": producer.get(name),
    }


def _from_graph(graph: Any, node_id: str) -> dict[str, Any]:
    n = graph.node(node_id)
    producer = graph.producer()
    ins = [_tensor(graph, t, producer) for t in n.inputs if t]
    outs = [_tensor(graph, t, producer) for t in n.outputs if t]
    return {
        "op_type": n.op_type,
        "domain": n.domain,
        "attrs": {k: _attr(v) for k, v in sorted(n.attrs.items())},
        "inputs": ins,
        "outputs": outs,
        "flops": int(n.flops),
        "bytes": {
            "read": sum(t["bytes"] for t in ins if not t["weight"]),
            "weights": sum(t["bytes"] for t in ins if t["weight"]),
            "written": sum(t["bytes"] for t in outs),
        },
        "preds": list(graph.preds(node_id)),
        "succs": list(graph.succs(node_id)),
    }


def _from_problem(problem: Any, node_id: str) -> dict[str, Any]:
    """Costs per device (fastest first marked ``best``; an estimate marked, with its basis)
    and, where the model is missing, what the profile knows of the node's edges."""
    pn = problem.nodes[problem.index[node_id]]
    basis = pn.extra.get("no_measure") or {}
    why = pn.extra.get("estimate_reason") or {}
    unsupported = pn.extra.get("unsupported") or {}
    costs = []
    for d in problem.devices:
        c = pn.cost.get(d)
        ok = c is not None and math.isfinite(c)
        costs.append(
            {
                "device": d,
                "ms": float(c) if ok else None,
                "estimated": bool(pn.extra.get("estimated")) and d in basis,
                "basis": basis.get(d),
                "why": why.get(d) if d in basis else unsupported.get(d),
            }
        )
    best = min((c["ms"] for c in costs if c["ms"] is not None), default=None)
    for c in costs:
        c["best"] = best is not None and c["ms"] == best
    ins = [e for e in problem.edges if e.dst == node_id]
    outs = [e for e in problem.edges if e.src == node_id]
    return {
        "op_type": pn.op_type,
        "costs": costs,
        "units": problem.units,
        "edge_bytes": {"in": sum(e.bytes for e in ins), "out": sum(e.bytes for e in outs)},
        "preds": [e.src for e in ins],
        "succs": [e.dst for e in outs],
    }


def _placements(plans: Mapping[str, Any], node_id: str) -> list[dict[str, Any]]:
    out = []
    for label, plan in plans.items():
        if plan is None:
            continue
        a = next((a for a in plan.assignments if a.node == node_id), None)
        row: dict[str, Any] = {"plan": label, "algo": getattr(plan, "algo", label)}
        if a is None:
            row.update(device=None, start=None, finish=None)
        else:
            row.update(device=a.device, start=float(a.start), finish=float(a.finish))
        out.append(row)
    return out


def node_details(
    graph: Any, problem: Any, plans: Mapping[str, Any] | None, node_id: str
) -> dict[str, Any]:
    """Everything known about op ``node_id``: ``op_type``, ``attrs``, ``inputs`` and
    ``outputs`` (name, shape, dtype, bytes, weight, producer), ``flops``, ``bytes`` (read,
    weights, written), ``preds``/``succs``; from ``problem``: ``costs`` (one per device: ms
    or None, ``estimated`` with its ``basis``, ``best``, ``why`` it has no measurement) and
    ``units``; ``placements``: for each of ``plans`` (label -> plan) the node's device,
    start and finish. Raises ``HetlabError`` when neither source knows the node."""
    node_id = str(node_id)
    in_graph = graph is not None and node_id in graph
    in_problem = problem is not None and node_id in problem.index
    if not (in_graph or in_problem):
        raise HetlabError(f"no op named {node_id!r} in this model or profile")
    out: dict[str, Any] = {"id": node_id, "attrs": {}, "inputs": [], "outputs": [], "costs": []}
    out["units"] = "ms"
    if in_problem:
        out.update(_from_problem(problem, node_id))
    if in_graph:
        out.update(_from_graph(graph, node_id))
    out["placements"] = _placements(plans or {}, node_id)
    return out


def _kb(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def _tensor_rows(d: dict[str, Any]) -> str:
    rows = []
    for kind in ("inputs", "outputs"):
        for t in d[kind]:
            shape = "?" if t["shape"] is None else "×".join(map(str, t["shape"])) or "scalar"
            what = "weight" if t["weight"] else kind[:-1]
            rows.append(
                f"<tr><td>{what}</td><td>{escape(t['name'])}</td><td>{shape}</td>"
                f"<td>{escape(str(t['dtype'] or '?'))}</td>"
                f"<td>{'?' if t['shape'] is None else _kb(t['bytes'])}</td></tr>"
            )
    if not rows:
        return ""
    head = "<tr><th></th><th>tensor</th><th>shape</th><th>dtype</th><th>size</th></tr>"
    return f"<table class='hetlab-node'>{head}{''.join(rows)}</table>"


def _cost_rows(d: dict[str, Any]) -> str:
    if not d["costs"]:
        return "<div><i>no profile: no costs yet</i></div>"
    rows = []
    for c in d["costs"]:
        ms = "cannot run" if c["ms"] is None else fmt_ms(c["ms"])
        note = ""
        if c["estimated"]:
            note = f"estimated ({escape(str(c['basis']))}): not measured"
        elif c["ms"] is None and c["why"]:
            note = escape(str(c["why"]))
        style = " style='font-weight:bold'" if c["best"] else ""
        mark = "*" if c["estimated"] else ""
        rows.append(
            f"<tr{style}><td>{escape(c['device'])}</td><td>{ms}{mark}</td><td>{note}</td></tr>"
        )
    head = "<tr><th>device</th><th>cost</th><th></th></tr>"
    return f"<table class='hetlab-node'>{head}{''.join(rows)}</table>"


def _placement_rows(d: dict[str, Any]) -> str:
    rows = []
    for p in d["placements"]:
        if p["device"] is None:
            rows.append(f"<tr><td>{escape(p['plan'])}</td><td colspan=3>not placed</td></tr>")
            continue
        rows.append(
            f"<tr><td>{escape(p['plan'])}</td><td>{escape(p['device'])}</td>"
            f"<td>{p['start']:.3f}</td><td>{p['finish']:.3f}</td></tr>"
        )
    if not rows:
        return "<div><i>no plan yet</i></div>"
    head = "<tr><th>plan</th><th>device</th><th>start (ms)</th><th>finish (ms)</th></tr>"
    return f"<table class='hetlab-node'>{head}{''.join(rows)}</table>"


def node_details_html(d: dict[str, Any]) -> str:
    """``node_details`` as HTML: a heading, the attributes, the tensors, work, the costs
    (the fastest in bold, an estimate starred) and the placements."""
    head = f"<b>{escape(d['id'])}</b> · {escape(d.get('op_type') or '?')}"
    if d.get("domain"):
        head += f" ({escape(d['domain'])})"
    parts = [f"<div style='font-size:13px'>{head}</div>"]
    if d["attrs"]:
        attrs = "; ".join(f"{escape(k)}={escape(v)}" for k, v in d["attrs"].items())
        parts.append(f"<div><i>attributes</i>: {attrs}</div>")
    work = []
    if "flops" in d:
        work.append(f"{d['flops'] / 1e6:.4g} MFLOP")
        b = d["bytes"]
        work.append(
            f"reads {_kb(b['read'])} + weights {_kb(b['weights'])}, writes {_kb(b['written'])}"
        )
    elif "edge_bytes" in d:
        work.append(f"edges: {_kb(d['edge_bytes']['in'])} in, {_kb(d['edge_bytes']['out'])} out")
    parts.append(f"<div>{' · '.join(work)}</div>")
    near = [
        f"{label}: {_names(d.get(key, []))}"
        for key, label in (("preds", "reads from"), ("succs", "read by"))
        if d.get(key)
    ]
    if near:
        parts.append(f"<div>{' · '.join(near)}</div>")
    parts += [_tensor_rows(d), _cost_rows(d), _placement_rows(d)]
    style = (
        "<style>.hetlab-node{border-collapse:collapse;font-size:12px;margin:3px 0}"
        ".hetlab-node td,.hetlab-node th{padding:1px 8px;text-align:left}"
        ".hetlab-node th{border-bottom:1px solid #ccc}</style>"
    )
    return f"{style}<div style='font-size:12px'>{''.join(p for p in parts if p)}</div>"


def _names(ids: list[str], most: int = 4) -> str:
    """Up to ``most`` op names, and how many more."""
    shown = ", ".join(escape(v) for v in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")
