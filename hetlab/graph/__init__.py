"""The operator DAG (spec §1): IR, ONNX loading, shapes, flops, upward rank."""

from hetlab.graph.ir import Edge, Node, OpGraph, Tensor

__all__ = ["Edge", "Node", "OpGraph", "Tensor", "corpus_models", "load"]


def load(model: str, shapes: dict[str, tuple[int, ...]] | None = None, values=None) -> OpGraph:
    """Load a zoo name or an ``.onnx`` path into an ``OpGraph`` (see ``onnx_io.load``)."""
    # lazy: onnx is slow to import
    from hetlab.graph.onnx_io import load as _load

    return _load(model, shapes, values)


def corpus_models() -> list:
    """The corpus of real third-party models (``corpus.MODELS``): each knows its file in the
    corpus cache (``path()``) and the CLI arguments it needs to run (``cli_args()``)."""
    from hetlab.graph.corpus import MODELS

    return list(MODELS)
