"""Per-node divergence from onnxruntime: which node of a model computes differently on a device.

onnxruntime runs the model once with every intermediate tensor added as an output (graph
optimisations off, so each value is the ONNX node's own). Then each node the device supports
runs on the device alone, as its own unit, fed with onnxruntime's values of its inputs, and
its outputs are compared with onnxruntime's. An error found so is the node's own, not one
carried from upstream: a semantic difference (an attribute read wrongly, another rounding
rule) stands out against the float32 rounding of one op (about 1e-7 relative).

With ``chained=True`` each node is fed the device's own outputs of the nodes before it (the
reference's where the device cannot run a node), which shows how errors accumulate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph
from hetlab.graph.onnx_exact import exact_source
from hetlab.graph.ort_session import ERRORS, reference_session

RTOL = 1e-4  # a node's relative error above this is a finding


@dataclass
class Divergence:
    """One node whose output differs from onnxruntime's by more than the tolerance."""

    node: str
    op_type: str
    position: int  # index of the node in topological order
    attrs: dict[str, Any]
    input_shapes: list[list[int] | None]
    output_shapes: list[list[int] | None]
    output: str  # the output tensor with the largest error
    rel_err: float  # ||got - want|| / ||want|| over that tensor
    max_abs_err: float
    at: list[int] = field(default_factory=list)  # index of the largest absolute error
    got: float | None = None
    want: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "op_type": self.op_type,
            "position": self.position,
            "attrs": {k: _plain(v) for k, v in self.attrs.items()},
            "input_shapes": self.input_shapes,
            "output_shapes": self.output_shapes,
            "output": self.output,
            "rel_err": _finite(self.rel_err),
            "max_abs_err": _finite(self.max_abs_err),
            "at": self.at,
            "got": self.got,
            "want": self.want,
        }

    def line(self) -> str:
        """One line: the node, its op and attributes, shapes and the error."""
        attrs = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.attrs.items()))
        ins = " ".join(_shape_str(s) for s in self.input_shapes)
        outs = " ".join(_shape_str(s) for s in self.output_shapes)
        worst = (
            f", max abs {self.max_abs_err:.3g} at {self.at} (got {self.got:.6g}, want {self.want:.6g})"
            if self.got is not None and self.want is not None
            else ""
        )
        return (
            f"node {self.node!r} ({self.op_type}{'; ' + attrs if attrs else ''}) "
            f"in {ins or '-'} out {outs}: rel err {self.rel_err:.2e} on {self.output!r}{worst}"
        )


@dataclass
class Scan:
    """What a per-node comparison found: the findings in topological order, the number of
    nodes compared, and those the device does not run (computed by onnxruntime alone)."""

    device: str
    rtol: float
    chained: bool
    compared: int
    not_run: list[str]
    divergences: list[Divergence]
    worst: tuple[str, float] | None = None  # node with the largest error, and that error
    spread: float | None = None  # onnxruntime against itself, optimisations off and on

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "rtol": self.rtol,
            "chained": self.chained,
            "nodes_compared": self.compared,
            "nodes_not_run": len(self.not_run),
            "worst": None if self.worst is None else list(self.worst),
            "reference_spread": self.spread,
            "divergences": [d.to_json() for d in self.divergences],
        }


