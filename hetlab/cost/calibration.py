"""The problem's boundary calibration: what the executor adds at a unit boundary, kept apart
from the links.

The section is stored under the problem document's ``boundary`` key (spec §2): per ordered
device pair ``"a->b"`` the latency ``ms`` that a cross-device edge pays on top of its
transfer, and, where the calibration ran alternating windows, the host's cost per unit
measured on the same run (``per_unit_ms``); ``single_unit`` each device's one-unit cost;
``concurrent`` the surcharge of a unit that starts while another device runs. The links
hold what the link calibration measured and nothing else (``"links": "apart"``).

A problem written before the section was kept apart had each pair's ``ms`` added into its
links (``comm["a->b"].latency``, and each edge's own ``comm["a->b"]``, for the pair and for
the queue views of its devices). Such a document is read with ``ms`` taken off them again
(``unfold``), so both read to the same costs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

APART = "apart"  # the section's ``links`` value: the links do not hold its latency


@dataclass(frozen=True)
class Calibration:
    """A read-only view of the ``boundary`` section; ``with_part`` makes a changed copy."""

    doc: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, doc: Any) -> Calibration:
        return cls(copy.deepcopy(dict(doc)) if isinstance(doc, Mapping) else {})

    def __bool__(self) -> bool:
        return any(k != "links" for k in self.doc)

    def to_doc(self) -> dict[str, Any]:
        return {**copy.deepcopy(dict(self.doc)), "links": APART}

    def with_part(self, key: str, value: Any) -> Calibration:
        """A copy with ``doc[key]`` replaced (a pair ``"a->b"``, ``single_unit``, ...)."""
        return Calibration({**copy.deepcopy(dict(self.doc)), key: copy.deepcopy(value)})

    def pairs(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.doc.items() if "->" in k and isinstance(v, Mapping)}

    @cached_property
    def latency(self) -> dict[str, float]:
        """``"a->b"`` -> the boundary latency of a cross-device edge from a to b (ms)."""
        return {k: float(v.get("ms") or 0.0) for k, v in self.pairs().items()}

    @cached_property
    def priced_per_unit(self) -> frozenset[str]:
        """Pairs whose latency was fitted on the run that measured the per-unit cost: a
        prediction that charges each unit that cost does not charge their latency too."""
        got = self.pairs().items()
        return frozenset(k for k, v in got if v.get("ms") and v.get("per_unit_ms") is not None)

    @cached_property
    def per_unit(self) -> dict[str, float]:
        """Device -> the host's cost per unit (ms): the mean over the device's pairs, else
        its one-unit cost (``single_unit``); empty without a calibration."""
        got: dict[str, list[float]] = {}
        for key, v in self.pairs().items():
            if v.get("per_unit_ms") is not None:
                for d in key.split("->", 1):
                    got.setdefault(d, []).append(float(v["per_unit_ms"]))
        for d, v in self.single_units().items():
            if d not in got and v.get("per_unit_ms") is not None:
                got[d] = [float(v["per_unit_ms"])]
        return {d: sum(v) / len(v) for d, v in got.items()}

    def single_units(self) -> dict[str, Mapping[str, Any]]:
        got = self.doc.get("single_unit") or {}
        return {d: v for d, v in got.items() if isinstance(v, Mapping)}

    def excess_ms(self, device: str) -> float | None:
        """What a whole-model run on ``device`` measured above the profile (ms), if known."""
        v = self.single_units().get(device, {}).get("excess_ms")
        return None if v is None else float(v)

    @property
    def concurrent_ms(self) -> float:
        """The surcharge of a unit that starts while another device runs (ms; 0 if none)."""
        got = self.doc.get("concurrent")
        return float(got.get("per_unit_ms") or 0.0) if isinstance(got, Mapping) else 0.0


def families(extra: Mapping[str, Any]) -> dict[str, str]:
    """Each queue view and its device -> the device (``extra.queues``, spec §2)."""
    out: dict[str, str] = {}
    for root, q in (extra.get("queues") or {}).items():
        out[root] = root
        out.update(dict.fromkeys(q.get("views", []), root))
    return out


def latency_matrix(cal: Calibration, devices: list[str], fam: Mapping[str, str]) -> np.ndarray:
    """``[n_devices, n_devices]`` the boundary latency from device to device: a queue view
    has its device's (``fam``), and within one device's queues there is none."""
    out = np.zeros((len(devices), len(devices)))
    for i, a in enumerate(devices):
        for j, b in enumerate(devices):
            fa, fb = fam.get(a, a), fam.get(b, b)
            if fa != fb:
                out[i, j] = cal.latency.get(f"{fa}->{fb}", 0.0)
    return out


def unfold(doc: dict[str, Any]) -> None:
    """Take an old document's boundary latency off its links and edges, in place (see the
    module doc); a document whose section says ``"links": "apart"`` is left as it is."""
    section = doc.get("boundary")
    if not isinstance(section, Mapping) or section.get("links") == APART:
        return
    lat = Calibration.of(section).latency
    fam = families(doc)

    def off(key: str) -> float:
        a, _, b = key.partition("->")
        return lat.get(f"{fam.get(a, a)}->{fam.get(b, b)}", 0.0) if b else 0.0

    for key, link in (doc.get("comm") or {}).items():
        if isinstance(link, dict) and off(key):
            link["latency"] = round(max(0.0, float(link.get("latency") or 0.0) - off(key)), 6)
    for e in doc.get("edges") or []:
        for key, ms in (e.get("comm") or {}).items():
            if off(key) and isinstance(ms, (int, float)):
                e["comm"][key] = round(max(0.0, ms - off(key)), 6)
