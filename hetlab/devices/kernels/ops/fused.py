"""A chain of float32 element-wise nodes as one launch on a CPU device (``cl/fused_cpu.cl``).

``chains.plan_chains`` finds the chains; here each node becomes a term of one expression
over float8 values, built into the kernel (``-DEXPR=...``): the running value, inputs
``v0..v3`` (tensors and non-scalar constants, each at its broadcast strides over the chain's
output) and one-element constants as exact hexadecimal literals; a Relu, LeakyRelu or Clip
fused into a node (``act_of``) is a term of its own. Each op computes what its one-op kernel
computes (``eltwise.cl``'s ``unary_op`` and ``binary_op``, ``eltwise_cpu.cl``'s vector forms).
A node rewritten to compute on float16 tensors (``kernels/widen.py``) rounds its term to
float16, as the conversion after its own launch would; a chain of them writes its float16
output itself where no other node reads the last one's twin, and rounds as it loads them the
float16 results it alone reads (``ub.sole_twin``), whose makers then leave them unrounded.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels.ops.activation import FMAX, act_params, attr
from hetlab.devices.kernels.ops.common import (
    MAXD,
    bcast_strides,
    cpu_grid1,
    f32,
    i32,
    numel,
)
from hetlab.graph.ir import Node

MAX_INPUTS = 4  # fused_cpu.cl's x0..x3
MAX_TEXT = 1500  # characters of one expression (a build option)

BINARY = {
    "Add": "({a}+{b})",
    "Sub": "({a}-{b})",
    "Mul": "({a}*{b})",
    "Div": "({a}/{b})",
    "Max": "fmax({a},{b})",
    "Min": "fmin({a},{b})",
    "PRelu": "select({a},{a}*{b},{a}<0.0f)",
    "Pow": "pow({a},{b})",
}
UNARY = {
    "Sigmoid": "logistic8({a})",
    "HardSigmoid": "fmin(fmax({p0}*{a}+{p1},0.0f),1.0f)",
    "HardSwish": "({a}*fmin(fmax({a}/6.0f+0.5f,0.0f),1.0f))",
    "Tanh": "mlas_tanh8({a})",
    "Exp": "exp({a})",
    "Sqrt": "sqrt({a})",
    "Erf": "erf({a})",
    "Neg": "(-{a})",
    "Abs": "fabs({a})",
    "Log": "log({a})",
    "Reciprocal": "(1.0f/{a})",
    "Softplus": "(log1p(exp(-fabs({a})))+fmax({a},0.0f))",
    "Elu": "select({a},{p0}*(exp({a})-1.0f),{a}<0.0f)",
    "Floor": "floor({a})",
    "Ceil": "ceil({a})",
    "Round": "rint({a})",
    "Relu": "act8({a},{p0},{p1},{p2})",
    "LeakyRelu": "act8({a},{p0},{p1},{p2})",
    "Clip": "act8({a},{p0},{p1},{p2})",
}


def scalar(v: float) -> str:
    """A float32 value as an exact OpenCL C float literal."""
    x = float(np.float32(v))
    if np.isnan(x):
        return "NAN"
    if np.isinf(x):
        return f"({'-' if x < 0 else ''}INFINITY)"
    return f"({x.hex()}f)"


def literal(v: float) -> str:
    """A float32 value as an exact float8 of eight equal lanes."""
    return f"((float8){scalar(v)})"


def _params(node: Node, ctx: Any) -> dict[str, str] | None:
    """The literals of a unary node's parameters (p0, p1, p2), or None where they are not
    constant."""
    if node.op_type in ("Relu", "LeakyRelu", "Clip"):
        act = act_params(node, ctx)
        return None if act is None else {f"p{i}": scalar(v) for i, v in enumerate(act)}
    if node.op_type == "HardSigmoid":
        return {"p0": literal(attr(node, "alpha", 0.2)), "p1": literal(attr(node, "beta", 0.5))}
    if node.op_type == "Elu":
        return {"p0": literal(attr(node, "alpha", 1.0))}
    return {}


class Chain:
    """The expression of a chain being grown, and the inputs it reads."""

    def __init__(self, ctx: Any, shape: tuple[int, ...]) -> None:
        self.ctx, self.shape = ctx, shape
        self.inputs: list[str] = []
        self.value: dict[str, str] = {}  # tensors the chain computes -> their expression
        self.deferred: set[str] = set()  # twins the chain rounds as it loads them

    def operand(self, name: str, inputs: list[str]) -> str | None:
        """The expression of tensor ``name`` (adding it to ``inputs`` if it is one), or None
        when it cannot be read: not float32, or one input too many."""
        if name in self.value:
            return self.value[name]
        c = self.ctx.const(name)
        if c is not None and np.size(c) == 1:
            return literal(np.asarray(c).reshape(-1)[0]) if c.dtype.kind in "fiu" else None
        if c is None and self.ctx.dtype(name) != "float32" or c is not None and c.dtype.kind != "f":
            return None
        if name not in inputs:
            if len(inputs) >= MAX_INPUTS:
                return None
            inputs.append(name)
        if name in self.ctx.sole_twin:  # a float16 result not yet rounded: rounded here
            return f"ROUND8(v{inputs.index(name)})"
        return f"v{inputs.index(name)}"

    def add(self, node: Node) -> bool:
        """Append ``node`` to the chain if it can be one of its terms."""
        out = node.outputs[0]
        if self.ctx.shape(out) != self.shape or self.ctx.dtype(out) != "float32":
            return False
        inputs = list(self.inputs)
        reads = node.inputs if node.op_type in BINARY else node.inputs[:1]
        terms = [self.operand(t, inputs) for t in reads]
        if not terms or any(t is None for t in terms):
            return False
        text = _term(node, terms, self.ctx)
        act = self.ctx.act_of.get(node.id)  # a Relu, LeakyRelu or Clip fused into the node
        if text is not None and act is not None:
            text = _term(act, [text], self.ctx)
        if text is not None and node.id in self.ctx.widened:  # a float16 result: rounded
            text = f"ROUND8({text})"
        if text is None or len(text) > MAX_TEXT:
            return False
        self.inputs, self.value[self.ctx.final.get(node.id, out)] = inputs, text
        self.deferred |= {self.ctx.sole_twin[t] for t in inputs if t in self.ctx.sole_twin}
        return True


def _term(node: Node, terms: list[str], ctx: Any) -> str | None:
    op = node.op_type
    if op in BINARY and len(terms) == 2:
        a, b = terms
        if op == "Pow" and b == literal(2.0):
            return f"({a}*{a})"  # as eltwise.cl's binary_op 9: x * x for 2, x * x * x for 3
        if op == "Pow" and b == literal(3.0):
            return f"({a}*{a}*{a})"
        return BINARY[op].format(a=a, b=b)
    if op in UNARY:
        params = _params(node, ctx)
        return None if params is None else UNARY[op].format(a=terms[0], **params)
    return None


def fusable(node: Node) -> bool:
    """Whether ``node``'s op can be a term of a chain at all (its operands aside)."""
    if node.op_type in BINARY:
        return len(node.inputs) == 2 and all(node.inputs)
    return node.op_type in UNARY and len([o for o in node.outputs if o]) == 1


