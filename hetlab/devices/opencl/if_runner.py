"""Running ``If`` on an OpenCL device: a unit holding control flow is a ``Composite`` of
steps, kernel segments (``UnitBuilder`` units over consecutive plain nodes) and ``IfStep`` s.

An ``IfStep`` reads its condition back to the host (one tiny read, with the ints entering
either branch), then runs the taken branch as a ``Branch``: built at the first run per
(branch, input signature), cached after. The signature is the shapes of the float tensors
entering the body and the values of the others: together they fix every shape and every int
inside the body (``ops/if_support.py``).
Building a branch:

1. one recorded onnxruntime run of the body on the entering values (``onnx_bodies.record``)
   gives every body tensor's shape and the values of the host nodes (shape arithmetic and
   constant folding), which become constants of a specialized body graph;
2. the device nodes become kernel segments (each op's full ``why_not`` runs here, on real
   shapes) and nested ``Branch`` es (a nested condition is host-known: its branch is fixed
   per signature).

Running a branch enqueues its segments (and nested branches) with our kernels on the unit's
one queue; nothing of the body runs on the host per run, and the host waits for the queue
only where it reads a condition and at the run's end (``composite.py``). ``executed`` counts
the nodes of the last run's taken bodies (recursively): ``device`` (kernels and nested Ifs),
``shape`` and ``folded`` (host nodes resolved once per signature: shape arithmetic, and
constant folding of float constants).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.devices.kernels.builder import UnitBuilder
from hetlab.devices.kernels.ops import why_not
from hetlab.devices.kernels.ops.common import const_weights
from hetlab.devices.kernels.ops.if_support import classify, is_float, node_reads
from hetlab.devices.opencl.composite import Composite, Pending
from hetlab.devices.unit import Unit
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph, Tensor


def _segments(graph: OpGraph, node_ids: list[str], is_step) -> list[tuple[str, list[str]]]:
    """Topologically ordered ``node_ids`` cut into ("if", [id]) and ("kernels", [ids...])."""
    pos = {v: i for i, v in enumerate(graph.topo_order())}
    out: list[tuple[str, list[str]]] = []
    for v in sorted(node_ids, key=lambda v: pos[v]):
        if is_step(graph.node(v)):
            out.append(("if", [v]))
        elif out and out[-1][0] == "kernels":
            out[-1][1].append(v)
        else:
            out.append(("kernels", [v]))
    return out


def _dtype(value: Any) -> str:
    """The dtype of a device buffer or a host value, as numpy names it."""
    return str(value.dtype) if hasattr(value, "dtype") else str(np.asarray(value).dtype)


class BranchError(RuntimeError):
    """The taken branch cannot be built for this input signature: a run-time failure of the
    unit (the executor re-runs it on the CPU and reports it; the profiler marks the op failed)."""


@dataclass
class Branch:
    """One body specialized for one input signature (see module doc)."""

    device: Any
    body: OpGraph
    steps: list[tuple[str, Any]]  # ("kernels", Unit) or ("if", (node, Branch))
    known: dict[str, np.ndarray]
    counts: dict[str, int]

    @classmethod
    def build(cls, device: Any, body: OpGraph, values: dict[str, np.ndarray]) -> Branch:
        # lazy: onnx is slow to import; only If bodies need it
        from hetlab.graph.onnx_bodies import if_bodies, record

        allv = {**values, **record(body, values)}
        typed = _specialize(body, allv, set())
        roles, known = classify(
            typed, {t for t in body.inputs if np.asarray(values[t]).dtype.kind not in "fc"}
        )
        spec = _specialize(body, allv, {t for t in known if t in allv})
        allv = {**spec._hetlab_weights, **allv}  # type: ignore[attr-defined]
        steps: list[tuple[str, Any]] = []
        host = [body.node(v) for v, r in roles.items() if r == "host"]
        folded = sum(any(is_float(typed, t) for t in n.outputs if t) for n in host)
        counts = {"device": 0, "shape": len(host) - folded, "folded": folded}
        dev_ids = [v for v, r in roles.items() if r == "device"]
        for kind, ids in _segments(spec, dev_ids, lambda n: n.op_type == "If"):
            if kind == "kernels":
                steps.append(("kernels", UnitBuilder(device, spec, ids).build()))
                counts["device"] += len(ids)
                continue
            n = body.node(ids[0])
            cond = bool(np.asarray(allv[n.inputs[0]]).reshape(-1)[0])
            sub = if_bodies(body, n)["then_branch" if cond else "else_branch"]
            child = cls.build(device, sub, {t: allv[t] for t in sub.inputs})
            steps.append(("if", (n, child)))
            for k, c in child.counts.items():
                counts[k] += c
            counts["device"] += 1
        return cls(device, spec, steps, spec._hetlab_weights, counts)  # type: ignore[attr-defined]

    def run(self, env: dict[str, Any], pending: Pending) -> dict[str, Any]:
        """Enqueue the body on ``env`` (outer tensors: device buffers or host arrays); returns
        the body outputs by the body's output names, which hold once ``pending`` is waited
        for. No host wait: a nested condition is fixed by the signature."""
        env = dict(env)
        for kind, step in self.steps:
            if kind == "kernels":
                env.update(pending.enqueue(step, env))
            else:
                n, child = step
                outs = child.run(
                    {t: env[t] if t in env else self.known[t] for t in child.body.inputs},
                    pending,
                )
                env.update(zip(n.outputs, (outs[o] for o in child.body.outputs), strict=False))
        return {o: env[o] if o in env else self.known[o] for o in self.body.outputs}


def _specialize(body: OpGraph, values: dict[str, np.ndarray], baked: set[str]) -> OpGraph:
    """A copy of ``body`` with every shape from ``values`` and the ``baked`` tensors constant."""
    tensors = dict(body.tensors)
    for t, v in values.items():
        a = np.asarray(v)
        tensors[t] = Tensor(t, tuple(int(d) for d in a.shape), str(a.dtype))
    spec = OpGraph(
        name=body.name,
        nodes=body.nodes,
        edges=body.edges,
        tensors=tensors,
        inputs=body.inputs,
        outputs=body.outputs,
        consts=set(body.consts) | baked,
        model_path=body.model_path,
        input_shapes={},
    )
    weights = dict(body._hetlab_weights)  # type: ignore[attr-defined]
    weights.update({t: np.asarray(values[t]) for t in baked if t not in weights})
    spec._hetlab_weights = weights  # type: ignore[attr-defined]
    spec.opset = getattr(body, "opset", None)  # type: ignore[attr-defined]
    return spec


@dataclass
class IfStep:
    """One ``If`` vertex of the unit's graph: condition, then the cached taken ``Branch``."""

    device: Any
    graph: OpGraph
    node_id: str
    branches: dict[tuple, Branch] = field(default_factory=dict)
    executed: dict[str, int] = field(default_factory=dict)

    @property
    def inputs(self) -> list[str]:
        return node_reads(self.graph.node(self.node_id))

    def _const(self, name: str) -> np.ndarray:
        w = const_weights(self.graph)
        if name not in w:
            raise HetlabError(
                f"If node {self.node_id} reads {name!r}, which is neither an input nor a constant"
            )
        return w[name]

    def run(self, env: dict[str, Any], pending: Pending) -> dict[str, Any]:
        """Read the condition (and the ints entering the body, which pick its build) on the
        host, then enqueue the taken branch on ``pending``."""
        # lazy: onnx is slow to import; only If bodies need it
        from hetlab.graph.onnx_bodies import if_bodies

        n = self.graph.node(self.node_id)
        bodies = if_bodies(self.graph, n)
        ints = [
            t
            for t in dict.fromkeys(t for b in bodies.values() for t in b.inputs)
            if t in env and not _dtype(env[t]).startswith("float")
        ]  # read with the condition: one host wait
        got = pending.read(env[n.inputs[0]], *(env[t] for t in ints))
        cond = bool(got[0].reshape(-1)[0])
        host = dict(zip(ints, got[1:], strict=True))
        branch = "then_branch" if cond else "else_branch"
        body = bodies[branch]
        vals = {t: env[t] if t in env else self._const(t) for t in body.inputs}
        key: list[Any] = [branch]
        for t, v in vals.items():
            dt = _dtype(v)
            if dt.startswith("float"):
                key.append((t, tuple(v.shape), dt))
            else:
                a = host[t] if t in host else np.asarray(v)
                key.append((t, a.shape, str(a.dtype), a.tobytes()))
        b = self.branches.get(tuple(key))
        if b is None:
            try:
                b = Branch.build(
                    self.device, body, dict(zip(vals, pending.read(*vals.values()), strict=True))
                )
            except HetlabError as e:
                raise BranchError(f"If {self.node_id}, {branch}: {e}") from None
            self.branches[tuple(key)] = b
        outs = b.run(vals, pending)
        self.executed = dict(b.counts)
        return dict(zip(n.outputs, (outs[o] for o in body.outputs), strict=False))


