"""The stretch plan (NN-Stretch, Wei et al. MobiSys'23, §4.2-4.3): which segments to branch,
and per branch (one per device) its depth and width, under the paper's constraints:

- eq. 4, amortization: a meeting point's communication <= ``alpha`` x the segment's latency
  (on the fastest device); a segment failing it is merged with the next one (fewer meeting
  points) or left unbranched;
- eq. 5, no lagging branch: branch i's latency on its device <= ``beta`` x the original
  segment's latency on that device;
- eq. 6, balance: branch FLOPs shares within ``share_tol`` of the devices' throughput shares;
- capacity (soft accuracy constraint): depth ratio >= ``min_depth``, width ratio >=
  ``min_width``, and the branches' FLOPs together (restore convs not counted) within
  [``capacity``, ``capacity`` + ``capacity_tol``] x the segment's, so the model keeps its size (the paper shrinks the duplicated segment "back to the original").

Branches join with a 1x1 conv each (restoring a share of the output channels proportional
to the branch's width) and a Concat (the paper's Fig. 8). Pure: no onnx; ``onnx_rewrite``
writes the model; ``plan`` holds what a plan is made of (and the cost model and constraints
it is made under). The stretched model has fresh random weights: its accuracy needs
retraining, which is out of scope here. Times in ms, FLOPs as in ``hetlab.graph.flops``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.stretch.plan import Branch, BranchedSegment, Constraints, CostModel, StretchPlan
from hetlab.stretch.segments import Layout, Segment, Unscalable, layout, restore_flops, segments

WIDTHS = tuple(x / 16 for x in range(4, 17))  # 0.25 .. 1.0, cut by min_width


def segment_latency(
    g: OpGraph,
    nodes: Sequence[str],
    device: str,
    cm: CostModel,
    flops: Mapping[str, float] | None = None,
) -> float:
    return sum(cm.node_ms(device, (flops or {}).get(v, g.node(v).flops)) for v in nodes)


def meeting_comm_ms(g: OpGraph, seg_in: str, seg_out: str, n_branches: int, cm: CostModel) -> float:
    """Eq. 4's left side: the fork sends the input to n-1 devices, the join gets n-1 outputs
    (counted whole: an upper bound on the restored shares)."""
    b_in, b_out = g.tensors[seg_in].nbytes, g.tensors[seg_out].nbytes
    return (n_branches - 1) * (cm.comm_ms(b_in) + cm.comm_ms(b_out))


def groupings(segs: list[Segment], meeting: str) -> list[list[Segment]]:
    """Runs of consecutive branchable segments: each alone (``stage``: a meeting point at every
    stage boundary) or each run merged (``merged``: the fewest meeting points)."""
    runs: list[list[Segment]] = []
    for s in segs:
        if s.branchable and runs and runs[-1][-1].branchable and runs[-1][-1].index == s.index - 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    runs = [r for r in runs if r[0].branchable]
    if meeting == "merged":
        return runs
    return [[s] for r in runs for s in r]


def amortized(
    g: OpGraph, groups: list[list[Segment]], devices: list[str], cm: CostModel, alpha: float
) -> list[list[Segment]]:
    """Eq. 4: merge a group whose meeting cost exceeds alpha x its latency with the next
    adjacent group; drop the ones that still fail."""
    out: list[list[Segment]] = []
    pending: list[Segment] = []
    for grp in groups:
        cur = pending + grp if pending and pending[-1].index == grp[0].index - 1 else list(grp)
        nodes = [v for s in cur for v in s.nodes]
        lat = min(segment_latency(g, nodes, d, cm) for d in devices)
        if meeting_comm_ms(g, cur[0].input, cur[-1].output, len(devices), cm) <= alpha * lat:
            out.append(cur)
            pending = []
        else:
            pending = cur
    return out


def _options(g: OpGraph, grp: list[Segment], c: Constraints) -> list[Layout]:
    total = sum(len(s.repeats) for s in grp) + 1
    opts = []
    for depth in range(1, total + 1):
        if depth / total + 1e-9 < c.min_depth:
            continue
        for w in WIDTHS:
            if w + 1e-9 < c.min_width:
                continue
            try:
                opts.append(layout(g, grp, depth, w))
            except Unscalable:
                continue
    return opts


def _restores(c_out: int, layouts: Sequence[Layout]) -> list[int]:
    """Split ``c_out`` channels over branches proportionally to their output channels."""
    ws = [lay.channels[lay.out] for lay in layouts]
    tot = sum(ws)
    parts = [max(1, round(c_out * w / tot)) for w in ws]
    parts[-1] = c_out - sum(parts[:-1])
    if parts[-1] < 1:
        raise Unscalable("too few output channels to share")
    return parts


def branch_segment(
    g: OpGraph, grp: list[Segment], devices: list[str], cm: CostModel, c: Constraints, strategy: str
) -> BranchedSegment | None:
    """The best scaling of ``grp`` under eqs. 5-6 and the capacity bounds, or None.
    ``strategy``: ``width`` (prefer deep, narrow branches), ``depth`` (shallow, wide) or
    ``free`` (least estimated latency)."""
    nodes = [v for s in grp for v in s.nodes]
    seg_out = grp[-1].output
    c_out = int(g.tensors[seg_out].shape[1])  # type: ignore[index]
    F = float(sum(s.flops for s in grp))
    lat = {d: segment_latency(g, nodes, d, cm) for d in devices}
    share = {d: cm.throughput[d] / sum(cm.throughput[x] for x in devices) for d in devices}
    opts = _options(g, grp, c)
    if not opts:
        return None
    comm = meeting_comm_ms(g, grp[0].input, seg_out, len(devices), cm)
    best: tuple[tuple, BranchedSegment] | None = None
    for combo in itertools.product(opts, repeat=len(devices)):
        tot0 = sum(lay.flops for lay in combo)
        if not c.capacity * F <= tot0 <= (c.capacity + c.capacity_tol) * F:
            continue  # keep the model's size (restore convs are extra)
        try:
            restores = _restores(c_out, combo)
        except Unscalable:
            continue
        fl = [
            lay.flops + restore_flops(g, seg_out, lay.channels[lay.out], r)
            for lay, r in zip(combo, restores, strict=False)
        ]
        tot = sum(fl)
        if any(abs(f / tot - share[d]) > c.share_tol for f, d in zip(fl, devices, strict=False)):
            continue  # eq. 6
        bl = [
            segment_latency(g, lay.nodes, d, cm, lay.node_flops) + cm.node_ms(d, f - lay.flops)
            for lay, d, f in zip(combo, devices, fl, strict=False)
        ]
        if any(b > c.beta * lat[d] for b, d in zip(bl, devices, strict=False)):
            continue  # eq. 5
        est = max(bl) + comm
        if strategy == "width":
            key = (-min(lay.depth for lay in combo), est)
        elif strategy == "depth":
            key = (-min(lay.width for lay in combo), est)
        else:
            key = (est, tot)
        if best is None or key < best[0]:
            branches = [
                Branch(d, lay, r, f, b)
                for d, lay, r, f, b in zip(devices, combo, restores, fl, bl, strict=False)
            ]
            best = (
                key,
                BranchedSegment(
                    [s.index for s in grp], nodes, grp[0].input, seg_out, F, lat, comm, branches
                ),
            )
    return None if best is None else best[1]


def plan_stretch(
    g: OpGraph,
    devices: Sequence[str],
    cm: CostModel,
    c: Constraints | None = None,
    strategy: str = "free",
    meeting: str = "stage",
) -> StretchPlan:
    """One candidate stretch of ``g`` for ``devices`` (see the module doc). Raises a
    one-line ``HetlabError`` when the model has no stage to branch."""
    c = c or Constraints()
    devices = list(devices)
    if len(devices) < 2:
        raise HetlabError("stretch needs at least two devices (--devices a,b)")
    if len(set(devices)) != len(devices):
        raise HetlabError(f"--devices lists a device twice: {','.join(devices)}")
    missing = [d for d in devices if d not in cm.throughput]
    if missing:
        raise HetlabError(f"no throughput for device {missing[0]!r}")
    segs = segments(g)
    if not any(s.branchable for s in segs):
        raise HetlabError(
            f"model {g.name!r} has no stage boundary with repeated conv blocks to branch "
            "(NN-Stretch needs a CNN-like chain of stages)"
        )
    groups = amortized(g, groupings(segs, meeting), devices, cm, c.alpha)
    parts = [
        b for grp in groups if (b := branch_segment(g, grp, devices, cm, c, strategy)) is not None
    ]
    if not parts:
        raise HetlabError(
            f"no segment of {g.name!r} can be branched under alpha={c.alpha}, beta={c.beta} "
            "and the lower bounds; raise --alpha or --beta"
        )
    return StretchPlan(devices, c, strategy, meeting, parts)
