"""The costliest ops of a profile, as table rows (``costliest_ops``): each op's cost on every
device, its cost on the device chosen (or on its fastest one) and its share of that device's
total, sorted by any column. The workbench's op table draws these rows."""

from __future__ import annotations

import math
from typing import Any

from hetlab.errors import HetlabError

BEST = "fastest"  # the measure "each op on its fastest device"
COLUMNS = ("node", "op_type", "cost", "share")  # sort keys besides the device names


def _finite(c: Any) -> float | None:
    return float(c) if c is not None and math.isfinite(c) else None


def measure_of(problem: Any, device: str) -> dict[str, float | None]:
    """Each op's cost on ``device`` (``BEST``: on its fastest device); None where it cannot
    run there."""
    if device != BEST and device not in problem.devices:
        known = ", ".join([BEST, *problem.devices])
        raise HetlabError(f"no device {device!r} in this profile (one of {known})")
    out: dict[str, float | None] = {}
    for n in problem.nodes:
        if device == BEST:
            vals = [v for v in (_finite(n.cost.get(d)) for d in problem.devices) if v is not None]
            out[n.id] = min(vals, default=None)
        else:
            out[n.id] = _finite(n.cost.get(device))
    return out


def _key(sort: str, devices: list[str]):
    """The sort key of a row by ``sort``; a missing cost sorts after every cost."""
    if sort in ("cost", "share"):
        return lambda r: (r["cost"] is None, -(r["cost"] or 0.0))
    if sort in devices:
        return lambda r: (r["costs"][sort] is None, -(r["costs"][sort] or 0.0))
    if sort in ("node", "op_type"):
        return lambda r: (str(r[sort]).lower(),)
    raise HetlabError(f"cannot sort by {sort!r}: one of {', '.join([*COLUMNS, *devices])}")


def costliest_ops(
    problem: Any,
    device: str = BEST,
    top: int | None = 20,
    sort: str = "cost",
    reverse: bool = False,
) -> list[dict[str, Any]]:
    """One row per op: ``node``, ``op_type``, ``costs`` (device -> ms or None), ``cost`` (on
    ``device``, or on the op's fastest device for ``BEST``), ``share`` (``cost`` over the sum
    of ``cost`` of every op; the shares of all ops sum to 1) and ``estimated`` (some cost is
    an estimate, not a measurement). Sorted by ``sort`` (``cost``, ``share``, ``node``,
    ``op_type`` or a device name: costs descending, names ascending; ``reverse`` turns that
    order round, an op that cannot run staying last), the first ``top`` kept."""
    cost = measure_of(problem, device)
    total = sum(c for c in cost.values() if c is not None)
    rows = []
    for n in problem.nodes:
        c = cost[n.id]
        rows.append(
            {
                "node": n.id,
                "op_type": n.op_type or "?",
                "costs": {d: _finite(n.cost.get(d)) for d in problem.devices},
                "cost": c,
                "share": (c / total if total > 0 else 0.0) if c is not None else None,
                "estimated": bool(n.extra.get("estimated")),
            }
        )
    rows.sort(key=_key(sort, list(problem.devices)))
    if reverse:
        have = [r for r in rows if not _missing(r, sort)]
        rows = have[::-1] + [r for r in rows if _missing(r, sort)]
    return rows if top is None else rows[: max(0, int(top))]


def _missing(row: dict[str, Any], sort: str) -> bool:
    if sort in ("cost", "share"):
        return row["cost"] is None
    if sort in row["costs"]:
        return row["costs"][sort] is None
    return False
