"""Test helper: a model turned into one stored in float16, as converters write them.

``stored_in_half``: every float32 initializer becomes float16, read through a ``Cast`` to
float32 before its first use, so the model computes in float32 from float16 weights (what
onnxconverter-common's ``keep_io_types`` models look like). With ``io``, the inputs and
outputs are float16 as well, cast at the edges. ``computing_in_half``: every float32 tensor
becomes float16, weights, activations and inputs alike (a model that computes in float16).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def stored_in_half(src: str | Path, dst: str | Path, io: bool = False) -> Path:
    """Write ``src`` to ``dst`` with float16 weights cast to float32 before use."""
    m = onnx.load(str(src))
    g = m.graph
    casts = []
    for init in g.initializer:
        if init.data_type != F32:
            continue
        w = numpy_helper.to_array(init).astype(np.float16)
        name = init.name
        init.CopyFrom(numpy_helper.from_array(w, f"{name}_fp16"))
        casts.append(helper.make_node("Cast", [f"{name}_fp16"], [name], to=F32))
    if io:
        casts += _half_edges(g)
    nodes = casts + [n for n in g.node if n not in casts]
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, str(dst))
    return Path(dst)


def _half_edges(g: onnx.GraphProto) -> list[onnx.NodeProto]:
    """Float16 graph inputs cast to the float32 names the nodes read; float16 graph outputs
    cast from the float32 values the nodes write (the output Casts go last)."""
    head = []
    for v in g.input:
        if v.type.tensor_type.elem_type != F32:
            continue
        inner = f"{v.name}_f32"
        for n in g.node:
            n.input[:] = [inner if t == v.name else t for t in n.input]
        head.append(helper.make_node("Cast", [v.name], [inner], to=F32))
        v.type.tensor_type.elem_type = F16
    for v in g.output:
        if v.type.tensor_type.elem_type != F32:
            continue
        inner = f"{v.name}_f32"
        for n in g.node:
            n.output[:] = [inner if t == v.name else t for t in n.output]
            n.input[:] = [inner if t == v.name else t for t in n.input]
        g.node.append(helper.make_node("Cast", [inner], [v.name], to=F16))
        v.type.tensor_type.elem_type = F16
    return head


def computing_in_half(src: str | Path, dst: str | Path) -> Path:
    """Write ``src`` to ``dst`` with every float32 initializer, input, output and value
    declared float16 (shape information dropped; onnxruntime infers it again)."""
    m = onnx.load(str(src))
    g = m.graph
    for init in g.initializer:
        if init.data_type == F32:
            w = numpy_helper.to_array(init).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(w, init.name))
    for v in [*g.input, *g.output]:
        if v.type.tensor_type.elem_type == F32:
            v.type.tensor_type.elem_type = F16
    del g.value_info[:]
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == F32:
                a.i = F16
    onnx.checker.check_model(m)
    onnx.save(m, str(dst))
    return Path(dst)
