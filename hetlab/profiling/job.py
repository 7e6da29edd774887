"""What one profile measures, decided before anything runs (``plan_job``): the signatures
measured once, the fused groups, the context windows and spans, which device supports which
signature, the values to record, the link shapes and the cache. The measuring stages
(``stages``) and the assembly (``assemble``) read it; ``profiler.profile`` runs them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.cost.cache import ProfileCache, digest, file_sha256
from hetlab.devices.base import Device
from hetlab.devices.memory import check_fits
from hetlab.graph.ir import OpGraph
from hetlab.profiling import calibrator as cal
from hetlab.profiling.groups import find_groups
from hetlab.profiling.in_context import runnable_span, windows
from hetlab.profiling.measure import Budget
from hetlab.profiling.options import ProfileOptions
from hetlab.profiling.signature import group_signature, node_signature
from hetlab.profiling.tensor_values import Values


@dataclass
class Job:
    """What one profile measures, decided before anything runs."""

    graph: OpGraph
    devs: list[Device]
    opts: ProfileOptions
    budget: Budget
    consts: dict[str, Any]
    sig: dict[str, str]  # node -> signature
    reps: dict[str, str]  # signature -> the node measured for it
    chains: list[list[str]]  # fused groups
    gsig: list[str]
    greps: dict[str, list[str]]
    wins: list[list[str]]  # context windows
    wsig: list[str]
    support: dict[tuple[str, str], bool]  # (device, signature)
    spans: dict[str, list[str]] = field(default_factory=dict)
    whole_key: dict[str, str] = field(default_factory=dict)
    values: Values | None = None
    pairs: list[tuple[Device, Device]] = field(default_factory=list)
    shapes: dict[str, list[Any]] = field(default_factory=dict)
    model_sha: str = ""
    cache: Any = None
    total: int = 0
    done: list[int] = field(default_factory=lambda: [0, 0])  # progress count, fresh ones

    def supports(self, dev: str, v: str) -> bool:
        return self.support[dev, self.sig[v]]

    def everything(self) -> list[str]:
        return [n.id for n in self.graph.nodes]

    def tick(self, msg: str, fresh: bool = False) -> None:
        self.done[0] += 1
        self.done[1] += int(fresh)
        if self.opts.progress is not None:
            self.opts.progress(self.done[0], self.total, msg)


def plan_job(graph: OpGraph, devs: list[Device], opts: ProfileOptions) -> Job:
    """Signatures, groups, windows, support, spans, the values to record and the cache."""
    from hetlab.graph.onnx_io import weights

    consts = weights(graph) if graph.model_path else {}
    sig = {n.id: node_signature(graph, n.id, consts) for n in graph.nodes}
    reps: dict[str, str] = {}
    for n in graph.nodes:
        reps.setdefault(sig[n.id], n.id)
    chains = find_groups(graph, opts.patterns) if opts.groups else []
    gsig = [group_signature(graph, c, consts) for c in chains]
    greps: dict[str, list[str]] = {}
    for s, c in zip(gsig, chains, strict=True):
        greps.setdefault(s, c)
    wins = windows(graph, opts.context)
    budget = _budget(opts)
    job = Job(
        graph=graph,
        devs=devs,
        opts=opts,
        budget=budget,
        consts=consts,
        sig=sig,
        reps=reps,
        chains=chains,
        gsig=gsig,
        greps=greps,
        wins=wins,
        wsig=[group_signature(graph, w, consts) for w in wins],
        support={(d.name, s): _supports(d, graph, v) for d in devs for s, v in reps.items()},
    )
    # every tensor a device would hold, against its memory, before any value is made
    check_fits(graph, [(n.id, d) for d in devs for n in graph.nodes if job.supports(d.name, n.id)])
    _plan_spans(job)
    job.values = Values(graph, _needed(job), given=opts.inputs)
    job.pairs = [(a, b) for a in devs for b in devs if a is not b] if opts.comm else []
    job.shapes = _edge_shapes(graph) if opts.comm else {}
    job.model_sha = _model_sha(graph)
    job.cache = profile_cache(graph, opts, job.model_sha)
    job.total = _total_tasks(job)
    return job


def _needed(job: Job) -> list[str]:
    """The tensors whose values a measured unit reads: those entering each signature's node,
    each group, each window, the whole model and each span."""
    from hetlab.graph.onnx_io import unit_io

    graph = job.graph
    needed = [t for v in job.reps.values() for t in unit_io(graph, [v])[0]]
    needed += [t for c in job.greps.values() for t in unit_io(graph, c)[0]]
    needed += [t for w in job.wins for t in unit_io(graph, w)[0]]
    needed += list(graph.inputs) if job.wins else []  # the whole model as one unit
    needed += [t for sp in job.spans.values() for t in unit_io(graph, sp)[0]]
    return needed


def _budget(opts: ProfileOptions) -> Budget:
    return Budget(
        repeat=opts.repeat, warmup=opts.warmup, min_repeat=min(5, opts.repeat), seconds=opts.seconds
    )


def _model_sha(graph: OpGraph) -> str:
    return file_sha256(graph.model_path) if graph.model_path else graph.name


def profile_cache(
    graph: OpGraph, opts: ProfileOptions, model_sha: str | None = None
) -> ProfileCache:
    """The profile cache of ``graph`` under ``opts``, keyed by the model, its shapes, the
    budget and the given inputs: the profiler's, and the calibrations' after it."""
    given = {k: digest(np.asarray(v).tolist()) for k, v in sorted((opts.inputs or {}).items())}
    folded = {"folded": True} if graph.fold.get("folded") else {}  # other node ids, other costs
    return ProfileCache(
        model_sha or _model_sha(graph),
        graph.input_shapes,
        {
            **_budget(opts).key(),
            "rounds": opts.rounds,
            **({"inputs": given} if given else {}),
            **folded,
        },
        enabled=opts.cache,
    )


def _total_tasks(job: Job) -> int:
    """How many measurements the profile makes: one per device, the rounds of every unit a
    device supports and of the whole model, and the links' sizes per device pair."""
    devs, opts = job.devs, job.opts
    units = sum(job.support.values())
    units += sum(all(job.supports(d.name, v) for v in c) for d in devs for c in job.greps.values())
    units += sum(all(job.supports(d.name, v) for v in w) for d in devs for w in job.wins)
    return (
        len(devs)
        + opts.rounds * (units + len(job.whole_key))
        + len(job.pairs) * (len(cal.DEFAULT_SIZES) + len(job.shapes))
    )


def _plan_spans(job: Job) -> None:
    """Where a device runs the whole model, it is measured as one unit ("model"); where it
    cannot, the longest span it can (``in_context.runnable_span``), when there are windows."""
    if not job.wins:
        return
    order = job.graph.topo_order()
    for d in job.devs:
        ok = lambda v, d=d: job.supports(d.name, v)
        if all(ok(v) for v in order):
            job.whole_key[d.name] = "model"
        elif sp := runnable_span(order, job.wins, ok):
            job.spans[d.name] = sp
            job.whole_key[d.name] = f"span|{group_signature(job.graph, sp, job.consts)}"


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