def chain_meta(shape: tuple[int, ...], strides: list[list[int]]) -> list[int]:
    """fused_cpu.cl's meta block: [ndim, shape[6], s0[6]..s3[6]], size-1 dims dropped and
    neighbours merged where every input steps through them as one."""
    dims: list[tuple[int, list[int]]] = []
    for i, n in enumerate(shape):
        if int(n) == 1:
            continue
        st = [s[i] for s in strides]
        if dims and all(p == a * int(n) for p, a in zip(dims[-1][1], st, strict=True)):
            dims[-1] = (dims[-1][0] * int(n), st)
        else:
            dims.append((int(n), st))
    if len(dims) > MAXD:
        raise ValueError(f"{len(dims)} dims after merging > {MAXD}")
    pad = [(1, [0] * len(strides))] * (MAXD - len(dims)) + dims
    meta = [len(dims)] + [n for n, _ in pad]
    for k in range(MAX_INPUTS):
        meta += [st[k] if k < len(strides) else 0 for _, st in pad]
    return meta


def build_chain(ctx: Any, members: list[Node], chain: Chain, half: str = "") -> None:
    """One launch of fused_cpu.cl for the chain ``members`` (its expression ``chain``),
    writing the float16 tensor ``half`` instead of the last node's output where given."""
    last, shape = members[-1], chain.shape
    args, strides = [], []
    for name in chain.inputs:
        c = ctx.const(name)
        strides.append(bcast_strides(ctx.shape(name) if c is None else np.shape(c), shape))
        args.append(ctx.tensor_or_const(name))
    args += [args[0]] * (MAX_INPUTS - len(args))
    n = numel(shape)
    expr = chain.value[ctx.out(last)]
    opts = f"-DNIN={len(chain.inputs)} -DEXPR={expr}" + (" -DHALF_OUT" if half else "")
    k = ctx.kernel("fused_cpu.cl", "fused_cpu", opts)
    meta = ctx.ints(chain_meta(shape, strides))
    no_act = [f32(1.0), f32(-FMAX), f32(FMAX)]  # the nodes' activations are in the expression
    y = ctx.t(half or ctx.out(last))
    ctx.launch(last, k, *cpu_grid1(n), [*args, y, meta, i32(n), *no_act])
