"""Fusion planning for a unit (run by ``UnitBuilder`` before any op builds):

- BatchNormalization into a preceding Conv or ConvTranspose whose output only the BN reads
  (weights folded);
- ``MatMul``/``Gemm`` + ``Add`` of a constant row vector or of a same-shape tensor computed
  earlier, into the GEMM epilogue's bias;
- ``Conv`` (on the GEMM path) + ``Add`` of a same-shape tensor computed earlier, into the
  GEMM epilogue's residual (after the Conv's own bias and any BatchNormalization folded in);
- Relu/LeakyRelu/Clip into the epilogue of the op producing their input; on a CPU device a
  PRelu with per-channel slopes into a Conv's, Gemm's or 2-D MatMul's GEMM epilogue;
- ``Pow(x, 2)`` into the ReduceMean/ReduceSum that alone reads it (``squares.py``);
- a Relu whose every reader is a Conv taking it as its input, into those Convs' loads;
- on a CPU device, chains of element-wise nodes into one launch (``chains.py``);
- Concat inputs written in place: producers whose kernels take an output offset write their
  slice of the Concat output directly when it is contiguous and the Concat is their only reader.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.activation import act_params
from hetlab.devices.kernels.ops.gemm_shape import prelu_slopes
from hetlab.devices.kernels.ops.library import wanted
from hetlab.devices.kernels.squares import plan_squares
from hetlab.graph.ir import Node

ACTIVATIONS = ("Relu", "LeakyRelu", "Clip")
ACT_HOSTS = (
    "Conv",
    "ConvTranspose",
    "Gemm",
    "MatMul",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "BatchNormalization",
    "Sigmoid",
    "Tanh",
    "HardSigmoid",
    "HardSwish",
)
ELIDE_INTO = ("Conv", "MaxPool", "AveragePool", "Concat")


def _depthwise(node: Node, b: Any) -> bool:
    g = int(node.attrs.get("group", 1))
    return g > 1 and b.shape(node.inputs[0])[1] // g == 1


def kept(ub: Any, t: str) -> bool:
    """Whether a launch must write ``t`` as it is: a unit output, or a twin rounded to
    float16 that other nodes read (``widen.py``): no fusion crosses it."""
    return t in ub.outputs or t in ub.rounded


def _sole_reader(ub: Any, t: str, ops: tuple[str, ...]) -> Node | None:
    cons = ub.consumers.get(t, [])
    if len(cons) != 1 or kept(ub, t) or cons[0] not in ub.node_ids:
        return None
    n = ub.graph.node(cons[0])
    return n if n.op_type in ops and n.inputs[0] == t and n.id not in ub.fused else None


def plan_fusion(ub: Any) -> None:
    _plan_epilogues(ub)
    plan_squares(ub)


def _plan_epilogues(ub: Any) -> None:
    for n in ub.nodes:
        if n.id in ub.fused:
            continue
        ub.final[n.id] = n.outputs[0]
        if n.op_type in ("Conv", "ConvTranspose") and all(
            ub.const(t) is not None for t in n.inputs[1:] if t
        ):
            bn = _sole_reader(ub, n.outputs[0], ("BatchNormalization",))
            if (
                bn is not None
                and all(ub.const(t) is not None for t in bn.inputs[1:5])
                and len([o for o in bn.outputs if o]) == 1
            ):
                ub.bn_of[n.id], ub.fused[bn.id] = bn, n.id
                ub.final[n.id] = bn.outputs[0]
        if n.op_type == "Conv" and not _depthwise(n, ub):
            _plan_residual(ub, n)
        if n.op_type in ("MatMul", "Gemm") and not (
            n.op_type == "Gemm" and len(n.inputs) > 2 and n.inputs[2]
        ):
            _plan_bias(ub, n)
        if n.op_type in ACT_HOSTS:
            a = _sole_reader(ub, ub.final[n.id], ACTIVATIONS)
            if a is not None and act_params(a, ub) is not None:
                ub.act_of[n.id], ub.fused[a.id] = a, n.id
                ub.final[n.id] = a.outputs[0]
        _plan_prelu(ub, n)


def _plan_prelu(ub: Any, n: Node) -> None:
    """On a CPU device, a PRelu with constant slopes per output channel (a Conv on the GEMM
    path) or per row or column (a Gemm, a 2-D MatMul) into gemm_cpu's epilogue, in the activation's place
    (``act_of``; ``gemm_shape.prelu_slopes``)."""
    dev = ub.device
    if not dev.cpu_kernels or dev.gemm_splits or wanted(dev) or n.id in ub.act_of:
        return
    if n.op_type not in ("Conv", "Gemm", "MatMul") or n.op_type == "Conv" and _depthwise(n, ub):
        return
    if n.op_type == "MatMul" and len(ub.shape(n.outputs[0])) != 2:  # one product, no batch
        return
    a = _sole_reader(ub, ub.final[n.id], ("PRelu",))
    if a is None or ub.graph.tensors[a.outputs[0]].dtype != "float32":
        return
    if prelu_slopes(ub, n, a) is not None:
        ub.act_of[n.id], ub.fused[a.id] = a, n.id
        ub.final[n.id] = a.outputs[0]


def _earlier(ub: Any, t: str, n: Node) -> bool:
    """Whether tensor ``t`` exists when ``n`` runs: made outside the unit, or written by a
    launch of a node before ``n`` (as its host's final output, not as a fused intermediate)."""
    prod = ub.producer.get(t)
    if prod is None:
        return True
    host = ub.fused.get(prod.id, prod.id)
    return ub.position[host] < ub.position[n.id] and ub.final.get(host) == t


def _sole_add(ub: Any, y: str) -> tuple[Node, str] | None:
    """(the Add of this unit that is ``y``'s only reader, its other operand), if any: ``y``
    is no unit output and the Add reads it once."""
    cons = ub.consumers.get(y, [])
    if len(cons) != 1 or cons[0] not in ub.node_ids or kept(ub, y):
        return None
    add = ub.graph.node(cons[0])
    if add.op_type != "Add" or add.id in ub.fused or list(add.inputs).count(y) != 1:
        return None
    return add, add.inputs[1] if add.inputs[0] == y else add.inputs[0]


def _plan_residual(ub: Any, n: Node) -> None:
    """Fold ``Conv -> Add(same-shape float tensor computed earlier)`` into the epilogue:
    ``resid_of[n.id]`` = that tensor."""
    y = ub.final[n.id]
    found = _sole_add(ub, y)
    if found is None:
        return
    add, other = found
    t = ub.graph.tensors.get(other)
    ys = ub.shape(y)
    if ub.const(other) is not None or t is None or t.dtype != "float32":
        return
    if t.shape is None or tuple(t.shape) != ys or ub.shape(add.outputs[0]) != ys:
        return
    if not _earlier(ub, other, n):
        return
    ub.resid_of[n.id], ub.fused[add.id] = other, n.id
    ub.final[n.id] = add.outputs[0]


def _plan_bias(ub: Any, n: Node) -> None:
    """Fold ``MatMul -> Add(row vector or same-shape tensor)`` into the GEMM epilogue.
    ``bias_of[n.id]`` = (row values, None) for a constant row, (None, tensor) otherwise."""
    y = n.outputs[0]
    found = _sole_add(ub, y)
    if found is None:
        return
    add, other = found
    ys = ub.shape(y)
    if ub.shape(add.outputs[0]) != ys:
        return
    c = ub.const(other)
    if c is not None:
        if c.dtype.kind != "f" or c.ndim > len(ys) or any(d != 1 for d in c.shape[:-1]):
            if tuple(c.shape) != ys:
                return
        elif c.shape[-1:] not in ((ys[-1],), (1,)) and c.ndim:
            return
        if tuple(c.shape) != ys:
            ub.bias_of[n.id] = (np.broadcast_to(c.reshape(-1), (ys[-1],)), None)
        else:
            ub.bias_of[n.id] = (None, other)
    else:
        t = ub.graph.tensors.get(other)
        if t is None or t.dtype != "float32" or tuple(t.shape) != ys:
            return
        if not _earlier(ub, other, n):
            return
        ub.bias_of[n.id] = (None, other)
    ub.fused[add.id] = n.id
    ub.final[n.id] = add.outputs[0]


def plan_prologue(ub: Any) -> None:
    """A Relu that no producer took into its epilogue, read only by Convs of the unit as
    their input: each Conv reads the Relu's input and applies it as it loads (``pre_relu``:
    Conv -> the tensor it reads instead). The Relu's output is never written."""
    for n in ub.nodes:
        y = n.outputs[0]
        if n.op_type != "Relu" or n.id in ub.fused or kept(ub, y):
            continue
        names = ub.consumers.get(y, [])
        readers = [ub.graph.node(r) for r in names if r in ub.node_ids]
        if not readers or len(readers) != len(names):
            continue
        if any(c.op_type != "Conv" or c.id in ub.fused or y in c.inputs[1:] for c in readers):
            continue
        for c in readers:
            ub.pre_relu[c.id] = n.inputs[0]
        ub.fused[n.id] = readers[0].id


def plan_concat(ub: Any) -> None:
    """Let producers write straight into their slice of a Concat output (no copy) when the
    slice is contiguous (all dims before the axis are 1), the Concat is the tensor's only
    reader, and the producer's kernel takes an output offset (ELIDE_INTO)."""
    ub.sub: dict[str, tuple[str, int]] = {}
    writer = {t: ub.graph.node(h) for h, t in ub.final.items()}
    for n in reversed(ub.nodes):
        if n.op_type != "Concat" or n.id in ub.fused:
            continue
        ys = ub.shape(n.outputs[0])
        ax = int(n.attrs.get("axis", 0)) % len(ys)
        if int(np.prod(ys[:ax], dtype=np.int64)) != 1:
            continue
        inner, pos = int(np.prod(ys[ax + 1 :], dtype=np.int64)), 0
        for t in n.inputs:
            xs = ub.shape(t) if t in ub.graph.tensors else np.shape(ub.const(t))
            off, pos = pos * inner, pos + int(xs[ax])
            w = writer.get(t)
            if (
                w is not None
                and w.op_type in ELIDE_INTO
                and t not in ub.outputs
                and ub.consumers.get(t) == [n.id]
                and n.inputs.count(t) == 1
                and not (w.op_type == "Conv" and _depthwise(w, ub))
            ):
                ub.sub[t] = (n.outputs[0], off)
