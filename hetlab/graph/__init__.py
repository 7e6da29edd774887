"""The operator DAG (spec §1): IR, ONNX loading, shapes, flops, HOPE's levels."""

from __future__ import annotations

from hetlab.graph.ir import Edge, Node, OpGraph, Tensor
from hetlab.lazy import lazy_names

__all__ = ["Edge", "Node", "OpGraph", "Tensor", "load", "parse_shape_args", "random_inputs"]

# imported on first use: numpy and the shape parser are not needed to build a graph
_LAZY = {
    "parse_shape_args": "hetlab.graph.shapes",
    "random_inputs": "hetlab.graph.inputs",
}


def load(
    model: str,
    shapes: dict[str, tuple[int, ...]] | None = None,
    values=None,
    fold: bool = True,
) -> OpGraph:
    """Load a zoo name or an ``.onnx`` path into an ``OpGraph``, what is constant folded
    unless ``fold`` is False (see ``onnx_io.load``)."""
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import load as _load

    return _load(model, shapes, values, fold)


__getattr__ = lazy_names(__name__, _LAZY)
