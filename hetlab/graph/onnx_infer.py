"""Every intermediate shape of a model with fixed input shapes: ONNX shape inference first, then
one recorded onnxruntime run for what inference leaves open."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from hetlab.errors import HetlabError
from hetlab.graph.inputs import random_arrays
from hetlab.graph.ir import Tensor
from hetlab.graph.onnx_proto import declared_dims, dtype_name


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
    # lazy: onnxruntime is slow to import
    import onnxruntime as ort

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
    specs = []
    for vi in fm.graph.input:
        if vi.name in fixed:
            specs.append(Tensor(vi.name, fixed[vi.name], dtype_name(vi.type.tensor_type.elem_type)))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    feeds = {**random_arrays(specs, seed=0), **values}
    try:
        sess = ort.InferenceSession(rm.SerializeToString(), so, providers=["CPUExecutionProvider"])
        ro = ort.RunOptions()
        ro.log_severity_level = 4
        outs = sess.run(names, feeds, ro)
    except Exception as e:  # noqa: BLE001  onnxruntime's errors become one line
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
        raise HetlabError(
            f"cannot determine the shapes of {len(names)} tensor(s) (e.g. {names[0]!r}): shape inference "
            f"left them open and onnxruntime could not run the model on seeded random inputs ({first}); "
            f"give valid input values with --input NAME=FILE.npy or NAME=NUMBER"
        ) from None
    res: dict[str, Tensor] = {}
    for t, v in zip(names, outs, strict=False):
        a = np.asarray(v)
        res[t] = Tensor(
            t, tuple(int(d) for d in a.shape), str(a.dtype) if a.dtype != object else "string"
        )
    return res
