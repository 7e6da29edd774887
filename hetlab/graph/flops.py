"""Floating-point operation counts per vertex (a multiply-add counts 2).

Counted from the node's attributes and fixed input/output shapes. Ops not listed count one
operation per output element when they compute values, and 0 for pure data movement.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

Shape = Sequence[int] | None

ELEMENTWISE = {
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Relu",
    "LeakyRelu",
    "PRelu",
    "Clip",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Pow",
    "Erf",
    "Neg",
    "Abs",
    "Max",
    "Min",
    "Sum",
    "Mean",
    "Elu",
    "Selu",
    "Softplus",
    "Reciprocal",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "Where",
    "Equal",
    "Less",
    "Greater",
    "And",
    "Or",
    "Not",
    "Mish",
    "Gelu",
    "Sin",
    "Cos",
    "Cast",
}
MOVEMENT = {
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Concat",
    "Split",
    "Slice",
    "Gather",
    "Identity",
    "Dropout",
    "Shape",
    "Pad",
    "Expand",
    "Tile",
    "ConstantOfShape",
    "Range",
    "Size",
    "GatherElements",
    "ScatterND",
    "DepthToSpace",
    "SpaceToDepth",
}


def _n(shape: Shape) -> int:
    return int(prod(shape)) if shape else 0


def node_flops(op: str, attrs: dict[str, Any], ins: list[Shape], outs: list[Shape]) -> int:
    """FLOPs of one node from its input and output shapes (``None`` for an unknown shape)."""
    out0 = outs[0] if outs else None
    if op in ("Conv", "ConvTranspose") and len(ins) >= 2 and ins[1] and out0:
        w = ins[1]
        # Conv's W is [Cout, Cin/g, k...]: every output element needs Cin/g * k MACs.
        # ConvTranspose's W is [Cin, Cout/g, k...]: every input element scatters into
        # Cout/g * k outputs.
        macs = _n(out0 if op == "Conv" else ins[0]) * prod(w[1:])
        bias = _n(out0) if len(ins) > 2 and ins[2] else 0
        return 2 * int(macs) + bias
    if op == "Gemm" and len(ins) >= 2 and ins[0] and ins[1]:
        a, b = ins[0], ins[1]
        m = a[1] if attrs.get("transA") else a[0]
        k = a[0] if attrs.get("transA") else a[1]
        n = b[0] if attrs.get("transB") else b[1]
        return 2 * m * n * k + (m * n if len(ins) > 2 and ins[2] else 0)
    if op == "MatMul" and len(ins) >= 2 and ins[0] and ins[1] and out0:
        k = ins[0][-1]
        return 2 * _n(out0) * k
    if op in ("MaxPool", "AveragePool", "LpPool"):
        return _n(out0) * int(prod(attrs.get("kernel_shape", [1])))
    if op in (
        "GlobalAveragePool",
        "GlobalMaxPool",
        "ReduceMean",
        "ReduceSum",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL2",
        "ArgMax",
        "ArgMin",
    ):
        return _n(ins[0] if ins else None)
    if op in ("BatchNormalization", "InstanceNormalization"):
        return 2 * _n(out0)
    if op in ("LayerNormalization", "Softmax", "LogSoftmax", "LRN"):
        return 5 * _n(out0)
    if op in ("LSTM", "GRU", "RNN") and len(ins) >= 3 and ins[0] and ins[1] and ins[2]:
        seq, batch, inp = ins[0]
        dirs, gates_h, hidden = ins[2]
        return 2 * seq * batch * dirs * gates_h * (inp + hidden) + 10 * seq * batch * dirs * hidden
    if op == "Einsum" and len(ins) >= 2:
        return _einsum_flops(str(attrs.get("equation", "")), ins) or sum(_n(o) for o in outs)
    if op == "Resize":
        return 4 * _n(out0)
    if op in MOVEMENT:
        return 0
    return sum(_n(o) for o in outs)


def _einsum_flops(equation: str, ins: list[Shape]) -> int:
    """2 x the product of every index's size (a multiply-add per point of the index space)
    for an equation of plain letters; 0 where the shapes or the equation do not say."""
    terms = equation.replace(" ", "").split("->")[0].split(",")
    if "." in equation or len(terms) != len(ins) or any(s is None for s in ins):
        return 0
    size: dict[str, int] = {}
    for term, shape in zip(terms, ins, strict=True):
        if len(term) != len(shape):
            return 0
        size.update({c: int(d) for c, d in zip(term, shape, strict=True)})
    return 2 * int(prod(size.values()))
