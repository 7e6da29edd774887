"""``If`` on OpenCL: which body nodes are resolved on the host and which run as kernels,
and the support check of an ``If`` (both branches, recursively). The run itself is in
``hetlab/devices/opencl/if_runner.py``.

A body tensor is *known* before the body's kernels run when it is a constant, not float
(ints and bools inside a body are shape arithmetic: they depend only on input shapes and
on the non-float values entering the ``If``), or the output of a known node. A node is
*host* when every input it reads is known, or it only reads shapes (``Shape``, ``Size``):
it is resolved once per input signature on the host (shape arithmetic, and constant
folding such as slicing LSTM weights). Every other node is *device*: an OpenCL kernel,
or a nested ``If`` run the same way.

``check_if`` answers before any run: every device node of both branches must be an op
type with an OpenCL kernel computing float32 (or a supported nested ``If``), and a node whose
shapes ONNX shape inference fixed and whose inputs are model constants or kernel outputs gets
its op's full ``why_not`` too. Other limits, which depend on shapes or values only the built
body knows (ranks, Slice starts computed by shape arithmetic...), are checked by each op's
``why_not`` when the taken branch is built for its first input signature; a
failure there is a ``if_runner.BranchError`` naming the node (the executor then re-runs the
unit on the CPU and reports the fallback).
"""

from __future__ import annotations

from typing import Any

from hetlab.devices.kernels.ops import REGISTRY, Op, register, why_not
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph

SHAPE_ONLY = frozenset({"Shape", "Size"})  # read only the shape of their input
# new values every run: never resolved once on the host (and no kernel: refused)
RANDOM = frozenset(
    {
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    }
)


def is_float(graph: OpGraph, name: str) -> bool | None:
    """Whether tensor ``name`` is floating point (None when its dtype is unknown)."""
    t = graph.tensors.get(name)
    if t is None or t.dtype in ("unknown", ""):
        return None
    return t.dtype.startswith("float") or t.dtype == "bfloat16"


def node_reads(node: Node) -> list[str]:
    return [t for t in dict.fromkeys(node.inputs + node.outer_inputs) if t]


def classify(graph: OpGraph, known: set[str] | None = None) -> tuple[dict[str, str], set[str]]:
    """``({node id: "host" | "device"}, known tensors)`` for a body graph (see module doc).
    ``known``: tensors known on entry (default: constants and non-float tensors)."""
    known = set(known) if known is not None else set()
    known |= graph.consts
    known |= {t for t in graph.tensors if is_float(graph, t) is False}
    roles: dict[str, str] = {}
    for v in graph.topo_order():
        n = graph.node(v)
        if n.op_type in SHAPE_ONLY or (
            n.op_type not in RANDOM and all(t in known for t in node_reads(n))
        ):
            roles[v] = "host"
            known.update(t for t in n.outputs if t)
        else:
            roles[v] = "device"
    return roles, known


def check_if(node: Node, graph: OpGraph, depth: int = 0) -> str | None:
    """None when OpenCL can run If ``node`` (every device node of both bodies, recursively,
    has a float32 OpenCL kernel), else the first reason."""
    cache = graph.__dict__.setdefault("_hetlab_if_checks", {})  # placement asks many times
    if node.id not in cache:
        cache[node.id] = _check_if(node, graph, depth)
    return cache[node.id]


def _check_if(node: Node, graph: OpGraph, depth: int) -> str | None:
    if node.domain not in ("", "ai.onnx"):
        return f"{node.domain}.If is outside the ONNX domain"
    if depth > 16:
        return "If nested more than 16 deep"
    # lazy: onnx is slow to import; only If bodies need it
    from hetlab.graph.onnx_bodies import if_bodies

    try:
        bodies = if_bodies(graph, node)
    except HetlabError as e:
        return str(e)
    for branch, body in bodies.items():
        roles, known = classify(body)
        for v, role in roles.items():
            if role != "device":
                continue
            n = body.node(v)
            why = check_if(n, body, depth + 1) if n.op_type == "If" else _device_reason(n, body)
            if why is None and n.op_type != "If" and _checkable_now(n, body, known):
                why = why_not(n, body)
            if why:
                return f"{branch} node {v} ({n.op_type}): {why}"
    return None


def _checkable_now(n: Node, body: OpGraph, known: set[str]) -> bool:
    """Whether the op's full check can run before the branch is built: every tensor it
    touches has a shape from shape inference, and each input is either a constant of the
    model or a value computed by kernels (not one resolved on the host at build)."""
    for t in [t for t in n.inputs if t] + [t for t in n.outputs if t]:
        if t in body.consts:
            continue
        if t in known or body.tensors.get(t) is None or body.tensors[t].shape is None:
            return False
    return True


def _device_reason(n: Node, body: OpGraph) -> str | None:
    """Shape-free part of a body node's OpenCL check: op type, domain, float32 data."""
    if n.domain not in ("", "ai.onnx"):
        return f"{n.domain}.{n.op_type} is outside the ONNX domain"
    op = REGISTRY.get(n.op_type)
    if op is None:
        return f"{n.op_type} has no OpenCL kernel"
    try:
        idx = op.float_inputs(n)
    except (KeyError, IndexError, TypeError, ValueError):
        idx = []
    for t in [n.inputs[i] for i in idx if i < len(n.inputs) and n.inputs[i]] + [
        t for t in n.outputs[:1] if t
    ]:
        d = body.tensors.get(t)
        if d is None or d.dtype in ("unknown", ""):
            return f"tensor {t!r} has an unknown dtype"
        if d.dtype != "float32":
            return f"tensor {t!r} is {d.dtype} (OpenCL kernels compute in float32)"
    return None


@register
class If(Op):
    """Control flow: checked here, run by ``hetlab/devices/opencl/if_runner.py``."""

    op_types = ("If",)

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        return check_if(node, graph)

    def build(self, node: Node, ctx: Any) -> None:
        raise HetlabError(
            f"If node {node.id} cannot join a kernel unit; OpenCLDevice.prepare runs it"
        )
