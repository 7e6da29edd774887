"""In-context correction: isolated op costs rescaled by measured windows of consecutive ops.

An op run alone pays what it would not pay inside a longer unit: onnxruntime's CPU provider
turns Convs into its blocked NCHWc layout and, in a one-op session, converts the input and the
output around every Conv (ReorderInput/ReorderOutput), and it cannot fuse a Relu into the Conv
before it. Inside the model the tensors stay blocked and the Relu is free. On squeezenet that
makes the sum of isolated costs about twice the whole-model time.

So, besides each op alone, the profiler measures *windows*: runs of ``size`` consecutive
vertices in topological order, each as one unit, and fits one factor per op type and device
so that the members' isolated costs times their type's factor add up to each window's measured
time (``type_factors``). Ops of one signature keep one cost, so two profiles rank the same.
This is the "measure ops in batches" variant of removing per-unit overheads (spec §2 costs
stay measured medians; ``stats`` keeps the isolated ones and ``context`` the factor).

A window is itself a unit: it pays once what any unit pays at its edges (waking an
onnxruntime pool that stopped spinning, layout reorders, an OpenCL sync). Where the whole model
runs on a device it is measured too (``device_context``): the fitted factors are then scaled
together so that the ops add up to the whole model's time less one per-unit cost, and that
per-unit cost, (sum of the windows' times - the whole model's) / (windows - 1), is what the
profiler adds to every link into the device, since a cross-device edge starts a new unit.
A device that cannot run the whole model (an OpenCL device without some op) is measured on
the longest run of consecutive vertices it can run instead, and scaled to it the same way,
because a long unit of many small kernels is bound by the host's enqueue and does not cost the
sum of its windows (docs/decisions.md#runnable-span). Without either the windows' own total
sets the scale.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetlab.graph.ir import OpGraph

MIN_FACTOR, MAX_FACTOR = 0.2, 5.0


def windows(graph: OpGraph, size: int) -> list[list[str]]:
    """Consecutive chunks of ``size`` vertices of the topological order (the last may be
    shorter; a last chunk of one vertex is left out: it would only repeat that op)."""
    if size <= 1:
        return []
    order = graph.topo_order()
    return [w for w in (order[i : i + size] for i in range(0, len(order), size)) if len(w) > 1]


def type_factors(
    win_ms: list[float | None],
    members: list[list[tuple[str, float | None]]],
    ridge: float = 0.05,
    sweeps: int = 300,
) -> dict[str, float]:
    """Per-op-type factors ``f`` with ``window time ~= sum over members of f[type] * isolated``.

    ``members[w]`` lists ``(op_type, isolated ms)`` of window ``w``. Non-negative least squares
    on relative error (coordinate descent), with a pull towards 1 (``ridge`` per window) so
    that types the windows say little about stay near their isolated cost: with squeezenet's
    8 windows, 0.001 let a minor type's factor swing between two profiles and their per-op
    ranks fell to Spearman 0.93 (isolated costs: 0.99); 0.05 kept 0.99. Clamped to [0.2, 5], then scaled
    together so that the windows' fitted total equals their measured total. Windows with
    an unmeasured time or member are left out. One factor per type keeps ops of one signature
    equal (their ranks stay reproducible), where one factor per window would not."""
    rows = [
        (t, m)
        for t, m in zip(win_ms, members, strict=False)
        if t and t > 0 and all(c is not None for _, c in m)
    ]
    types = sorted({ty for _, m in rows for ty, _ in m})
    if not rows or not types:
        return {}
    col = {ty: j for j, ty in enumerate(types)}
    A = np.zeros((len(rows), len(types)))
    T = np.array([t for t, _ in rows])
    for i, (_, m) in enumerate(rows):
        for ty, c in m:
            A[i, col[ty]] += float(c)  # type: ignore[arg-type]
    A /= T[:, None]  # relative error: each window's equation scaled to 1
    b = np.ones(len(rows))
    lam = ridge * len(rows)
    f = np.ones(len(types))
    for _ in range(sweeps):
        for j in range(len(types)):
            r = b - A @ f + A[:, j] * f[j]
            f[j] = max(0.0, (A[:, j] @ r + lam) / (A[:, j] @ A[:, j] + lam))
    f = np.clip(f, MIN_FACTOR, MAX_FACTOR)
    # ops that always share windows (Conv and its Relu) trade factors freely; one common scale
    # makes the windows' total come out right, so the ops add up to the time they took
    fitted = float((A * T[:, None] @ f).sum())
    if fitted > 0:
        f = np.clip(f * (float(T.sum()) / fitted), MIN_FACTOR, MAX_FACTOR)
    return {ty: float(f[col[ty]]) for ty in types}


def unit_overhead(unit_ms: list[float | None], whole_ms: float | None) -> float:
    """Per-unit cost (ms) from units that partition the model (the windows, plus any vertex
    left out of them timed alone) and the whole model as one unit: (sum - whole) / (n - 1),
    at least 0 and at most half the median unit; 0 when a time is missing or there are
    fewer than 2 units."""
    if whole_ms is None or len(unit_ms) < 2 or any(t is None for t in unit_ms):
        return 0.0
    c0 = (sum(unit_ms) - whole_ms) / (len(unit_ms) - 1)  # type: ignore[arg-type]
    # above half the median unit it is load between the measurements, not overhead
    return max(0.0, min(c0, 0.5 * float(np.median(unit_ms))))


Member = tuple[str, str, "float | None"]  # (node id, op type, isolated ms)


MIN_SPAN_WINDOWS = 2  # a span sets a device's scale only with this many windows inside it


def runnable_span(
    order: list[str], wins: list[list[str]], ok: Callable[[str], bool]
) -> list[str] | None:
    """The longest run of consecutive vertices of ``order`` that all pass ``ok`` (the first
    on a tie), or None when fewer than ``MIN_SPAN_WINDOWS`` of ``wins`` lie inside it."""
    best: list[str] = []
    cur: list[str] = []
    for v in order:
        cur = [*cur, v] if ok(v) else []
        if len(cur) > len(best):
            best = cur
    inside = set(best)
    return best if sum(set(w) <= inside for w in wins) >= MIN_SPAN_WINDOWS else None


def device_context(
    win_ms: list[float | None],
    rest_ms: list[float | None],
    whole_ms: float | None,
    members: list[list[Member]],
    everything: list[Member],
    span: set[str] | None = None,
) -> tuple[dict[str, float], float, float]:
    """One device's in-context correction: ``(factor per node, per-unit cost ms, scale)``.

    ``win_ms``: the windows' measured times, ``members``: their ops; ``rest_ms``: isolated
    times of the vertices of the whole (or of ``span``) in no window inside it; ``whole_ms``:
    the whole model as one unit, or where the device cannot run it all the longest run of
    consecutive vertices it can (``span``: those vertices), None if not measured;
    ``everything``: every node with its type and isolated time. The per-op-type factors
    (``type_factors``) are multiplied by one scale so that the nodes' isolated times times
    their factors add up, over the whole (or the span), to ``whole_ms`` less the per-unit
    cost (``unit_overhead`` of the windows inside it and the rest)."""
    inside = [span is None or all(v in span for v, _, _ in m) for m in members]
    c0 = (
        unit_overhead(
            [t for t, ok in zip(win_ms, inside, strict=False) if ok] + list(rest_ms), whole_ms
        )
        if whole_ms is not None
        else 0.0
    )
    f = type_factors(list(win_ms), [[(ty, c) for _, ty, c in m] for m in members])
    in_win = {v for m in members for v, _, _ in m}
    fac = {
        v: f.get(ty, 1.0)
        for v, ty, c in everything
        if c is not None and (v in in_win or whole_ms is not None)
    }
    scale = 1.0
    if whole_ms is not None:
        total = sum(
            fac[v] * c for v, _, c in everything if v in fac and (span is None or v in span)
        )  # type: ignore[operator]
        if total > 0:
            scale = min(MAX_FACTOR, max(MIN_FACTOR, (whole_ms - c0) / total))
    return (
        {v: round(min(MAX_FACTOR * 5, x * scale), 4) for v, x in fac.items()},
        round(c0, 6),
        scale,
    )
