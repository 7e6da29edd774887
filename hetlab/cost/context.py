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

A window is itself a unit: it pays once what any unit pays at its start and end (waking an
onnxruntime pool that stopped spinning, layout reorders at its edges, an OpenCL sync). Where
the whole model runs on a device, it is measured too, and that per-unit cost is
``unit_overhead``: (sum of the windows' times - the whole model's) / (windows - 1). It is
taken off each window before fitting the factors (so the ops add up to the whole model), and
the profiler adds it to the latency of every link into the device: a cross-device edge is
where a plan starts a new unit (on the lent H200 host, 8-thread groups: about 0.1 ms).
"""

from __future__ import annotations

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
    ridge: float = 1e-3,
    sweeps: int = 300,
) -> dict[str, float]:
    """Per-op-type factors ``f`` with ``window time ~= sum over members of f[type] * isolated``.

    ``members[w]`` lists ``(op_type, isolated ms)`` of window ``w``. Non-negative least squares
    on relative error (coordinate descent), with a small pull towards 1 so that types the
    windows say little about stay near their isolated cost; clamped to [0.2, 5], then scaled
    together so that the windows' fitted total equals their measured total. Windows with
    an unmeasured time or member are left out. One factor per type keeps ops of one signature
    equal (their ranks stay reproducible), where one factor per window would not."""
    rows = [
        (t, m) for t, m in zip(win_ms, members) if t and t > 0 and all(c is not None for _, c in m)
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
    at least 0 and at most half the cheapest unit; 0 when a time is missing or there are
    fewer than 2 units."""
    if whole_ms is None or len(unit_ms) < 2 or any(t is None for t in unit_ms):
        return 0.0
    c0 = (sum(unit_ms) - whole_ms) / (len(unit_ms) - 1)  # type: ignore[arg-type]
    # a fixed cost above half the cheapest unit is load between the measurements, not overhead
    return max(0.0, min(c0, 0.5 * min(unit_ms)))  # type: ignore[type-var]
