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
The reference misses load on fewer cores than the machine has, so the CPU time other
processes used while the reference and the run ran (``load.py``) is a second signal: more than
``OTHER_LOAD`` cores kept busy on average counts as busy too. The figures stay with the
measurement as its evidence (docs/decisions.md#busy-calibrations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetlab.calibrate import load
from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.graph.ir import OpGraph

BUSY_FACTOR = 1.25  # a reference run this much slower than the profile says: a busy machine
BUSY_SLACK_MS = 0.2  # what the executor adds around a whole-model run, allowed on top
ATTEMPTS = 2  # a busy calibration is measured once more
EVIDENCE = ("reference_device", "reference_ms", "expected_ms", "other_cores", "busy")


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


def is_busy(reference_ms: float, expected: float, other_cores: float | None = None) -> bool:
    """A reference too slow against ``expected``, or other processes keeping more than
    ``load.OTHER_LOAD`` cores busy meanwhile (no such figure: the reference alone decides)."""
    loaded = other_cores is not None and other_cores > load.OTHER_LOAD
    return loaded or reference_ms > BUSY_FACTOR * expected + BUSY_SLACK_MS


def guarded(
    run: Callable[[], dict[str, Any]],
    reference: Callable[[], float],
    expected: float | None,
    device: str,
) -> dict[str, Any]:
    """``run()``'s result with ``reference()`` (the whole model on ``device``) measured right
    before it, under ``load.measure_load``, and the figures added (``EVIDENCE``); measured
    again, up to ``ATTEMPTS`` times, while busy (``is_busy``). An idle attempt is kept, else
    the one of the lowest reference, with ``busy: True``. Without ``expected``, ``run()``."""
    if expected is None:
        return run()
    tries: list[tuple[bool, float, float | None, dict[str, Any]]] = []
    for _ in range(ATTEMPTS):
        (ref, got), other = load.measure_load(lambda: (float(reference()), run()))
        tries.append((is_busy(ref, expected, other), ref, other, got))
        if not tries[-1][0]:
            break
    busy, ref, other, got = min(tries, key=lambda t: (t[0], t[1]))
    out = {
        **got,
        "reference_device": device,
        "reference_ms": round(ref, 4),
        "expected_ms": round(expected, 4),
    }
    if other is not None:
        out["other_cores"] = other
    if busy:
        out["busy"] = True
    return out


def cached_or_guarded(
    cached: Any,
    put: Callable[[dict[str, Any]], None] | None,
    run: Callable[[], dict[str, Any]],
    reference: Callable[[], float],
    expected: float | None,
    device: str,
) -> dict[str, Any]:
    """A calibration run ``{"ms", ...}``: ``cached`` where it holds one and, when the run can
    be checked (``expected``), its evidence too; else ``guarded`` now and ``put`` unless
    busy. A run cached before the check has no evidence that the machine was idle, so it is
    measured again."""
    if isinstance(cached, (int, float)):  # cached as a bare number before the check
        cached = {"ms": float(cached)}
    usable = isinstance(cached, Mapping) and isinstance(cached.get("ms"), (int, float))
    if usable and (expected is None or "reference_ms" in cached):
        return dict(cached)
    hit = guarded(run, reference, expected, device)
    if put is not None and not hit.get("busy"):
        put(hit)
    return hit


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
        f"calibration of {what} ran while the machine was busy ({_why(v)}); its predictions "
        f"may be high: {rerun} on an idle machine (the calibration was not cached, so it is "
        "measured again)"
        for what, v in parts
    ]


def _why(v: Mapping[str, Any]) -> str:
    """The evidence of a busy calibration, as the user reads it."""
    why = (
        f"whole model on {v.get('reference_device', '?')} {float(v['reference_ms']):.1f} ms, "
        f"expected {float(v['expected_ms']):.1f}"
    )
    other = v.get("other_cores")
    if isinstance(other, (int, float)) and other > load.OTHER_LOAD:
        why += f"; other processes kept {float(other):.2f} cores busy"
    return why
