"""The zoo's weights: stripping big float initializers from a model, and synthesizing them.

Zoo files store each big float initializer with its name, dims and data_type but no values
(``strip_weights``); ``materialize`` fills them back deterministically from (seed, name).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx

from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_bytes

# Zoo files store each big float initializer with its name, dims and data_type but no values
# (``strip_weights``); ``materialize`` fills them back deterministically from (seed, name).

SYNTH_VERSION = 1  # bump when materialize() would give other values (keys the zoo cache)
_STRIP_MIN_ELEMENTS = 16  # float tensors with more elements than this lose their values
_STRIPPED_DOC = "hetlab:stripped"  # doc_string prefix of a stripped tensor; an optional
# init hint follows after a space, e.g. "hetlab:stripped uniform:0.03125" (see _synth_values).
_FLOAT_TYPES = {1: "float32", 10: "float16", 11: "float64"}  # TensorProto.FLOAT, FLOAT16, DOUBLE


def _zoo_error(message: str) -> Exception:
    return HetlabError(message)


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _is_stripped(t) -> bool:
    return t.doc_string.startswith(_STRIPPED_DOC)


def _strip_tensor(t) -> bool:
    """Clear the values of one float TensorProto if it is big; True when it was stripped."""
    if t.data_type not in _FLOAT_TYPES or _numel(t.dims) <= _STRIP_MIN_ELEMENTS:
        return False
    if t.data_location == 1:  # EXTERNAL: the export must embed its data first
        raise _zoo_error(f"tensor {t.name!r} uses external data; embed it before stripping")
    hint = t.doc_string if t.doc_string.startswith("init=") else ""
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.ClearField("double_data")
    t.ClearField("int32_data")  # float16 values live here when not raw
    t.doc_string = f"{_STRIPPED_DOC} {hint[5:]}".rstrip()
    return True


def _walk_graphs(graph):
    """``graph`` and every subgraph of its control-flow nodes, depth first."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == 5:  # GRAPH
                yield from _walk_graphs(attr.g)
            elif attr.type == 10:  # GRAPHS
                for g in attr.graphs:
                    yield from _walk_graphs(g)


def strip_weights(model):
    """Clear the values of every float initializer (and Constant ``value``) with more than
    16 elements in ``model`` (an ``onnx.ModelProto``, changed in place and returned).
    Names, dims and data types stay; integer and small tensors keep their values. A tensor
    whose ``doc_string`` is ``init=KIND:SCALE`` keeps that as a hint for ``materialize``."""
    for g in _walk_graphs(model.graph):
        for t in g.initializer:
            _strip_tensor(t)
        for node in g.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                for attr in node.attribute:
                    if attr.name == "value" and attr.type == 4:  # TENSOR
                        _strip_tensor(attr.t)
    return model


def _consumers(graph) -> dict[str, tuple[object, int]]:
    """First (node, input index) that reads each tensor name in ``graph`` or its subgraphs."""
    first: dict[str, tuple[object, int]] = {}
    for g in _walk_graphs(graph):
        for node in g.node:
            for i, name in enumerate(node.input):
                if name and name not in first:
                    first[name] = (node, i)
    return first


_RECTIFIERS = {"Relu", "Sigmoid", "Softplus", "Clip"}  # outputs >= 0 (Clip: ReLU6 mostly)
_PASS_THROUGH = {
    "Pad",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Concat",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Identity",
    "Slice",
    "Split",
}


def _gain(node, producers: dict) -> float:
    """He's gain: 2 when the data input of ``node`` (input 0) comes out of a ReLU-like op,
    possibly through pooling/padding/reshaping ops, else 1 (LeCun), so that stacked
    convolutions without activations in between (separable convs) keep their scale."""
    seen: set[str] = set()
    frontier = [node.input[0]] if node is not None and node.input else []
    while frontier:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        p = producers.get(name)
        if p is None:
            return 1.0
        if p.op_type in _RECTIFIERS:
            continue
        if p.op_type not in _PASS_THROUGH:
            return 1.0
        frontier.extend(p.input[:1] if p.op_type != "Concat" else p.input)
    return 2.0 if seen else 1.0


def _rng(seed: int, name: str) -> np.random.Generator:
    digest = hashlib.sha256(name.encode()).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "little")])