def reference_values(graph: OpGraph, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every tensor of the model (inputs and each node's outputs) from one onnxruntime
    session over the model with all of them exposed, graph optimisations off; integer
    products exact where this CPU's onnxruntime saturates them (``onnx_exact``)."""
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import extract

    if not graph.model_path:
        raise HetlabError("a per-node check needs the model's ONNX file (graph.model_path)")
    produced = [t for n in graph.nodes for t in n.outputs if t and t in graph.tensors]
    model = extract(graph, [n.id for n in graph.nodes], list(dict.fromkeys(produced)))
    try:
        sess = reference_session(exact_source(model)[0], log_level=ERRORS)
        names = [i.name for i in sess.get_inputs()]
        outs = [o.name for o in sess.get_outputs()]
        res = sess.run(outs, {k: inputs[k] for k in names})
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise HetlabError(
            f"the per-node onnxruntime reference of {graph.name} failed: {msg}"
        ) from None
    out = {k: np.asarray(v) for k, v in inputs.items()}
    out.update(zip(outs, (np.asarray(r) for r in res), strict=True))
    return out


def compare(got: Any, want: Any) -> tuple[float, float, list[int], float | None, float | None]:
    """(relative error, largest absolute error, its index, got and wanted value there).
    The relative error is ``||got - want|| / ||want||`` (absolute where ``want`` is 0); a
    shape mismatch is infinite; non-numeric values count 0 when equal and 1 when not."""
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return float("inf"), float("inf"), [], None, None
    if w.dtype.kind not in "fiucb" or g.dtype.kind not in "fiucb":
        return (0.0 if np.array_equal(g, w) else 1.0), 0.0, [], None, None
    if w.size == 0:
        return 0.0, 0.0, [], None, None
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    diff = np.abs(g64 - w64)
    diff = np.where(np.isnan(g64) & np.isnan(w64), 0.0, diff)
    diff = np.where(np.isnan(diff), np.inf, diff)
    i = int(np.argmax(diff))
    at = [int(x) for x in np.unravel_index(i, w.shape)]
    n = float(np.linalg.norm(np.nan_to_num(w64).ravel()))
    d = float(np.linalg.norm(diff.ravel()))
    rel = d / n if n > 0 else d
    return rel, float(diff.ravel()[i]), at, float(g64.ravel()[i]), float(w64.ravel()[i])


def _shape(graph: OpGraph, t: str) -> list[int] | None:
    ti = graph.tensors.get(t) if t else None
    return None if ti is None or ti.shape is None else [int(d) for d in ti.shape]


def _run_node(device: Device, graph: OpGraph, node: Node, feed: Mapping[str, Any]) -> dict:
    """The node's outputs computed on ``device`` alone from host values (host arrays back)."""
    unit = device.prepare(graph, [node.id])
    try:
        res = device.run(unit, {t: feed[t] for t in unit.inputs})
        return {t: device.copy_out(res.outputs[t]) for t in unit.outputs}
    finally:
        device.forget([unit])


def _finding(graph, node, pos, out, got, want) -> Divergence:
    rel, mabs, at, g, w = compare(got, want)
    return Divergence(
        node=node.id,
        op_type=node.op_type,
        position=pos,
        attrs=dict(node.attrs),
        input_shapes=[_shape(graph, t) for t in node.inputs if t],
        output_shapes=[_shape(graph, t) for t in node.outputs if t],
        output=out,
        rel_err=rel,
        max_abs_err=mabs,
        at=at,
        got=g,
        want=w,
    )


def scan(
    graph: OpGraph,
    device: Device,
    inputs: Mapping[str, Any],
    rtol: float = RTOL,
    chained: bool = False,
    first_only: bool = False,
) -> Scan:
    """Compare every node ``device`` supports with onnxruntime (see the module doc)."""
    ref = reference_values(graph, inputs)
    own: dict[str, Any] = {}
    found: list[Divergence] = []
    not_run: list[str] = []
    compared, worst = 0, None
    for pos, nid in enumerate(graph.topo_order()):
        node = graph.node(nid)
        if not device.supports(node, graph):
            not_run.append(nid)
            continue
        feed = {**ref, **own} if chained else ref
        got = _run_node(device, graph, node, feed)
        compared += 1
        own.update(got)
        errs = {t: compare(v, ref[t])[0] for t, v in got.items() if t in ref}
        if not errs:
            continue
        out = max(errs, key=lambda t: errs[t])
        if worst is None or errs[out] > worst[1]:
            worst = (nid, errs[out])
        if errs[out] > rtol:
            found.append(_finding(graph, node, pos, out, got[out], ref[out]))
            if first_only:
                break
    return Scan(device.name, rtol, chained, compared, not_run, found, worst)


def first_divergence(
    graph: OpGraph,
    device: Device,
    inputs: Mapping[str, Any],
    rtol: float = RTOL,
    chained: bool = False,
) -> Divergence | None:
    """The first node, in topological order, whose output on ``device`` differs from
    onnxruntime's by a relative error above ``rtol``; None when every node agrees."""
    s = scan(graph, device, inputs, rtol=rtol, chained=chained, first_only=True)
    return s.divergences[0] if s.divergences else None


def format_scan(scan: Scan, graph: OpGraph) -> str:
    """The text report: a summary line, then one line per finding."""
    how = "the device's own inputs" if scan.chained else "onnxruntime's values of its inputs"
    head = (
        f"per-node   {scan.compared} nodes of {graph.name} run on {scan.device} alone, each fed "
        f"{how}, against onnxruntime (tolerance {scan.rtol:.0e}); "
        f"{len(scan.not_run)} not run on {scan.device}"
    )
    lines = [head]
    lines += [f"diverges   {d.line()}" for d in scan.divergences]
    if not scan.divergences:
        worst = (
            f"; the largest error is {scan.worst[1]:.2e} at {scan.worst[0]!r} "
            f"({graph.node(scan.worst[0]).op_type})"
            if scan.worst
            else ""
        )
        lines.append(f"agrees     no node differs by more than {scan.rtol:.0e}{worst}")
    if scan.spread is not None:
        lines.append(
            f"reference  onnxruntime with graph optimisations off and on differs by "
            f"max_rel_err {scan.spread:.2e} on these inputs"
        )
    return "\n".join(lines)


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


def _short(v: Any) -> str:
    v = _plain(v)
    s = repr(v) if isinstance(v, str) else str(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _shape_str(s: list[int] | None) -> str:
    return "?" if s is None else "[" + ",".join(str(d) for d in s) + "]"


def _finite(x: float) -> float | None:
    return x if np.isfinite(x) else None
