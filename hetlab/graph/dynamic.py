"""Which tensors have data-dependent shapes (spec §1): shapes that one recorded onnxruntime
run gave, and that another run on other input values may change.

A tensor whose shape ONNX shape inference derives from the fixed input shapes is a fact. One
that inference leaves open has the shape of the recorded run; it is data-dependent when

- its node's output shape may follow input *values* (``SHAPE_ARGS``: NonZero, Loop, TopK,
  Reshape...) and one of the inputs that decide it carries run-time values (see below), or
- any input of its node has a data-dependent shape (the propagation through the DAG: Relu of
  a Loop's scan output; a ReduceSum over its variable axis ends it, since inference derives
  its output shape).

An ``If`` output that both branches give with the recorded shape (each branch run once on the
recorded run's inputs) is ``steady``: the condition's value does not change it.

Run-time values: model inputs, and every tensor computed from one, except ``Shape``/``Size``
of a tensor whose shape is a fact (a value shape arithmetic folds to a constant). Constants
carry none. Ops of other domains count as shape-only: what inference leaves open after them
has the recorded shape unless an input's shape is data-dependent.
"""

from __future__ import annotations

from hetlab.graph.ir import Node, OpGraph

# op type -> index of its first input that decides the output's shape by its value (0: any)
SHAPE_ARGS = {
    **dict.fromkeys(
        ("NonZero", "Compress", "Unique", "NonMaxSuppression", "Range", "ConstantOfShape"), 0
    ),
    **dict.fromkeys(("If", "Loop", "Scan", "ConcatFromSequence", "SequenceAt"), 0),
    **dict.fromkeys(
        ("Reshape", "Expand", "Tile", "Slice", "Resize", "Upsample", "Pad", "OneHot", "TopK"), 1
    ),
    **dict.fromkeys(("Squeeze", "Unsqueeze", "Split", "CenterCropPad", "DFT", "STFT"), 1),
    **dict.fromkeys(("Col2Im", "MaxUnpool"), 1),
    **dict.fromkeys(
        (
            "ReduceSum",
            "ReduceMean",
            "ReduceMax",
            "ReduceMin",
            "ReduceProd",
            "ReduceL1",
            "ReduceL2",
            "ReduceLogSum",
            "ReduceLogSumExp",
            "ReduceSumSquare",
        ),
        1,
    ),
}
SHAPE_OF = ("Shape", "Size")  # their values follow only their input's shape


def data_dependent(
    graph: OpGraph, recorded: set[str], steady: frozenset[str] | set[str] = frozenset()
) -> set[str]:
    """The tensors of ``graph`` whose shapes are data-dependent (module doc); ``recorded``
    names those whose shapes came from the onnxruntime run rather than inference, ``steady``
    those of them that no run-time value changes (``If`` outputs both branches give alike,
    ``onnx_infer.steady_branches``) unless an input's shape changes."""
    dynamic: set[str] = set()
    runtime: set[str] = {t for t in graph.inputs if t not in graph.consts}
    for v in graph.topo_order():
        nd = graph.node(v)
        reads = [t for t in list(nd.inputs) + nd.outer_inputs if t]
        shape_dyn = any(t in dynamic for t in reads)
        valued = _value_shaped(nd, runtime | dynamic)
        for t in nd.outputs:
            if t and t in recorded and (shape_dyn or (valued and t not in steady)):
                dynamic.add(t)
        shape_dyn = shape_dyn or any(t in dynamic for t in nd.outputs)
        carries = any(t in runtime for t in reads)
        if nd.op_type in SHAPE_OF and nd.domain in ("", "ai.onnx"):
            carries = any(t in dynamic for t in reads)
        if carries or shape_dyn:
            runtime.update(t for t in nd.outputs if t)
    return dynamic


def _value_shaped(nd: Node, runtime: set[str]) -> bool:
    """Whether ``nd``'s output shape may follow a run-time value it reads."""
    first = SHAPE_ARGS.get(nd.op_type) if nd.domain in ("", "ai.onnx") else None
    if first is None:
        return False
    args = list(nd.inputs[first:]) + (nd.outer_inputs if first == 0 else [])
    return any(t in runtime for t in args if t)
