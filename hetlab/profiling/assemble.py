"""From measurements to the Problem: each node's cost per device (isolated median less the
per-call overhead, an estimate where there is nothing to measure alone, times its op type's
in-context factor), the edges' transfers, the groups, and the profile's ``extra``."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem
from hetlab.cost.shared import KEY as SHARED_KEY
from hetlab.cost.shared import derive
from hetlab.devices.precision_choice import precisions_of
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.profiling import calibrator as cal
from hetlab.profiling.in_context import device_context
from hetlab.profiling.unmeasured import Work, fill_unmeasured

if TYPE_CHECKING:
    from hetlab.profiling.job import Job
    from hetlab.profiling.stages import Measured

FLOOR_MS = 1e-4  # the least cost a supported op gets after the overhead correction


@dataclass
class NodeCosts:
    iso: dict[str, dict[str, float | None]]  # node -> device -> isolated cost
    ctx: dict[str, dict[str, float]]  # node -> device -> in-context factor
    per_unit: dict[str, float]  # device -> what a unit pays once
    no_measure: dict[str, dict[str, str]]  # node -> device -> basis of its estimate
    failed: dict[str, dict[str, str]]  # node -> device -> why its measurement failed


def cost_of(meas: Measured, st: dict[str, Any] | None, dev: str, stat: str = "median"):
    """A statistic less the device's per-call overhead, at least ``FLOOR_MS``; None if absent."""
    if st is None or stat not in st:
        return None
    return round(max(st[stat] - meas.overhead[dev], FLOOR_MS), 6)


def node_costs(job: Job, meas: Measured) -> NodeCosts:
    """Isolated costs, estimates for the unmeasured (``unmeasured.py``), and per device the
    in-context factors and per-unit cost (``in_context.device_context``)."""
    devs, graph, wins, everything = job.devs, job.graph, job.wins, job.everything()
    iso = {
        v: {d.name: cost_of(meas, meas.ops.get((d.name, job.sig[v])), d.name) for d in devs}
        for v in everything
    }
    types = {v: graph.node(v).op_type for v in everything}
    for d in devs:
        _measured_something(job, meas, d.name, [v for v in everything if job.supports(d.name, v)])
    no_measure = fill_unmeasured(iso, node_work(graph), lambda v, dn: job.supports(dn, v), FLOOR_MS)
    failed = {
        v: {
            dn: f"its one-node unit failed: {meas.errors.get((dn, job.sig[v]), 'no time')}"
            for dn in by
        }
        for v, by in no_measure.items()
    }
    ctx: dict[str, dict[str, float]] = {}
    per_unit: dict[str, float] = {}
    for d in devs:
        n = d.name
        span = set(job.spans[n]) if n in job.spans else None
        in_span_win = {v for w in wins if span is None or set(w) <= span for v in w}
        fac, per_unit[n], _ = device_context(
            [cost_of(meas, meas.windows.get((n, job.wsig[k])), n) for k in range(len(wins))],
            [iso[v][n] for v in (job.spans.get(n) or everything) if v not in in_span_win],
            cost_of(meas, meas.whole.get((n, job.whole_key.get(n, "model"))), n),
            [[(v, types[v], iso[v][n]) for v in w] for w in wins],
            [(v, types[v], iso[v][n]) for v in everything],
            span,
        )
        for v, x in fac.items():
            ctx.setdefault(v, {})[n] = x
    return NodeCosts(iso, ctx, per_unit, no_measure, failed)


def _measured_something(job: Job, meas: Measured, dev: str, supported: list[str]) -> None:
    """Refuse a device that measured none of the nodes it supports: there is no throughput
    to estimate their costs from, and a made-up cost would pass for a measured one."""
    if not supported or any(meas.ops.get((dev, job.sig[v])) for v in supported):
        return
    v = supported[0]
    why = meas.errors.get((dev, job.sig[v]), "no time")
    raise HetlabError(
        f"{dev} measured none of the {len(supported)} nodes it supports (the first, {v!r} "
        f"({job.graph.node(v).op_type}), failed: {why}); leave {dev} out of --devices"
    )


def node_work(graph: OpGraph) -> dict[str, Work]:
    """Each node's FLOPs and the bytes it reads and writes (weights included)."""
    out = {}
    for n in graph.nodes:
        io = dict.fromkeys(t for t in n.inputs + n.outputs if t in graph.tensors)
        out[n.id] = Work(n.op_type, float(n.flops), float(sum(graph.tensors[t].nbytes for t in io)))
    return out