def _fan_in(node, index: int, shape: tuple[int, ...]) -> int:
    """Inputs summed per output element for a weight read by ``node`` at ``index``."""
    if node.op_type in ("Conv", "ConvTranspose") and len(shape) >= 2:
        return max(1, _numel(shape[1:]))
    if node.op_type == "Gemm" and len(shape) == 2:
        trans = {a.name: a.i for a in node.attribute}.get("transB" if index == 1 else "transA", 0)
        return max(1, shape[1] if (trans == 1) == (index == 1) else shape[0])
    if node.op_type == "MatMul" and len(shape) >= 2:
        return max(1, shape[-2] if index == 1 else shape[-1])
    return max(1, shape[-1] if shape else 1)


def _synth_values(t, node, index: int, seed: int, gain: float = 2.0) -> np.ndarray:
    """Sensible values for stripped tensor ``t`` read by ``node`` at input ``index``:
    normal conv/matmul weights of variance ``gain / fan_in`` (He), small biases,
    near-identity BatchNormalization,
    uniform(+-1/sqrt(hidden)) LSTM/GRU/RNN weights; an ``init=`` hint overrides them."""
    shape = tuple(int(d) for d in t.dims)
    rng = _rng(seed, t.name)
    hint = t.doc_string[len(_STRIPPED_DOC) :].strip()
    op = node.op_type if node is not None else ""
    attrs = {a.name: a for a in node.attribute} if node is not None else {}
    if hint:
        kind, _, scale = hint.partition(":")
        s = float(scale or 1.0)
        if kind == "uniform":
            return rng.uniform(-s, s, shape)
        if kind == "normal":
            return rng.standard_normal(shape) * s
        raise _zoo_error(
            f"unknown init hint {hint!r} on tensor {t.name!r}; use uniform:S or normal:S"
        )
    if op in ("LSTM", "GRU", "RNN") and index in (1, 2, 3):
        hidden = attrs["hidden_size"].i if "hidden_size" in attrs else shape[-1]
        s = 1.0 / np.sqrt(max(1, hidden))
        return rng.uniform(-s, s, shape)
    if op in ("BatchNormalization", "InstanceNormalization", "LayerNormalization") and index >= 1:
        if index == 1:  # scale
            return 1.0 + 0.1 * rng.standard_normal(shape)
        if index == 4:  # running variance
            return rng.uniform(0.5, 1.5, shape)
        return 0.05 * rng.standard_normal(shape)  # bias, running mean
    if op in ("Conv", "ConvTranspose", "Gemm", "MatMul") and index in (0, 1) and len(shape) >= 2:
        return rng.standard_normal(shape) * np.sqrt(gain / _fan_in(node, index, shape))
    if op in ("Conv", "ConvTranspose", "Gemm") and index == 2:
        return 0.01 * rng.standard_normal(shape)
    if op in ("Mul", "Div"):
        return 1.0 + 0.01 * rng.standard_normal(shape)
    return 0.02 * rng.standard_normal(shape)


def _fill(t, values: np.ndarray) -> None:
    t.raw_data = np.ascontiguousarray(values, dtype=_FLOAT_TYPES[t.data_type]).tobytes()
    t.doc_string = ""


def materialize(stripped_path: str | Path, out_path: str | Path, seed: int = 0) -> Path:
    """Write to ``out_path`` (atomically) the model at ``stripped_path`` with every stripped
    tensor filled from (``seed``, tensor name); the same inputs give the same bytes."""
    src = Path(stripped_path)
    if not src.is_file():
        raise _zoo_error(f"zoo file not found: {src}; re-export it with data/export_zoo.py")
    try:
        model = onnx.load(str(src), load_external_data=False)
    except Exception as e:  # noqa: BLE001 - protobuf raises several types
        raise _zoo_error(f"{src} is not a readable ONNX file ({type(e).__name__})") from None
    consumers = _consumers(model.graph)
    producers = {o: n for g in _walk_graphs(model.graph) for n in g.node for o in n.output}
    for g in _walk_graphs(model.graph):
        for t in g.initializer:
            if _is_stripped(t):
                node, index = consumers.get(t.name, (None, -1))
                _fill(t, _synth_values(t, node, index, seed, _gain(node, producers)))
        for node in g.node:
            if node.op_type != "Constant":
                continue
            for attr in node.attribute:
                if attr.name == "value" and attr.type == 4 and _is_stripped(attr.t):
                    user, index = consumers.get(node.output[0], (None, -1))
                    attr.t.name = attr.t.name or node.output[0]
                    gain = _gain(user, producers)
                    _fill(attr.t, _synth_values(attr.t, user, index, seed, gain))
    return atomic_write_bytes(out_path, model.SerializeToString())
