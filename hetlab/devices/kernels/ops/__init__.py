"""Registry of OpenCL op builders, keyed by ONNX op type.

Each op class answers ``why_not(node, graph)`` (None when supported: checks attributes,
dtypes -- float32 unless the op's ``dtypes`` names more; float16 wherever float32, computed
in float32 between conversions (``kernels/widen.py``) -- and which inputs must be constant) and ``build(node, ctx)``, which
adds kernel launches through the ``UnitBuilder`` context. Ops of the ONNX domain are keyed
by op type in ``REGISTRY``; the few of onnxruntime's contrib domain (``com.microsoft``) that
have kernels, by op type in ``CONTRIB``; those of ``ai.onnx.ml`` (Scaler), in ``ML_OPS``. Any
other op of another domain is refused.
"""

from __future__ import annotations

from typing import Any

from hetlab.errors import HetlabError, UnsupportedOp
from hetlab.graph.ir import Node, OpGraph

REGISTRY: dict[str, Op] = {}
CONTRIB: dict[str, Op] = {}
ML_OPS: dict[str, Op] = {}
MS = "com.microsoft"
ML = "ai.onnx.ml"
ONNX = ("", "ai.onnx")
# ops whose output shape depends on input values: no fixed-shape kernel can run them
DATA_DEPENDENT = ("NonZero", "Unique", "NonMaxSuppression", "Compress", "Loop", "Scan")


FLOAT = ("float32",)


class Op:
    """Base class: ``op_types`` it serves, the input indices whose dtype and shape are
    checked (``float_inputs``, with the first output), and the dtypes they may have."""

    op_types: tuple[str, ...] = ()
    domain = ""  # "" (ONNX), MS or ML
    max_rank = 6

    def float_inputs(self, node: Node) -> list[int]:
        return [i for i, t in enumerate(node.inputs) if t]

    def dtypes(self, node: Node) -> tuple[str, ...]:
        """The dtypes the checked tensors may have (kernels compiled per dtype)."""
        return FLOAT

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        dts = self.dtypes(node)
        for i in self.float_inputs(node):
            if i >= len(node.inputs) or not node.inputs[i]:
                continue
            r = check_tensor(graph, node.inputs[i], self.max_rank, f"input {i}", dts)
            if r:
                return r
        for t in node.outputs[:1]:
            r = check_tensor(graph, t, self.max_rank, "output", dts)
            if r:
                return r
        return self.check(node, graph)

    def check(self, node: Node, graph: OpGraph) -> str | None:
        return None

    def build(self, node: Node, ctx: Any) -> None:
        raise NotImplementedError


def check_tensor(
    graph: OpGraph, name: str, max_rank: int, role: str, dtypes: tuple[str, ...] = FLOAT
) -> str | None:
    """Why tensor ``name`` (the node's ``role``: 'input 1', 'output') rules the node out;
    reasons name the role, not the tensor, so that equal reasons group across nodes."""
    t = graph.tensors.get(name)
    if t is None or t.shape is None:
        return f"{role} has no fixed shape"
    if t.dtype == "float16" and "float32" in dtypes:
        pass  # computed in float32 between conversions (``kernels/widen.py``)
    elif t.dtype not in dtypes and dtypes == FLOAT:
        return f"{role} is {t.dtype} (OpenCL kernels compute in float32)"
    elif t.dtype not in dtypes:
        return f"{role} is {t.dtype} (this op's kernels take {', '.join(dtypes)})"
    if len(t.shape) > max_rank:
        return f"{role} has rank {len(t.shape)} > {max_rank}"
    if any(int(d) <= 0 for d in t.shape):
        return f"{role} is empty"
    return None


def table_for(domain: str) -> dict[str, Op]:
    """The registry of ``domain``'s ops (empty for a domain with no kernels)."""
    return (
        REGISTRY if domain in ONNX else CONTRIB if domain == MS else ML_OPS if domain == ML else {}
    )


def register(cls: type[Op]) -> type[Op]:
    inst = cls()
    table = table_for(cls.domain)
    for t in cls.op_types:
        table[t] = inst
    return cls


def op_for(op_type: str, domain: str = "") -> Op:
    try:
        return table_for(domain)[op_type]
    except KeyError:
        raise UnsupportedOp(
            f"no OpenCL kernel for op type {op_type!r} of domain {domain or 'ai.onnx'!r}; "
            f"registered: {', '.join(sorted(REGISTRY))}; {MS}: {', '.join(sorted(CONTRIB))}; "
            f"{ML}: {', '.join(sorted(ML_OPS))}"
        ) from None


def why_not(node: Node, graph: OpGraph) -> str | None:
    if node.domain == MS and node.op_type not in CONTRIB:
        return f"{MS}.{node.op_type} has no kernel (of {MS}: {', '.join(sorted(CONTRIB))})"
    if node.domain not in ONNX and node.domain != MS and node.op_type not in table_for(node.domain):
        return f"{node.domain}.{node.op_type} is outside the ONNX domain"
    op = table_for(node.domain).get(node.op_type)
    if op is None and node.op_type in DATA_DEPENDENT:
        return "data-dependent output shape (no OpenCL kernel)"
    if op is None:
        return f"{node.op_type} has no OpenCL kernel"
    if graph.data_dependent(node):  # kernels are built for the shapes of the recorded run
        return "data-dependent shape: input values change it, kernels are built for one"
    try:
        return op.why_not(node, graph)
    except HetlabError as e:
        return str(e)
    except (KeyError, IndexError, TypeError, ValueError) as e:  # malformed node: refuse it
        return f"{node.op_type} node {node.id} could not be checked ({type(e).__name__}: {e})"


from hetlab.devices.kernels.ops import (  # noqa: F401  (registration side effects)
    activation,
    binary,
    contrib,
    contrib_lstm,
    conv,
    data_movement,
    einsum,
    gather,
    gather_nd,
    gemm,
    generate,
    gru,
    if_support,
    integer,
    lstm,
    ml,
    norm,
    pad,
    pool,
    quant,
    reduce,
    resize,
    rnn,
    scatter,
    space_depth,
)
