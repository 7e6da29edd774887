"""onnxruntime's integer products made exact where this CPU's onnxruntime saturates them.

On an x86 CPU without VNNI (AVX2 only), onnxruntime multiplies a uint8 operand by an int8
one with ``vpmaddubsw``, which adds each pair of products in 16 bits with saturation: a
MatMulInteger of 255 x 127 over K = 64 gives 1,048,544 instead of 2,072,640. ONNX defines
these ops over exact integers, and hetlab's kernels compute them so; a reference that
saturates would call the exact answer an error (docs/decisions.md, "u8 x s8 products").

``onnxruntime_saturates()`` finds out once per process with a one-node probe. Where it
does, ``exact_source`` rewrites a model so that onnxruntime computes the same values
without such a product: the int8 operand ``q`` of each uint8 x int8 product, with its zero
point ``z``, becomes the uint8 ``q + 128`` with zero point ``z + 128``. ``q - z`` is
unchanged, so the op's value is too, and onnxruntime multiplies uint8 by uint8 exactly.
Which operand onnxruntime treats as its uint8 side differs by op (ConvInteger's weights
come first), hence ``RULES``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.graph.ort_session import ERRORS, reference_session

SATURATION_NOTE = "onnxruntime saturates u8×s8 products on this CPU; compared with the exact result"

# onnx's TensorProto element types (onnx is imported only where a model is read: it is slow)
U8, I8, INT32 = 2, 3, 6
GRAPH, GRAPHS = 5, 10  # onnx's AttributeProto types
MS = "com.microsoft"
Rule = tuple[int | None, int, int]
# (domain, op) -> its products as (slot of the operand that must be uint8, or None where the
# op quantizes a float one to uint8 itself; slot of the int8 operand onnxruntime multiplies
# it by; slot of that operand's zero point): the combinations that saturate (the probe's op
# and its siblings, docs/decisions.md "u8 × s8 products")
RULES: dict[tuple[str, str], tuple[Rule, ...]] = {
    ("", "MatMulInteger"): ((0, 1, 3),),
    ("", "QLinearMatMul"): ((0, 3, 5),),
    ("", "QLinearConv"): ((0, 3, 5),),
    ("", "ConvInteger"): ((1, 0, 2),),
    (MS, "MatMulIntegerToFloat"): ((0, 1, 5),),
    (MS, "DynamicQuantizeMatMul"): ((None, 1, 3),),
    (MS, "DynamicQuantizeLSTM"): ((None, 1, 9), (None, 2, 11)),  # W and R
}
SUFFIX = "__hetlab_u8"


@cache
def onnxruntime_saturates() -> bool:
    """Whether this process's onnxruntime saturates a uint8 x int8 integer product: one
    MatMulInteger of 255 x 127 over 64 terms, compared with its exact value."""
    # lazy: onnx is slow to import
    from onnx import helper, numpy_helper

    k = 64
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node],
        "probe",
        [helper.make_tensor_value_info("a", U8, [1, k])],
        [helper.make_tensor_value_info("y", INT32, [1, 1])],
        [numpy_helper.from_array(np.full((k, 1), 127, np.int8), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    sess = reference_session(model, optimize=True, log_level=ERRORS)
    got = sess.run(None, {"a": np.full((1, k), 255, np.uint8)})[0]
    return int(got.reshape(-1)[0]) != 255 * 127 * k


def exact_source(src: str | bytes) -> tuple[str | bytes, int]:
    """(what onnxruntime should load instead of ``src``, how many nodes were rewritten):
    ``src`` itself where onnxruntime is exact here or the model has no such product,
    else the rewritten model, serialized. ``src``: a file, or a serialized model."""
    if not src or not onnxruntime_saturates():
        return src, 0
    if isinstance(src, bytes):  # the op names are plain bytes in a serialized model
        if not any(op.encode() in src for _, op in RULES):
            return src, 0
        return _rewritten_bytes(src)
    p = Path(src)
    if not p.is_file():
        return src, 0  # onnxruntime says what is wrong with the path
    st = p.stat()
    return _rewritten_file(str(p.resolve()), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=4)
def _rewritten_file(path: str, mtime_ns: int, size: int) -> tuple[str | bytes, int]:
    import onnx  # lazy: slow to import

    del mtime_ns, size  # they key the cache: a file written again is read again
    if not _has_candidates(onnx.load(path, load_external_data=False)):
        return path, 0
    model = onnx.load(path)
    n = rewrite(model)
    if not n or model.ByteSize() >= 2**31:  # protobuf serializes no more: left as it is
        return path, 0
    return model.SerializeToString(), n


@lru_cache(maxsize=4)
def _rewritten_bytes(data: bytes) -> tuple[str | bytes, int]:
    import onnx  # lazy: slow to import

    model = onnx.load_from_string(data)
    if not _has_candidates(model):
        return data, 0
    n = rewrite(model)
    return (model.SerializeToString(), n) if n else (data, 0)


def _graphs(g: Any) -> Iterator[Any]:
    """``g`` (an onnx GraphProto) and every graph inside its nodes' attributes."""
    yield g
    for n in g.node:
        for a in n.attribute:
            for sub in [a.g] if a.type == GRAPH else a.graphs if a.type == GRAPHS else []:
                yield from _graphs(sub)


