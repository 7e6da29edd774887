"""Something that ran from ``start`` to ``finish`` on a device, and the chain of such
intervals that set when the last one ended. Shared by every layer, like ``errors``: a
device's events, a measured run's units, a plan's predicted nodes and a figure's bars are
intervals, and their critical path is found one way."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Interval:
    """``kind``: what ran ('unit', a dispatch; 'node', one node; 'send' and 'recv', a copy
    to or from the host; 'copy', a figure's transfer on a link); ``name`` what it is called
    on a timeline; ``args`` the rest (the unit's index, the node's id, a copy's ends). Times
    in one clock's units (ms from a run's start, a problem's units for a plan, or seconds on
    the device clock for a device's own node times)."""

    kind: str
    device: str
    name: str
    start: float
    finish: float
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> float:
        return self.finish - self.start


def critical_path(
    spans: Mapping[K, Interval], waits: Mapping[K, Sequence[K]], tol: float = 0.0
) -> list[K]:
    """The keys of the chain of ``spans`` that ends last, first key first. From the span
    that finishes last, each step goes to what let it start: one of the spans it ``waits``
    for or the span before it on its device, whichever finished at its start (within
    ``tol``; a span it waits for first, in ``waits``' order), else the one that finished
    last before it. The walk stops at a span that starts at 0 or has nothing before it."""
    if not spans:
        return []
    by_dev: dict[str, list[tuple[float, int, K]]] = {}
    for i, (k, sp) in enumerate(spans.items()):
        by_dev.setdefault(sp.device, []).append((sp.finish, i, k))
    for lst in by_dev.values():
        lst.sort(key=lambda x: (x[0], x[1]))
    k = max(spans, key=lambda x: spans[x].finish)
    chain, seen = [k], {k}
    while spans[k].start > tol:
        s = spans[k].start
        cands = [u for u in waits.get(k, ()) if u in spans and u not in seen]
        cands = [u for u in cands if spans[u].finish <= s + tol]
        lst = by_dev[spans[k].device]
        j = bisect_right([f for f, _, _ in lst], s + tol)
        while j > 0 and lst[j - 1][2] in seen:
            j -= 1
        if j > 0:
            cands.append(lst[j - 1][2])
        if not cands:
            break
        tight = [u for u in cands if abs(spans[u].finish - s) <= tol]
        k = tight[0] if tight else max(cands, key=lambda u: spans[u].finish)
        chain.append(k)
        seen.add(k)
    return chain[::-1]
