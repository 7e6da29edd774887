"""Which nodes an onnxruntime CPU session accepts (``ort_refuses``): the answer of a probe
session per node signature, cached; onnxruntime's CPU kernel table where a probe cannot be
built."""

from __future__ import annotations

import re
import threading
from contextlib import suppress
from functools import lru_cache

from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph

# onnxruntime's answer per node signature: None (a session accepts it) or its first error line
_ACCEPTS: dict[tuple, str | None] = {}
_ACCEPTS_LOCK = threading.Lock()
CONTROL_FLOW = ("If", "Loop", "Scan")
# onnxruntime errors that mean "no kernel, function or type support for this node"; any other
# failure of a probe session is the probe's own (a type it could not declare) and the kernel
# table answers instead
REFUSALS = ("NOT_IMPLEMENTED", "not a registered function/op", "No Op registered", "Type Error")


@lru_cache(maxsize=1)
def ort_cpu_ops() -> frozenset[tuple[str, str]]:
    """``(domain, op_type)`` of every op onnxruntime's CPU provider has a kernel for."""
    # lazy: onnxruntime is slow to import
    from onnxruntime.capi import onnxruntime_pybind11_state as C

    ops = {
        (k.domain, k.op_name)
        for k in C.get_all_opkernel_def()
        if k.provider == "CPUExecutionProvider"
    }
    ops |= {("ai.onnx", op) for d, op in ops if d == ""}
    return frozenset(ops)


def ort_refuses(node: Node, graph: OpGraph) -> str | None:
    """Why an onnxruntime CPU session would not accept ``node``, or None when it would.

    Asked of onnxruntime itself: a session is built over a model of this one node (its
    constants and fixed shapes included), so ops it runs as functions (HardSwish) or after a
    rewrite count as supported. The answer is cached by op, domain, opset, input and output
    dtypes and ranks, and attributes. A node that names no tensors asks about its op type
    alone: a CPU kernel or an ONNX function body answers. A graph's own nodes keep their
    answer on the graph too, so asking again costs a lookup."""
    own = node.id in graph and graph.node(node.id) is node
    answers = graph.__dict__.setdefault("_ort_refusals", {}) if own else {}
    if node.id in answers:
        return answers[node.id]
    answers[node.id] = reason = _cached_refusal(node, graph)
    return reason


def _cached_refusal(node: Node, graph: OpGraph) -> str | None:
    key = _signature(node, graph)
    with _ACCEPTS_LOCK:
        if key in _ACCEPTS:
            return _ACCEPTS[key]
    model = _probe_model(node, graph)
    if model is None:
        reason = _op_type_refusal(node)
    else:
        dtypes = [graph.tensors[t].dtype for t in node.inputs if t and t in graph.tensors]
        reason = _session_refusal(node, model, dtypes)
    with _ACCEPTS_LOCK:
        _ACCEPTS[key] = reason
    return reason


def _opset(graph: OpGraph, domain: str) -> int | None:
    """The model's opset of ``domain`` (read once per graph from its file)."""
    opsets = graph.__dict__.get("_opsets")
    if opsets is None:
        opsets = graph.__dict__["_opsets"] = {}
        if graph.model_path:
            # lazy: onnx is slow to import
            from hetlab.graph.onnx_io import read_model

            with suppress(HetlabError):
                for o in read_model(graph.model_path).opset_import:
                    opsets[o.domain or "ai.onnx"] = int(o.version)
    return opsets.get(domain or "ai.onnx", getattr(graph, "opset", None))


def _signature(node: Node, graph: OpGraph) -> tuple:
    def io(ts: list[str]) -> tuple:
        out = []
        for t in ts:
            ti = graph.tensors.get(t) if t else None
            rank = None if ti is None or ti.shape is None else len(ti.shape)
            out.append(None if ti is None else (ti.dtype, rank, t in graph.consts))
        return tuple(out)

    domain = node.domain or ""
    attrs = repr(sorted((k, repr(v)) for k, v in node.attrs.items()))
    # bodies are not in attrs: a control-flow node is its model's own
    own = (graph.model_path, node.id) if node.op_type in CONTROL_FLOW else ""
    return (
        domain,
        node.op_type,
        _opset(graph, domain),
        io(node.inputs),
        io(node.outputs),
        attrs,
        own,
    )


def _probe_model(node: Node, graph: OpGraph) -> bytes | None:
    """A one-node model of ``node`` taken from the model file, or None when there is none
    (no file, a node that is not the graph's, or one that names no tensors)."""
    if not (node.inputs or node.outputs) or not graph.model_path or node.id not in graph:
        return None
    if graph.node(node.id) is not node:
        return None
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import extract

    outs = [t for t in node.outputs if t and t in graph.tensors]
    try:
        return extract(graph, [node.id], outs)
    except HetlabError:
        return None


def _session_refusal(node: Node, model: bytes, dtypes: list[str]) -> str | None:
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    try:
        ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types
        msg = " ".join(str(e).split())
        if "Could not find an implementation" in msg:
            return f"no onnxruntime CPU implementation for inputs of type {', '.join(dtypes)}"
        if any(r in msg for r in REFUSALS):
            detail = msg.split(" : ")[-1] if " : " in msg else msg
            detail = re.sub(r" (node )?with name '[^']*'", "", detail)  # reasons group by op
            return f"onnxruntime's CPU session refuses it: {detail[:200]}"
        return _op_type_refusal(node)
    return None


def _op_type_refusal(node: Node) -> str | None:
    domain = node.domain or ""
    if (domain, node.op_type) in ort_cpu_ops():
        return None
    # lazy: onnx is slow to import
    import onnx

    with suppress(Exception):  # no schema: not an ONNX op
        schema = onnx.defs.get_schema(node.op_type, domain=domain)
        if schema.has_function or schema.has_context_dependent_function:
            return None
    return f"onnxruntime has no CPU kernel or function for {domain or 'ai.onnx'}::{node.op_type}"
