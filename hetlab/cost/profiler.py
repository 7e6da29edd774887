"""The profiler: a model's measured per-op, grouped-op and transfer costs as a Problem (spec §2).

HOPE §4.1 (benchmarking engine), PartitionTuner §3.1 (individual and grouped operators) and
OverSeer's Calibrator, on hetlab's devices. For each vertex and each device that supports it,
the vertex runs alone on real inputs of its real shapes (``values.py``): warm-up, then up to
``repeat`` timed runs (fewer for slow ops, see ``measure.Budget``), MAD outlier rejection; the
cost is the median minus the device's per-call overhead (``measure.probe_overhead``), because
a whole-model run pays that dispatch once and not once per node. Ops of one signature
(``signature.py``) are measured once. Unsupported -> ``null``. Everything measured goes to the
cache (``cache.py``) as it is measured, so Ctrl-C keeps it and the next call resumes.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from hetlab.cost import calibrator as cal
from hetlab.cost.cache import ProfileCache, digest, file_sha256
from hetlab.cost.context import device_context, runnable_span, windows
from hetlab.cost.device_pass import measure_device
from hetlab.cost.groups import DEFAULT_PATTERNS, find_groups
from hetlab.cost.measure import Budget, probe_overhead
from hetlab.cost.problem import Group, Link, PEdge, PNode, Problem
from hetlab.cost.signature import group_signature, node_signature
from hetlab.cost.values import Values
from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph

Progress = Callable[[int, int, str], Any]
FLOOR_MS = 1e-4  # the least cost a supported op gets after the overhead correction


def profile(
    graph: OpGraph | str,
    devices: Sequence[Device | str],
    repeat: int = 20,
    warmup: int = 2,
    groups: bool = False,
    patterns: Iterable[Sequence[str]] = DEFAULT_PATTERNS,
    progress: Progress | None = None,
    cache: bool = True,
    comm: bool = True,
    handoff: bool = True,
    seconds: float = 0.25,
    rounds: int = 2,
    context: int = 8,
    name: str | None = None,
    inputs: dict[str, Any] | None = None,
    concurrent: bool = True,
) -> Problem:
    """Measure ``graph`` on ``devices`` (Device objects or names) and return the Problem.

    ``repeat``/``warmup``/``seconds``: see ``measure.Budget``; ``rounds``: visits per unit
    (its samples are spread over them, see ``device_pass``); ``context``: window size of the
    in-context correction (``context.py``; 0 or 1: isolated costs only); ``groups``: also measure chains
    matching ``patterns`` as fused units; ``handoff``: add what a unit boundary costs in the
    executor to each link (``executor.boundary``), and with ``concurrent`` what a unit costs more
    beside another device's run (``executor.concurrency``); ``comm``: calibrate every ordered device pair and
    measure every distinct edge shape; ``progress(done, total, message)`` is called after each
    measurement (raise KeyboardInterrupt from it to stop: what is done stays cached). ``inputs``: arrays for some model inputs instead of seeded random
    ones (``--input``: a data-dependent model such as silero VAD needs ``sr=16000``)."""
    t_start = time.perf_counter()
    if isinstance(graph, str):
        from hetlab.graph.onnx_io import load

        graph = load(graph)
    devs = _resolve(devices)
    if repeat < 1 or warmup < 0 or rounds < 1:
        raise HetlabError(
            f"repeat and rounds must be >= 1 and warmup >= 0 (got {repeat}, {rounds}, {warmup})"
        )
    budget = Budget(repeat=repeat, warmup=warmup, min_repeat=min(5, repeat), seconds=seconds)
    from hetlab.graph.onnx_io import weights

    consts = weights(graph) if graph.model_path else {}
    sig = {n.id: node_signature(graph, n.id, consts) for n in graph.nodes}
    reps: dict[str, str] = {}
    for n in graph.nodes:
        reps.setdefault(sig[n.id], n.id)
    chains = find_groups(graph, patterns) if groups else []
    gsig = [group_signature(graph, c, consts) for c in chains]
    greps: dict[str, list[str]] = {}
    for s, c in zip(gsig, chains, strict=False):
        greps.setdefault(s, c)
    wins = windows(graph, context)
    topo_pos = {v: i for i, v in enumerate(graph.topo_order())}
    wsig = [group_signature(graph, w, consts) for w in wins]
    from hetlab.graph.onnx_io import unit_io

    needed = [t for v in reps.values() for t in unit_io(graph, [v])[0]]
    needed += [t for c in greps.values() for t in unit_io(graph, c)[0]]
    needed += [t for w in wins for t in unit_io(graph, w)[0]]
    everything = [n.id for n in graph.nodes]
    if wins:  # the whole model as one unit, for the per-unit overhead (context.unit_overhead)
        needed += list(graph.inputs)
    model_sha = file_sha256(graph.model_path) if graph.model_path else graph.name
    given = {k: digest(np.asarray(v).tolist()) for k, v in sorted((inputs or {}).items())}
    pc = ProfileCache(
        model_sha,
        graph.input_shapes,
        {**budget.key(), "rounds": rounds, **({"inputs": given} if given else {})},
        enabled=cache,
    )

    support = {(d.name, s): _supports(d, graph, v) for d in devs for s, v in reps.items()}
    gsupport = {
        (d.name, s): all(support[d.name, sig[v]] for v in c) for d in devs for s, c in greps.items()
    }
    wsupport = {
        (d.name, k): all(support[d.name, sig[v]] for v in w)
        for d in devs
        for k, w in enumerate(wins)
    }
    whole_ok = {
        d.name: bool(wins)
        and all(wsupport[d.name, k] for k in range(len(wins)))
        and all(support[d.name, sig[v]] for v in everything)
        for d in devs
    }
    # where a device cannot run the whole model, the longest span it can (context.runnable_span)
    order = graph.topo_order()
    spans = {
        d.name: sp
        for d in devs
        if wins
        and not whole_ok[d.name]
        and (sp := runnable_span(order, wins, lambda v, d=d: support[d.name, sig[v]]))
    }
    whole_key = {
        d.name: "model"
        if whole_ok[d.name]
        else f"span|{group_signature(graph, spans[d.name], consts)}"
        for d in devs
        if whole_ok[d.name] or d.name in spans
    }
    needed += [t for sp in spans.values() for t in unit_io(graph, sp)[0]]
    values = Values(graph, needed, given=inputs)
    pairs = [(a, b) for a in devs for b in devs if a is not b] if comm else []
    shapes = _edge_shapes(graph) if comm else {}
    total = (
        len(devs)
        + rounds
        * (sum(support.values()) + sum(gsupport.values()) + sum(wsupport.values()) + len(whole_key))
        + len(pairs) * (len(cal.DEFAULT_SIZES) + len(shapes))
    )
    done = [0, 0]  # progress count, fresh measurements

    def tick(msg: str, fresh: bool = False) -> None:
        done[0] += 1
        done[1] += int(fresh)
        if progress is not None:
            progress(done[0], total, msg)

    op_stats: dict[tuple[str, str], dict[str, Any] | None] = {}
    g_stats: dict[tuple[str, str], dict[str, Any] | None] = {}
    w_stats: dict[tuple[str, str], dict[str, Any] | None] = {}
    whole_stats: dict[tuple[str, str], dict[str, Any] | None] = {}
    overhead: dict[str, float] = {}
    links: dict[str, dict[str, Any]] = {}
    shape_ms: dict[tuple[str, str], float] = {}
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        for d in devs:
            store = pc.device(d.fingerprint())
            d.bind_thread()
            ov = store.get("overhead", "probe-slope")
            if ov is None:
                ov = probe_overhead(d, budget)
                store.put("overhead", "probe-slope", ov)
            overhead[d.name] = float(ov)
            tick(f"{d.name}: per-call overhead {ov:.4f} ms")
            items = [("ops", s, [v]) for s, v in reps.items() if support[d.name, s]]
            items += [("groups", s, c) for s, c in greps.items() if gsupport[d.name, s]]
            items += [("windows", wsig[k], w) for k, w in enumerate(wins) if wsupport[d.name, k]]
            # in topological order, each window right after its members: a window and the
            # ops it rescales are measured under the same load
            items.sort(
                key=lambda it: (
                    topo_pos[it[2][-1]] if it[0] == "windows" else topo_pos[it[2][0]],
                    it[0] == "windows",
                )
            )
            if d.name in whole_key:
                items.append(("whole", whole_key[d.name], spans.get(d.name, everything)))
            res = measure_device(d, store, items, graph, values, budget, rounds, tick)
            for (sec, s), st in res.items():
                {"ops": op_stats, "groups": g_stats, "windows": w_stats, "whole": whole_stats}[sec][
                    d.name, s
                ] = st
            store.flush()
        for a, b in pairs:
            store = pc.link(a.fingerprint(), b.fingerprint(), cal.settings())
            key = f"{a.name}->{b.name}"
            fit = store.get("fit", "link")
            if fit is None:
                fit = cal.calibrate_link(a, b, tick=lambda m: tick(m, True))
                store.put("fit", "link", fit)
            else:
                for _ in cal.DEFAULT_SIZES:
                    tick(f"link {key} (cached)")
            links[key] = fit
            for sk, tens in shapes.items():
                ms = store.get("shapes", sk)
                if ms is None:
                    try:
                        ms = cal.measure_shape(a, b, tens)
                    except (KeyboardInterrupt, HetlabError):
                        raise
                    except Exception as e:  # noqa: BLE001 - the link model covers this shape
                        ms = {
                            "error": str(e).strip().splitlines()[0][:200]
                            if str(e).strip()
                            else type(e).__name__
                        }
                    store.put("shapes", sk, ms)
                    tick(f"{key} {sk}", True)
                else:
                    tick(f"{key} {sk} (cached)")
                if isinstance(ms, (int, float)):
                    shape_ms[key, sk] = float(ms)
            store.flush()
    finally:
        pc.flush()
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
        for d in devs:  # sessions profiling ran were slower afterwards (ort_cpu.forget): drop them
            d.forget()

    def cost(st: dict[str, Any] | None, dev: str, stat: str = "median") -> float | None:
        if st is None or stat not in st:
            return None
        return round(max(st[stat] - overhead[dev], FLOOR_MS), 6)

    iso = {
        n.id: {d.name: cost(op_stats.get((d.name, sig[n.id])), d.name) for d in devs}
        for n in graph.nodes
    }
    ctx: dict[str, dict[str, float]] = {}
    per_unit: dict[str, float] = {}
    for d in devs:
        types = {v: graph.node(v).op_type for v in everything}
        span = set(spans[d.name]) if d.name in spans else None
        in_span_win = {v for w in wins if span is None or set(w) <= span for v in w}
        fac, per_unit[d.name], _ = device_context(
            [cost(w_stats.get((d.name, wsig[k])), d.name) for k in range(len(wins))],
            [iso[v][d.name] for v in (spans.get(d.name) or everything) if v not in in_span_win],
            cost(whole_stats.get((d.name, whole_key.get(d.name, "model"))), d.name),
            [[(v, types[v], iso[v][d.name]) for v in w] for w in wins],
            [(v, types[v], iso[v][d.name]) for v in everything],
            span,
        )
        for v, x in fac.items():
            ctx.setdefault(v, {})[d.name] = x
    nodes = []
    for n in graph.nodes:
        s = sig[n.id]
        c = {
            d.name: None
            if iso[n.id][d.name] is None
            else round(max(iso[n.id][d.name] * ctx.get(n.id, {}).get(d.name, 1.0), FLOOR_MS), 6)
            for d in devs
        }
        stats = {d.name: op_stats[d.name, s] for d in devs if op_stats.get((d.name, s)) is not None}
        why = {
            d.name: d.why_not(n, graph) or "not supported" for d in devs if not support[d.name, s]
        }
        extra: dict[str, Any] = {"signature": s, "stats": stats}
        if n.id in ctx:
            extra["context"] = ctx[n.id]
        if why:
            extra["unsupported"] = why
        nodes.append(PNode(id=n.id, op_type=n.op_type, cost=c, extra=extra))
    edges = []
    for e in graph.edges:
        sk = cal.shape_key([graph.tensors[t] for t in e.tensors if t in graph.tensors])
        ec = {k: round(ms, 6) for (k, s2), ms in shape_ms.items() if s2 == sk}
        edges.append(
            PEdge(src=e.src, dst=e.dst, bytes=float(e.bytes), comm=ec, extra={"shapes": sk})
        )
    comm_links = {k: Link(round(f["latency"], 6), f["bandwidth"]) for k, f in links.items()}
    grp = [
        Group(list(c), {d.name: cost(g_stats.get((d.name, s)), d.name) for d in devs})
        for s, c in zip(gsig, chains, strict=False)
    ]
    extra = {
        "model": {
            "name": graph.name,
            "path": graph.model_path,
            "sha256": model_sha,
            "input_shapes": {k: list(v) for k, v in graph.input_shapes.items()},
        },
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "platform": _platform(devs),
        "profile": {
            **budget.key(),
            "rounds": rounds,
            "signatures": len(reps),
            "group_signatures": len(greps),
            "groups": len(chains),
            "measured": done[1],
            "total_tasks": total,
            "overhead_ms": overhead,
            "values": values.note or "cached",
            "wall_s": round(time.perf_counter() - t_start, 3),
            "context_window": context if wins else 0,
            "windows": len(wins),
            "unit_overhead_ms": per_unit,
            "whole_model_ms": {
                k[0]: {x: v[x] for x in ("median", "p10", "p90", "n")}
                for k, v in whole_stats.items()
                if v and k[1] == "model"
            },
            "span_ms": {
                k[0]: {
                    "nodes": len(spans[k[0]]),
                    **{x: v[x] for x in ("median", "p10", "p90", "n")},
                }
                for k, v in whole_stats.items()
                if v and k[1] != "model"
            },
            "cost": "median ms of isolated runs minus the device's per-call overhead"
            + (", times its op type's in-context factor" if wins else ""),
        },
        "calibration": {
            k: {x: f[x] for x in ("latency", "bandwidth", "r2", "max_rel_err", "points")}
            for k, f in links.items()
        },
    }
    if comm:
        extra["calibration"]["distinct_shapes"] = len(shapes)
    if wins:
        extra["context_windows"] = [
            {
                "nodes": w,
                "cost": {d.name: cost(w_stats.get((d.name, wsig[k])), d.name) for d in devs},
            }
            for k, w in enumerate(wins)
        ]
    p = Problem(
        name=name or graph.name,
        devices=[d.name for d in devs],
        nodes=nodes,
        edges=edges,
        comm=comm_links,
        groups=grp,
        extra=extra,
    )
    if comm and len(devs) > 1 and handoff:
        # what a unit boundary really costs goes on the links (lazy: executor is downstream)
        from hetlab.calibrate.boundary import calibrate_boundaries

        if progress is not None:
            progress(done[0], total, "calibrating unit boundaries on the executor")
        fps = {d.name: d.fingerprint() for d in devs}

        def memo_put(a: str, b: str, v: Any) -> None:
            store = pc.device(fps[a])
            store.put("boundary", f"{fps[b]}|{context}", v)
            store.flush()

        calibrate_boundaries(
            p,
            graph,
            devs,
            wins,
            per_unit,
            inputs=inputs,
            memo=(lambda a, b: pc.device(fps[a]).get("boundary", f"{fps[b]}|{context}"), memo_put),
        )
        if concurrent:
            from hetlab.calibrate.concurrency import calibrate_concurrency

            if progress is not None:
                progress(done[0], total, "calibrating concurrent units on the executor")
            together = "|".join(fps[d.name] for d in devs)
            store = pc.device(fps[devs[0].name])

            def conc_put(key: str, ms: Any) -> None:
                store.put("concurrent", f"{together}|{key}", ms)
                store.flush()

            calibrate_concurrency(
                p,
                graph,
                devs,
                inputs=inputs,
                memo=(lambda key: store.get("concurrent", f"{together}|{key}"), conc_put),
            )
    p.validate(f"profile of {graph.name}")
    return p


def _supports(d: Device, graph: OpGraph, v: str) -> bool:
    try:
        return bool(d.supports(graph.node(v), graph))
    except Exception:  # noqa: BLE001
        return False


def _edge_shapes(graph: OpGraph) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for e in graph.edges:
        tens = [graph.tensors[t] for t in e.tensors if t in graph.tensors]
        out.setdefault(cal.shape_key(tens), tens)
    return out


def _resolve(devices: Sequence[Device | str]) -> list[Device]:
    if not devices:
        raise HetlabError(
            "no devices to profile on; name some with --devices (see 'hetlab devices')"
        )
    out: list[Device] = []
    for d in devices:
        if isinstance(d, str):
            try:
                from hetlab.devices.platform import get
            except ImportError:
                raise HetlabError(
                    "this build has no device platform (hetlab.devices.platform)"
                ) from None
            d = get(d)
        out.append(d)
    names = [d.name for d in out]
    if len(set(names)) != len(names):
        raise HetlabError(f"a device is named twice in {names}")
    return out


def _platform(devs: list[Device]) -> dict[str, Any]:
    from hetlab.cost.platform_info import describe

    return describe(devs)
