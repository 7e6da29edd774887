"""The operator DAG (spec §1): IR, ONNX loading, shapes, flops, upward rank."""

from hetlab.graph.ir import Edge, Node, OpGraph, Tensor

__all__ = ["Edge", "Node", "OpGraph", "Tensor", "load"]


def load(model: str, shapes: dict[str, tuple[int, ...]] | None = None, values=None) -> OpGraph:
    """Load a zoo name or an ``.onnx`` path into an ``OpGraph`` (see ``onnx_io.load``)."""
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import load as _load

    return _load(model, shapes, values)
