"""Every intermediate shape of a model with fixed input shapes: ONNX shape inference first, then
one recorded onnxruntime run for what inference leaves open, and, for an ``If`` whose output
shapes inference leaves open, one run per branch (``steady_branches``)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from hetlab.errors import HetlabError
from hetlab.graph.index_bounds import index_bounds
from hetlab.graph.inputs import random_arrays
from hetlab.graph.ir import Tensor
from hetlab.graph.onnx_proto import attr_graphs, declared_dims, dtype_name
from hetlab.graph.ort_session import reference_session, run_quietly


def infer(m: onnx.ModelProto) -> dict[str, Tensor]:
    try:
        inf = onnx.shape_inference.infer_shapes(
            m, check_type=False, strict_mode=False, data_prop=True
        )
    except Exception:  # noqa: BLE001  inference is best effort; onnxruntime fills the rest
        inf = m
    g = inf.graph
    out: dict[str, Tensor] = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            continue
        dims = declared_dims(vi)
        ok = tt.HasField("shape") and all(isinstance(d, int) and d >= 0 for d in dims)
        out[vi.name] = Tensor(vi.name, tuple(dims) if ok else None, dtype_name(tt.elem_type))
    for t in g.initializer:
        out[t.name] = Tensor(t.name, tuple(t.dims), dtype_name(t.data_type))
    return out


def ort_shapes(
    fm: onnx.ModelProto,
    fixed: dict[str, tuple[int, ...]],
    names: list[str],
    known: dict[str, Tensor],
    values: dict[str, np.ndarray],
) -> dict[str, Tensor]:
    """Shapes of ``names`` recorded from one onnxruntime run on seeded inputs (or ``values``)."""
    rm = onnx.ModelProto()
    rm.CopyFrom(fm)
    have = {o.name for o in rm.graph.output}
    for t in names:
        if t in have:
            continue
        k = known.get(t)
        vi = (
            helper.make_tensor_value_info(
                t, helper.np_dtype_to_tensor_dtype(np.dtype(k.dtype)), None
            )
            if k is not None and k.dtype not in ("string", "bfloat16")
            else helper.make_empty_tensor_value_info(t)
        )
        rm.graph.output.append(vi)
    try:
        outs = _run(rm, names, _feeds(fm, fixed, values, known))
    except Exception as e:  # noqa: BLE001  onnxruntime's errors become one line
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        which = "the given and seeded random inputs" if values else "seeded random inputs"
        raise HetlabError(
            f"cannot determine the shapes of {len(names)} tensor(s) (e.g. {names[0]!r}): shape inference "
            f"left them open and onnxruntime could not run the model on {which} ({first}); "
            f"give valid input values with --input NAME=FILE.npy or NAME=NUMBER"
        ) from None
    res: dict[str, Tensor] = {}
    for t, v in zip(names, outs, strict=False):
        a = np.asarray(v)
        res[t] = Tensor(
            t, tuple(int(d) for d in a.shape), str(a.dtype) if a.dtype != object else "string"
        )
    return res


AXES = ("axis", "batch_dims")  # the attributes ``index_bounds`` reads


def _feeds(
    fm: onnx.ModelProto,
    fixed: dict[str, tuple[int, ...]],
    values: dict[str, np.ndarray],
    known: dict[str, Tensor],
) -> dict[str, np.ndarray]:
    """The recorded run's inputs: ``values``, seeded random arrays for the other inputs (by
    ``random_inputs``' rule: indices inside the tables they index, whose shapes ``known``
    gives)."""
    specs = [
        Tensor(vi.name, fixed[vi.name], dtype_name(vi.type.tensor_type.elem_type))
        for vi in fm.graph.input
        if vi.name in fixed
    ]

    def shape_of(t: str) -> tuple[int, ...] | None:
        k = known.get(t)
        return None if k is None or k.shape is None else tuple(k.shape)

    nodes = [
        (n.op_type, n.input, n.output, {a.name: a.i for a in n.attribute if a.name in AXES})
        for n in fm.graph.node
    ]
    bounds = index_bounds(nodes, shape_of, [t.name for t in specs])
    return {**random_arrays(specs, 0, bounds), **values}


def _run(m: onnx.ModelProto, names: list[str], feeds: dict[str, np.ndarray]) -> list:
    """``names`` from one onnxruntime run of ``m``, without graph optimizations."""
    return run_quietly(reference_session(m), names, feeds)


MAX_IFS = 16  # more ``If`` nodes than this with open shapes: none is checked (all data-dependent)


def steady_branches(
    fm: onnx.ModelProto,
    fixed: dict[str, tuple[int, ...]],
    values: dict[str, np.ndarray],
    recorded: dict[str, Tensor],
    known: dict[str, Tensor] | None = None,
) -> set[str]:
    """The outputs of main-graph ``If`` nodes, among the ``recorded`` ones, that each branch
    gives with the recorded shape: every branch runs once on the recorded run's inputs, the
    condition held at True, then at False (a branch that cannot run on them gives no shape).
    Bodies that hold an op whose output shape follows values (NonZero, Loop...) never count."""
    ifs = [
        (i, [t for t in n.output if t in recorded])
        for i, n in enumerate(fm.graph.node)
        if n.op_type == "If" and n.domain in ("", "ai.onnx")
    ]
    ifs = [(i, outs) for i, outs in ifs if outs and not _varying_body(fm.graph.node[i])]
    if not ifs or len(ifs) > MAX_IFS:
        return set()
    feeds = _feeds(fm, fixed, values, known or recorded)
    steady: set[str] = set()
    for i, outs in ifs:
        got = [_forced(fm, i, flag, outs, feeds) for flag in (True, False)]
        want = [recorded[t].shape for t in outs]
        if all(g is None or g == want for g in got):
            steady.update(outs)
    return steady


VARYING = ("NonZero", "Compress", "Unique", "NonMaxSuppression", "Loop", "TopK")


def _varying_body(n: onnx.NodeProto) -> bool:
    """Whether a body of ``n`` (or of a node in it) holds an op of ``VARYING``."""
    return any(
        b.op_type in VARYING or _varying_body(b)
        for a in n.attribute
        for sub in attr_graphs(a)
        for b in sub.node
    )


def _forced(
    fm: onnx.ModelProto, i: int, flag: bool, outs: list[str], feeds: dict[str, np.ndarray]
) -> list[tuple[int, ...]] | None:
    """The shapes of ``outs`` with node ``i``'s condition held at ``flag``; None where the
    model does not run so."""
    m = onnx.ModelProto()
    m.CopyFrom(fm)
    cond = f"{fm.graph.node[i].name or i}__held_{int(flag)}"
    m.graph.initializer.append(helper.make_tensor(cond, onnx.TensorProto.BOOL, [], [flag]))
    m.graph.node[i].input[0] = cond
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(helper.make_empty_tensor_value_info(t) for t in outs if t not in have)
    try:
        res = _run(m, outs, feeds)
    except Exception:  # noqa: BLE001  a branch that cannot run on these inputs
        return None
    return [tuple(int(d) for d in np.asarray(r).shape) for r in res]