def build_problem(job: Job, meas: Measured, costs: NodeCosts, wall_s: float) -> Problem:
    """The Problem of spec §2, with what was measured and how in ``extra``."""
    graph, devs = job.graph, job.devs
    nodes = []
    for n in graph.nodes:
        s, iso, ctx = job.sig[n.id], costs.iso[n.id], costs.ctx.get(n.id, {})
        c = {
            d.name: None
            if iso[d.name] is None
            else round(max(iso[d.name] * ctx.get(d.name, 1.0), FLOOR_MS), 6)
            for d in devs
        }
        stats = {d.name: meas.ops[d.name, s] for d in devs if meas.ops.get((d.name, s))}
        why = {
            d.name: d.why_not(n, graph) or "not supported"
            for d in devs
            if not job.support[d.name, s]
        }
        extra: dict[str, Any] = {"signature": s, "stats": stats}
        if ctx:
            extra["context"] = ctx
        if why:
            extra["unsupported"] = why
        if n.origin and n.origin != [n.id]:  # the nodes folding replaced (spec §1)
            extra["origin"] = list(n.origin)
        if n.id in costs.no_measure:
            extra["estimated"] = True
            extra["no_measure"] = costs.no_measure[n.id]
            extra["estimate_reason"] = costs.failed[n.id]
        nodes.append(PNode(id=n.id, op_type=n.op_type, cost=c, extra=extra))
    edges = []
    for e in graph.edges:
        sk = cal.shape_key([graph.tensors[t] for t in e.tensors if t in graph.tensors])
        ec = {k: round(ms, 6) for (k, s2), ms in meas.shape_ms.items() if s2 == sk}
        edges.append(
            PEdge(src=e.src, dst=e.dst, bytes=float(e.bytes), comm=ec, extra={"shapes": sk})
        )
    grp = [
        Group(list(c), {d.name: cost_of(meas, meas.groups.get((d.name, s)), d.name) for d in devs})
        for s, c in zip(job.gsig, job.chains, strict=True)
    ]
    return Problem(
        name=job.opts.name or graph.name,
        devices=[d.name for d in devs],
        nodes=nodes,
        edges=edges,
        comm={k: Link(round(f["latency"], 6), f["bandwidth"]) for k, f in meas.links.items()},
        groups=grp,
        extra=_extra(job, meas, costs, wall_s),
    )


def _extra(job: Job, meas: Measured, costs: NodeCosts, wall_s: float) -> dict[str, Any]:
    """The profile's sections beyond spec §2: the model, when and where it was measured,
    how (``profile``), the links' fits and the context windows' costs."""
    from hetlab.profiling.platform_info import describe

    graph = job.graph
    extra: dict[str, Any] = {
        "model": {
            "name": graph.name,
            "path": graph.model_path,
            "source_path": graph.source_path or graph.model_path,
            "fold": graph.fold_summary(),
            "sha256": job.model_sha,
            "input_shapes": {k: list(v) for k, v in graph.input_shapes.items()},
        },
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "platform": (platform := describe(job.devs)),
        SHARED_KEY: derive(platform, {}),
        "profile": _profile_section(job, meas, costs, wall_s),
        "calibration": {
            k: {x: f[x] for x in ("latency", "bandwidth", "r2", "max_rel_err", "points")}
            for k, f in meas.links.items()
        },
    }
    if precisions_of(job.devs):  # spec §2: absent, every device ran at fp32
        extra["precision"] = precisions_of(job.devs)
    if job.opts.comm:
        extra["calibration"]["distinct_shapes"] = len(job.shapes)
    if job.wins:
        extra["context_windows"] = [
            {
                "nodes": w,
                "cost": {
                    d.name: cost_of(meas, meas.windows.get((d.name, job.wsig[k])), d.name)
                    for d in job.devs
                },
            }
            for k, w in enumerate(job.wins)
        ]
    return extra


def _profile_section(job: Job, meas: Measured, costs: NodeCosts, wall_s: float) -> dict[str, Any]:
    """How the profile was measured: its budget and options, what it counted, the per-call
    overhead, and the whole model's and each span's run times."""
    opts, wins = job.opts, job.wins
    keys = ("median", "p10", "p90", "n")
    return {
        **job.budget.key(),
        "rounds": opts.rounds,
        "signatures": len(job.reps),
        "group_signatures": len(job.greps),
        "groups": len(job.chains),
        "measured": job.done[1],
        "total_tasks": job.total,
        "overhead_ms": meas.overhead,
        "values": job.values.note or "cached",
        "wall_s": wall_s,
        "context_window": opts.context if wins else 0,
        "windows": len(wins),
        "no_measure": len(costs.no_measure),
        "estimated_costs": sum(len(by) for by in costs.no_measure.values()),
        "costs": sum(c is not None for by in costs.iso.values() for c in by.values()),
        "unit_overhead_ms": costs.per_unit,
        "whole_model_ms": {
            k[0]: {x: v[x] for x in keys} for k, v in meas.whole.items() if v and k[1] == "model"
        },
        "span_ms": {
            k[0]: {"nodes": len(job.spans[k[0]]), **{x: v[x] for x in keys}}
            for k, v in meas.whole.items()
            if v and k[1] != "model"
        },
        "cost": "median ms of isolated runs minus the device's per-call overhead"
        + (", times its op type's in-context factor" if wins else ""),
    }
