"""Where a sequential model can be branched (NN-Stretch, Wei et al. MobiSys'23, §4.1-4.3):
cut tensors, stages (meeting-point candidates) and repeated blocks, and the layout of one
scaled branch (which nodes it keeps, each tensor's channel count, its FLOPs).

Pure analysis of an ``OpGraph`` (no onnx import). Definitions used here:

- a *cut tensor* is a tensor that alone carries everything from the nodes before it (in
  topological order) to the nodes after it (the model input counts);
- a *block* is the run of nodes between two consecutive cut tensors;
- a *segment* starts at a block whose output's spatial size (H, W) differs from its input's
  (a stage boundary, the paper's structure-preserving meeting point) and runs to the next;
- a *repeated block* is a span between cut tensors of equal shape that holds a Conv; found
  right to left, so resnet's bottlenecks and squeezenet's fire modules come out whole. Depth
  scaling drops repeated blocks, the last ones first.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hetlab.graph.ir import Node, OpGraph

# ops that keep the channel count of their first input (per-channel params get resized)
CHANNEL_WISE = {
    "Relu",
    "Clip",
    "Sigmoid",
    "LeakyRelu",
    "HardSigmoid",
    "HardSwish",
    "Tanh",
    "Elu",
    "Selu",
    "PRelu",
    "BatchNormalization",
    "MaxPool",
    "AveragePool",
    "Dropout",
    "Identity",
    "LRN",
    "InstanceNormalization",
}
ELEMENTWISE = {"Add", "Mul", "Sub", "Div", "Sum", "Max", "Min"}
BRANCHABLE = CHANNEL_WISE | ELEMENTWISE | {"Conv", "Concat"}


class Unscalable(ValueError):
    """A segment cannot be width-scaled this way (mismatched channels, unsupported op)."""


@dataclass
class Segment:
    """Nodes (topological) from cut tensor ``input`` to cut tensor ``output``.
    ``repeats``: (start tensor, end tensor, node ids) of its repeated blocks, left to right."""

    index: int
    input: str
    output: str
    nodes: list[str]
    repeats: list[tuple[str, str, list[str]]] = field(default_factory=list)
    flops: int = 0
    branchable: bool = False
    why_not: str = ""

    @property
    def depth(self) -> int:
        """Blocks in the segment: its repeated blocks plus one for the rest."""
        return len(self.repeats) + 1


@dataclass
class Layout:
    """One branch of a segment: kept nodes, tensor renames from dropped blocks (``alias``),
    scaled channel count of every tensor, its FLOPs without the restore conv."""

    depth: int
    width: float
    nodes: list[str]
    alias: dict[str, str]
    channels: dict[str, int]
    out: str
    flops: float
    node_flops: dict[str, float]


def _shape(g: OpGraph, t: str) -> tuple[int, ...] | None:
    x = g.tensors.get(t)
    return tuple(x.shape) if x is not None and x.shape is not None else None


def cut_tensors(g: OpGraph) -> list[tuple[int, str]]:
    """(position in topological order, tensor) of every cut tensor; position -1 is the input."""
    order = g.topo_order()
    pos = {v: i for i, v in enumerate(order)}
    last_use: dict[str, int] = {}
    made_at: dict[str, int] = {}
    for v in order:
        n = g.node(v)
        for t in n.inputs + n.outer_inputs:
            if t and t not in g.consts:
                last_use[t] = max(last_use.get(t, -1), pos[v])
        for t in n.outputs:
            if t:
                made_at[t] = pos[v]
    for t in g.inputs:
        made_at[t] = -1
    # live[p] = tensors made at <= p and read after p; a sweep counts them
    starts: dict[int, list[str]] = {}
    for t, p in made_at.items():
        if last_use.get(t, -1) > p:
            starts.setdefault(p, []).append(t)
    ends: dict[int, int] = {}
    for t, p in made_at.items():
        if last_use.get(t, -1) > p:
            ends[last_use[t]] = ends.get(last_use[t], 0) + 1
    cuts: list[tuple[int, str]] = []
    live = 0
    for p in range(-1, len(order)):
        live -= ends.get(p, 0)
        new = starts.get(p, [])
        live += len(new)
        if live == 1 and len(new) == 1:
            cuts.append((p, new[0]))
    return cuts


def _spatial(g: OpGraph, t: str) -> tuple[int, ...] | None:
    s = _shape(g, t)
    return s[2:] if s is not None and len(s) == 4 else None


def segments(g: OpGraph) -> list[Segment]:
    """The model cut at stage boundaries (where the feature map's spatial size changes)."""
    order = g.topo_order()
    cuts = cut_tensors(g)
    segs: list[Segment] = []
    for (p0, t0), (p1, t1) in itertools.pairwise(cuts):
        nodes = order[p0 + 1 : p1 + 1]
        if segs and _spatial(g, t0) is not None and _spatial(g, t0) == _spatial(g, t1):
            segs[-1].nodes += nodes
            segs[-1].output = t1
        else:
            segs.append(Segment(len(segs), t0, t1, list(nodes)))
    for s in segs:
        s.flops = sum(g.node(v).flops for v in s.nodes)
        s.repeats = repeated_blocks(g, s, cuts)
        s.branchable, s.why_not = _branchable(g, s)
    return segs


def repeated_blocks(
    g: OpGraph, seg: Segment, cuts: list[tuple[int, str]]
) -> list[tuple[str, str, list[str]]]:
    """Spans between equal-shape cut tensors of ``seg`` that hold a Conv (right to left)."""
    inside = set(seg.nodes)
    pos_of = {v: i for i, v in enumerate(g.topo_order())}
    ts = [(p, t) for p, t in cuts if t == seg.input or g.producer().get(t) in inside]
    out: list[tuple[str, str, list[str]]] = []
    j = len(ts) - 1
    while j > 1:  # a span may not start at the segment input (its channels are not scaled)
        hit = None
        for i in range(j - 1, 0, -1):
            span = [v for v in seg.nodes if ts[i][0] < pos_of[v] <= ts[j][0]]
            if _shape(g, ts[i][1]) == _shape(g, ts[j][1]) and any(
                g.node(v).op_type == "Conv" for v in span
            ):
                hit = (i, span)
                break
        if hit is None:
            j -= 1
            continue
        i, span = hit
        out.append((ts[i][1], ts[j][1], span))
        j = i
    return out[::-1]


def _branchable(g: OpGraph, s: Segment) -> tuple[bool, str]:
    if _spatial(g, s.input) is None or _spatial(g, s.output) is None:
        return False, "not a 4-D feature map"
    if s.input in g.inputs:
        return False, "the model's first layers are kept (paper §7.3)"
    bad = sorted({g.node(v).op_type for v in s.nodes} - BRANCHABLE)
    if bad:
        return False, f"holds {', '.join(bad)}"
    if not any(g.node(v).op_type == "Conv" for v in s.nodes):
        return False, "no Conv"
    if not s.repeats:
        return False, "no repeated block"
    return True, ""


def layout(g: OpGraph, segs: list[Segment], depth: int, width: float) -> Layout:
    """The branch of consecutive segments ``segs`` (one merged segment) keeping ``depth`` of
    its blocks (dropping repeated blocks from the end) with conv widths x ``width``."""
    repeats = [r for s in segs for r in s.repeats]
    total = len(repeats) + 1
    if not 1 <= depth <= total:
        raise Unscalable(f"depth {depth} outside 1..{total}")
    drop = repeats[len(repeats) - (total - depth) :] if depth < total else []
    dropped = {v for _, _, span in drop for v in span}
    alias = {end: start for start, end, _ in drop}

    def real(t: str) -> str:
        while t in alias:
            t = alias[t]
        return t

    nodes = [v for s in segs for v in s.nodes if v not in dropped]
    seg_in = segs[0].input
    ch: dict[str, int] = {seg_in: int(_shape(g, seg_in)[1])}  # type: ignore[index]
    nf: dict[str, float] = {}
    for v in nodes:
        n = g.node(v)
        ins = [real(t) for t in n.inputs if t and t not in g.consts]
        ch[n.outputs[0]], nf[v] = _scaled(g, n, ins, ch, width)
        for t in n.outputs[1:]:
            if t:
                ch[t] = ch[n.outputs[0]]
    out = real(segs[-1].output)
    return Layout(depth, width, nodes, alias, ch, out, float(sum(nf.values())), nf)


def _scaled(
    g: OpGraph, n: Node, ins: list[str], ch: dict[str, int], width: float
) -> tuple[int, float]:
    """Node ``n``'s output channels in a branch, and its FLOPs there, from the channels ``ch``
    of its inputs there (``ins``, constants left out): a Conv's width x ``width`` (a depthwise
    one follows its input), a Concat's sum, an elementwise op's common channels, otherwise its
    first input's; ``Unscalable`` where the node cannot be scaled."""
    shp = _shape(g, n.outputs[0])
    c_out = int(shp[1]) if shp and len(shp) == 4 else 0
    if n.op_type == "Conv":
        c_in0 = int(_shape(g, n.inputs[0])[1])  # type: ignore[index]
        grp = int(n.attrs.get("group", 1))
        cin = ch[ins[0]]
        if grp == 1:
            cout = max(1, round(c_out * width))
            return cout, n.flops * (cin / c_in0) * (cout / c_out)
        if grp == c_in0 == c_out:
            return cin, n.flops * cin / c_out
        raise Unscalable(f"{n.id}: grouped Conv (group={grp})")
    if n.op_type == "Concat":
        if int(n.attrs.get("axis", 1)) != 1:
            raise Unscalable(f"{n.id}: Concat not along channels")
        cout = sum(ch[t] for t in ins)
    elif n.op_type in ELEMENTWISE:
        cs = {ch[t] for t in ins}
        if len(cs) != 1:
            raise Unscalable(f"{n.id}: {n.op_type} of {sorted(cs)} channels")
        if width != 1.0 and any(
            t in g.consts and (_shape(g, t) or (1,)) != (1,) for t in n.inputs if t
        ):
            raise Unscalable(f"{n.id}: {n.op_type} with a per-channel constant")
        cout = cs.pop()
    else:  # channel-wise
        cout = ch[ins[0]]
    return cout, n.flops * cout / max(1, c_out)


def restore_flops(g: OpGraph, seg_out: str, c_branch: int, c_restore: int) -> float:
    """FLOPs of the 1x1 conv taking a branch's ``c_branch`` channels to ``c_restore``."""
    s = _shape(g, seg_out)
    return 2.0 * c_branch * c_restore * (s[2] * s[3] if s else 1)
