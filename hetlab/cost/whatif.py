"""What-if platforms: a measured problem with its devices made faster or slower and its links
made wider or narrower, to see when heterogeneity pays.

``what_if(problem, speed={"gpu": 2.0})`` returns a new ``Problem`` whose costs on ``gpu`` are
halved; ``bandwidth`` multiplies every link's bandwidth and ``latency`` every link's
per-transfer latency. The result is labelled: its name ends in ``(what-if)`` and
``extra["what_if"]`` holds the factors relative to the measured problem (factors of a what-if
of a what-if multiply). A what-if is a model of a platform that was never measured.

An edge's own transfer times (``comm`` on the edge, spec §2) are split into a fixed part and
a part proportional to the bytes: the fixed part is the link's latency for that device pair,
or, where the problem has no link model, the shortest transfer on that pair (the smallest
tensor's transfer is taken as the cost of any transfer). ``latency`` scales the fixed part,
``bandwidth`` divides the rest.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from hetlab.cost.problem import Link, Problem
from hetlab.errors import HetlabError

LABEL = "(what-if)"
# keys of ``extra`` that report measurements of the real platform, which a what-if is not
MEASURED_KEYS = ("_hope_results",)


def what_if(
    problem: Problem,
    speed: Mapping[str, float] | None = None,
    bandwidth: float = 1.0,
    latency: float = 1.0,
) -> Problem:
    """A new problem: costs on device ``d`` (nodes and fused groups) divided by ``speed[d]``
    (devices not named keep speed 1; a device's queue views follow it), link bandwidths multiplied by ``bandwidth`` (``inf``:
    transfers cost only their latency), latencies multiplied by ``latency`` (0: no fixed
    cost per transfer). ``problem`` is left unchanged."""
    speed = dict(speed or {})
    _check_factors(problem, speed, bandwidth, latency)
    speed = _with_queue_views(problem, speed)
    fixed = _fixed_parts(problem)
    doc = copy.deepcopy(problem.to_json())
    for n in doc["nodes"]:
        n["cost"] = _scaled_costs(n["cost"], speed)
    for g in doc.get("groups", []):
        g["cost"] = _scaled_costs(g["cost"], speed)
    for e in doc["edges"]:
        if e.get("comm"):
            e["comm"] = {
                pair: _scaled_transfer(t, fixed.get(pair, 0.0), bandwidth, latency)
                for pair, t in e["comm"].items()
            }
    doc["comm"] = {
        pair: {
            "latency": link["latency"] * latency,
            "bandwidth": _scaled_bandwidth(link["bandwidth"], bandwidth),
        }
        for pair, link in doc["comm"].items()
    }
    for key in MEASURED_KEYS:
        doc.pop(key, None)
    if isinstance(doc.get("_single"), dict):
        doc["_single"] = _scaled_costs(doc["_single"], speed)
    doc["what_if"] = _combined(problem.extra.get("what_if"), problem, speed, bandwidth, latency)
    name = str(problem.name)
    doc["name"] = name if name.endswith(LABEL) else f"{name} {LABEL}"
    return Problem.from_json(doc, source=doc["name"])


def is_what_if(problem: Problem) -> bool:
    """Whether ``problem`` is a what-if rather than a measured profile."""
    return "what_if" in problem.extra


def _check_factors(
    problem: Problem, speed: Mapping[str, float], bandwidth: float, latency: float
) -> None:
    unknown = sorted(set(speed) - set(problem.devices))
    if unknown:
        raise HetlabError(
            f"what-if: no device {unknown[0]!r} in {problem.name!r}; "
            f"its devices are {', '.join(problem.devices)}"
        )
    for d, s in speed.items():
        if not _positive(s) or math.isinf(s):
            raise HetlabError(f"what-if: the speed of {d} must be a positive number, got {s!r}")
    if not _positive(bandwidth):
        raise HetlabError(f"what-if: bandwidth must be a positive factor, got {bandwidth!r}")
    if not _number(latency) or latency < 0 or math.isinf(latency):
        raise HetlabError(f"what-if: latency must be a factor of 0 or more, got {latency!r}")


def _with_queue_views(problem: Problem, speed: dict[str, float]) -> dict[str, float]:
    """A device's queue views (``extra["queues"]``, ``hetlab.cost.queues``) run on it, so they
    take its speed unless named themselves."""
    queues = problem.extra.get("queues")
    out = dict(speed)
    if isinstance(queues, dict):
        for d, q in queues.items():
            views = q.get("views", []) if isinstance(q, dict) else []
            for v in views:
                if d in speed and v in problem.devices:
                    out.setdefault(v, speed[d])
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


def _positive(x: Any) -> bool:
    return _number(x) and x > 0


def _scaled_costs(cost: Mapping[str, Any], speed: Mapping[str, float]) -> dict[str, Any]:
    return {d: (None if c is None else c / speed.get(d, 1.0)) for d, c in cost.items()}


def _scaled_bandwidth(bw: float | None, factor: float) -> float | None:
    """``None`` (no bandwidth term) stays None, and so does an infinite result."""
    if bw is None or math.isinf(factor):
        return None
    return bw * factor


def _scaled_transfer(t: float, fixed: float, bandwidth: float, latency: float) -> float:
    lat = min(fixed, t)
    return lat * latency + (t - lat) / bandwidth


def _fixed_parts(problem: Problem) -> dict[str, float]:
    """Per device pair ``a->b``: the fixed (latency) part of each of its edge transfers."""
    out: dict[str, float] = {}
    shortest: dict[str, float] = {}
    for e in problem.edges:
        for pair, t in e.comm.items():
            shortest[pair] = min(shortest.get(pair, math.inf), float(t))
    default = problem.comm.get("default")
    for pair, t in shortest.items():
        link: Link | None = problem.comm.get(pair) or default
        out[pair] = link.latency if link is not None else t
    return out


def _combined(
    before: Any, problem: Problem, speed: Mapping[str, float], bandwidth: float, latency: float
) -> dict[str, Any]:
    """The factors relative to the measured problem (a what-if's own factors multiply)."""
    prev = before if isinstance(before, dict) else {}
    prev_speed = prev.get("speed") or {}
    return {
        "speed": {
            d: float(prev_speed.get(d, 1.0)) * float(speed.get(d, 1.0)) for d in problem.devices
        },
        "bandwidth": float(prev.get("bandwidth", 1.0)) * float(bandwidth),
        "latency": float(prev.get("latency", 1.0)) * float(latency),
        "measured": prev.get("measured", problem.name),
    }