def prepare_composite(device: Any, graph: OpGraph, node_ids: list[str]) -> Unit:
    """A unit over ``node_ids`` (some of them If) on ``device``: kernel segments built now,
    If branches at their first run (see module doc)."""

    for v in node_ids:
        n = graph.node(v)
        reason = why_not(n, graph)
        if reason:
            raise HetlabError(f"{device.name} cannot run node {v}: {reason}")
    steps: list[tuple[str, Any]] = []
    for kind, ids in _segments(graph, list(node_ids), lambda n: n.op_type == "If"):
        if kind == "kernels":
            steps.append(("kernels", UnitBuilder(device, graph, ids).build()))
        else:
            steps.append(("if", IfStep(device, graph, ids[0])))
    inside = set(node_ids)
    produced: set[str] = set()
    inputs: list[str] = []
    for kind, s in steps:
        for t in s.inputs:
            if t not in produced and t not in graph.consts and t not in inputs:
                inputs.append(t)
        produced.update(
            t
            for v in (s.nodes if kind == "kernels" else [s.node_id])
            for t in graph.node(v).outputs
            if t
        )
    outputs = []
    gout = set(graph.outputs)
    readers: dict[str, set[str]] = {}
    for n in graph.nodes:
        for t in node_reads(n):
            readers.setdefault(t, set()).add(n.id)
    for v in node_ids:
        for t in graph.node(v).outputs:
            if t and (t in gout or readers.get(t, set()) - inside):
                outputs.append(t)
    return Unit(
        device=device.name,
        nodes=list(node_ids),
        inputs=inputs,
        outputs=outputs,
        handle=Composite(steps, list(node_ids)),
    )
