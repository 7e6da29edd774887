"""The executor's own cost of handing a tensor from one device to another, measured for real.

The calibrator (``profiling.calibrator``) times ``copy_out`` + ``copy_in``; a real cross-device edge
also ends a unit on one worker and starts one on another (a wake-up, a dispatch, a device
sync). It is the fallback of ``boundary.py`` for device pairs whose windows cannot alternate.
Measured on a two-node chain (``handoff.onnx``, a 1 KB tensor):
``handoff(a->b) = median(first@a, second@b) - (median(both@a) + median(both@b)) / 2`` (ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hetlab.devices.base import Device
from hetlab.executor.api import run
from hetlab.graph import load

MODEL = Path(__file__).with_name("handoff.onnx")


def measure_handoff(devices: Sequence[Device], repeat: int = 25) -> dict[str, float]:
    """``{"a->b": ms}`` for every ordered pair of ``devices`` (0 where nothing is measurable)."""

    g = load(str(MODEL))
    devs = {d.name: d for d in devices}
    base = {
        n: float(
            run(g, {"first": n, "second": n}, devs, repeat=repeat, warmup=3).latency_ms["median"]
        )
        for n in devs
    }
    out: dict[str, float] = {}
    for a in devs:
        for b in devs:
            if a != b:
                r = run(g, {"first": a, "second": b}, devs, repeat=repeat, warmup=3)
                out[f"{a}->{b}"] = round(
                    max(0.0, r.latency_ms["median"] - (base[a] + base[b]) / 2), 6
                )
    return out
