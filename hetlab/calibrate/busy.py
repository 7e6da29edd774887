"""Whether a calibration run was measured on a busy machine, and what to tell the user.

A calibration (``boundary.py``'s alternating windows, ``concurrency.py``'s plan) is measured
once and cached. Measured while other work shares the cores, it is too high, and every later
prediction built on it is too high with it. So right before each such run the whole model
runs on one device alone with the same repeats (the reference), and is compared with what the
profile says that run costs: the sum of the nodes' costs on the device (as ``excess_ms``
reads the profile). A reference more than ``BUSY_FACTOR`` times that (plus ``BUSY_SLACK_MS``,
the executor's own cost around a run, which is a large share of a sub-millisecond model)
means the machine was busy: the run is measured once more, and if the reference says busy
again the run is kept, marked ``busy``, and not cached, so the next profile measures it again.
Both figures stay with the measurement as its evidence (docs/decisions.md#busy-calibrations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.graph.ir import OpGraph

BUSY_FACTOR = 1.25  # a reference run this much slower than the profile says: a busy machine
BUSY_SLACK_MS = 0.2  # what the executor adds around a whole-model run, allowed on top
ATTEMPTS = 2  # a busy calibration is measured once more
EVIDENCE = ("reference_device", "reference_ms", "expected_ms", "busy")


def expected_ms(problem: Problem, device: str) -> float | None:
    """What the profile says a whole-model run on ``device`` costs: the sum of the nodes'
    costs there (ms); None when a node has no cost on it."""
    costs = [n.cost.get(device) for n in problem.nodes]
    if not costs or any(c is None for c in costs):
        return None
    return float(sum(costs))  # type: ignore[arg-type]


def reference_device(graph: OpGraph, devices: Sequence[Device]) -> Device | None:
    """The first of ``devices`` that runs every node of ``graph``, which the reference runs on."""
    for d in devices:
        if all(d.supports(n, graph) for n in graph.nodes):
            return d
    return None


def is_busy(reference_ms: float, expected: float) -> bool:
    return reference_ms > BUSY_FACTOR * expected + BUSY_SLACK_MS


def guarded(
    run: Callable[[], dict[str, Any]],
    reference: Callable[[], float],
    expected: float | None,
    device: str,
) -> dict[str, Any]:
    """``run()``'s result with ``reference()`` (the whole model on ``device``) measured right
    before it and both figures added (``EVIDENCE``); measured again, up to ``ATTEMPTS`` times,
    while the reference is busy against ``expected``. The attempt of the lowest reference is
    kept, with ``busy: True`` when even that one was busy. Without ``expected``, ``run()``."""
    if expected is None:
        return run()
    tries: list[tuple[float, dict[str, Any]]] = []
    for _ in range(ATTEMPTS):
        ref = float(reference())
        tries.append((ref, run()))
        if not is_busy(ref, expected):
            break
    ref, got = min(tries, key=lambda t: t[0])
    out = {
        **got,
        "reference_device": device,
        "reference_ms": round(ref, 4),
        "expected_ms": round(expected, 4),
    }
    if is_busy(ref, expected):
        out["busy"] = True
    return out


def evidence(hit: Mapping[str, Any]) -> dict[str, Any]:
    """The busy check's keys of a measurement (none for one cached before the check)."""
    return {k: hit[k] for k in EVIDENCE if k in hit}


def busy_lines(problem: Problem, rerun: str = "rerun 'hetlab profile'") -> list[str]:
    """One line per calibration of ``problem`` that ran while the machine was busy: what
    the reference measured against the profile, and what to do about it (``rerun``)."""
    cal = problem.calibration
    parts: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[frozenset[str]] = set()
    for key, v in cal.pairs().items():
        pair = frozenset(key.split("->", 1))
        if v.get("busy") and pair not in seen:
            seen.add(pair)
            parts.append((key, v))
    conc = cal.doc.get("concurrent")
    if isinstance(conc, Mapping) and conc.get("busy"):
        parts.append((f"concurrent units ({conc.get('plan', '?')}'s plan)", conc))
    return [
        f"calibration of {what} ran while the machine was busy (whole model on "
        f"{v.get('reference_device', '?')} {float(v['reference_ms']):.1f} ms, expected "
        f"{float(v['expected_ms']):.1f}); its predictions may be high: {rerun} on an "
        "idle machine (the calibration was not cached, so it is measured again)"
        for what, v in parts
    ]
