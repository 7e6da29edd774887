"""Timing one prepared unit on one device: warm-up, adaptive repeats, robust statistics.

Two timers, both on ``hetlab.devices.unit.now`` (seconds), reported in ms:
- an onnxruntime session (a unit whose handle has ``run_with_iobinding``) runs through an
  IO binding: inputs bound once, outputs left in onnxruntime's arena. That is how a node
  runs inside a whole-model session; ``session.run`` would add a copy of every output
  into a fresh numpy array and the Python feed conversion, which a whole-model run does not pay.
- a device with a timer of its own (``Device.profile_timer``; CUDA's runs a plan as a
  captured graph): the unit captured once, each run one graph launch, timed on the host;
- any other device: ``device.run(unit, buffers)`` on inputs copied in once; the unit's own
  ``start``/``finish`` give the interval; outputs stay the device's (a unit may reuse them).

Per-call overhead (the dispatch a whole-model run pays once, not once per node) is measured
on ``probe.onnx`` (one Relu on one float) less the per-node slope of ``probe_chain.onnx`` (16
Relus), with the same timer, and subtracted by the profiler (``probe_overhead``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.cost.stats import robust_stats
from hetlab.devices.base import Device
from hetlab.devices.unit import Unit, now

# the probe models ship with the cost package, where the executor's calibration reads them too
PROBE_MODEL = Path(__file__).parents[1] / "cost" / "probe.onnx"
PROBE_CHAIN = Path(__file__).parents[1] / "cost" / "probe_chain.onnx"
# The clock of the onnxruntime timer (seconds). Wall time by default; ``time.thread_time``
# (the calling thread's CPU time, blind to preemption by other processes) is for checking the
# method on a busy machine with one-thread devices (``python -m benchmarks.profiler --clock
# thread``).
CLOCK: Callable[[], float] = now
CHEAP_MORE = 5  # repeat multiplier for units whose ``repeat`` runs cost little (plan_repeats)


@dataclass
class Budget:
    """``repeat``: the most timed runs (``CHEAP_MORE`` x for very cheap units); ``min_repeat``: the fewest; ``seconds``: the time a
    measurement may take (slow ops get fewer repeats); ``warmup``: untimed first runs."""

    repeat: int = 20
    warmup: int = 2
    min_repeat: int = 5
    seconds: float = 0.25

    def key(self) -> dict[str, Any]:
        return {
            "repeat": self.repeat,
            "warmup": self.warmup,
            "min_repeat": self.min_repeat,
            "seconds": self.seconds,
        }


def make_runner(
    device: Device, unit: Unit, arrays: dict[str, np.ndarray], written: bool = False
) -> tuple[Callable[[], float], str]:
    """A function that runs ``unit`` once and returns its time (s), and the timer's name.
    ``written``: on a device that ``writes_inputs`` (OpenCL), write the inputs again before
    each run (not timed), as the executor does before it runs a unit, so that the unit is
    timed as the executor runs it (docs/decisions.md#inputs-written)."""
    sess = unit.handle
    if hasattr(sess, "run_with_iobinding") and hasattr(sess, "io_binding"):
        b = sess.io_binding()
        for t in unit.inputs:
            b.bind_cpu_input(t, np.require(arrays[t], requirements="C"))  # keeps 0-d arrays 0-d
        for t in unit.outputs:
            b.bind_output(t)
        run_ob = sess.run_with_iobinding
        clock = CLOCK

        def once_ort() -> float:
            t0 = clock()
            run_ob(b)
            return clock() - t0

        return once_ort, "iobinding"
    bufs = {t: device.copy_in(arrays[t]) for t in unit.inputs}
    own = device.profile_timer(unit, bufs)
    if own is not None:
        return own
    write = device.write if written and device.capabilities().writes_inputs else None

    def once() -> float:  # outputs may be the unit's own buffers (OpenCL): never free them
        if write is not None:
            for t in unit.inputs:
                write(bufs[t], arrays[t])
        r = device.run(unit, bufs)
        return r.finish - r.start

    return once, "device.run" if write is None else "device.run after write"


def plan_repeats(warm_s: list[float], budget: Budget) -> int:
    """Timed runs for a unit whose warm-up runs took ``warm_s`` seconds: ``budget.repeat``,
    cut so the measurement takes about ``budget.seconds``, but at least ``budget.min_repeat``;
    ``CHEAP_MORE`` times ``budget.repeat`` when even that takes under a quarter of
    ``budget.seconds``: a few samples of a microsecond op rank it poorly from profile to
    profile (docs/decisions.md#profile-defaults)."""
    est = min(warm_s) if warm_s else 0.0
    if est <= 0:
        return max(1, budget.repeat)
    n = max(1, min(budget.repeat, max(budget.min_repeat, int(budget.seconds / est))))
    if n == budget.repeat and est * n * CHEAP_MORE <= budget.seconds / 4:
        n *= CHEAP_MORE  # microsecond ops: noisiest for their cost, and more samples are cheap
    return n


def summarize(samples_ms: list[float]) -> dict[str, Any]:
    """``robust_stats`` rounded to ns (ms values)."""
    st = robust_stats(samples_ms)
    return {
        k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in st.items()
    }


def time_unit(run_once: Callable[[], float], budget: Budget) -> dict[str, Any]:
    """Warm up, pick the number of repeats from the warm-up's speed, run, and summarize (ms)."""
    n = plan_repeats([run_once() for _ in range(max(1, budget.warmup))], budget)
    return summarize([run_once() * 1e3 for _ in range(n)])


def probe_overhead(device: Device, budget: Budget) -> float:
    """Per-call overhead of ``device`` in ms: what an isolated call pays beyond the marginal
    cost of one more node inside a unit. That is the median time of a one-element Relu unit
    (``probe.onnx``) minus the per-node slope of a 16-Relu chain (``probe_chain.onnx``): on a
    GPU each kernel of a sequence still pays its enqueue, which must stay in the node's cost.
    0 when the device cannot run the probe."""
    from hetlab.graph.onnx_io import load

    def median_ms(path: Path) -> float:
        g = load(str(path))
        unit = device.prepare(g, [n.id for n in g.nodes])
        run_once, _ = make_runner(device, unit, {"x": np.ones(1, np.float32)})
        b = Budget(repeat=max(50, budget.repeat), warmup=5, min_repeat=50, seconds=0.2)
        return float(time_unit(run_once, b)["median"])

    try:
        g = load(str(PROBE_MODEL))
        if not device.supports(g.nodes[0], g):
            return 0.0
        one = median_ms(PROBE_MODEL)
        slope = max(0.0, (median_ms(PROBE_CHAIN) - one) / 15)
        return max(0.0, one - slope)
    except Exception:  # noqa: BLE001 - a device without a probe simply has no correction
        return 0.0