def _has_candidates(model: Any) -> bool:
    return any((n.domain or "", n.op_type) in RULES for g in _graphs(model.graph) for n in g.node)


def _elem_types(model: Any) -> dict[str, int]:
    """Every tensor's element type the model states or onnx's shape inference finds."""
    import onnx  # lazy: slow to import

    with suppress(Exception):  # inference is a help here; the stated types remain
        model = onnx.shape_inference.infer_shapes(model)
    out: dict[str, int] = {}
    for g in _graphs(model.graph):
        out.update({i.name: i.data_type for i in g.initializer})
        for v in [*g.input, *g.value_info, *g.output]:
            if v.type.tensor_type.elem_type:
                out[v.name] = v.type.tensor_type.elem_type
    return out


def rewrite(model: Any) -> int:
    """Rewrite ``model`` in place (see the module's docstring); the number of nodes."""
    types = _elem_types(model)
    return sum(_rewrite_graph(g, types) for g in list(_graphs(model.graph)))


def _rewrite_graph(g: Any, types: dict[str, int]) -> int:
    inits = {i.name: i for i in g.initializer}
    done: dict[str, str] = {}
    nodes: list[Any] = []
    count = 0
    for node in g.node:
        rules = [
            r
            for r in RULES.get((node.domain or "", node.op_type), ())
            if _saturating(node, r, types)
        ]
        for _, q, z in rules:
            ins = list(node.input) + [""] * max(0, z + 1 - len(node.input))
            ins[q] = _shifted(g, ins[q], inits, done, nodes)
            if ins[z]:
                ins[z] = _shifted(g, ins[z], inits, done, nodes)
            else:
                ins[z] = _constant(g, inits, "zero_point_128", np.uint8(128))
            node.input[:] = ins
        count += bool(rules)
        nodes.append(node)
    if count:
        g.ClearField("node")
        g.node.extend(nodes)
    return count


def _saturating(node: Any, rule: Rule, types: dict[str, int]) -> bool:
    u, q, z = rule

    def typ(slot: int | None) -> int | None:
        name = node.input[slot] if slot is not None and slot < len(node.input) else ""
        return types.get(name) if name else None

    q_type = typ(q) or typ(z)
    return q_type == I8 and (u is None or typ(u) == U8)


def _shifted(g, name: str, inits: dict, done: dict[str, str], nodes: list) -> str:
    """The uint8 ``name + 128`` of int8 ``name``: a new initializer where ``name`` is one,
    else three nodes (Cast to int32, Add 128, Cast to uint8) appended to ``nodes``."""
    from onnx import helper, numpy_helper  # lazy: slow to import

    if name in done:
        return done[name]
    out = name + SUFFIX
    if name in inits:
        q = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
        g.initializer.append(numpy_helper.from_array(q.astype(np.uint8), out))
    else:
        c = _constant(g, inits, "128_i32", np.int32(128))
        nodes += [
            helper.make_node("Cast", [name], [out + "_i32"], to=INT32),
            helper.make_node("Add", [out + "_i32", c], [out + "_sum"]),
            helper.make_node("Cast", [out + "_sum"], [out], to=U8),
        ]
    done[name] = out
    return out


def _constant(g, inits: dict, what: str, value: np.generic) -> str:
    from onnx import numpy_helper  # lazy: slow to import

    name = f"hetlab_{what}"
    if name not in inits:
        inits[name] = numpy_helper.from_array(np.asarray(value), name)
        g.initializer.append(inits[name])
    return name
