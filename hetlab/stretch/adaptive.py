"""Adaptive execution (NN-Stretch §6-7.4 "adapting to dynamic workloads"): run a
plan repeatedly, watch each device's measured busy time (the sum of its units' intervals)
against its calibrated baseline, and when a device slows past ``threshold`` x baseline (and
``relative`` x the other devices' median slowdown: a machine-wide slowdown is no reason to
move) for ``patience`` consecutive runs (contention from another application), re-plan without it:
reschedule ``problem`` with its costs inflated by the observed slowdown (``algo``), or, with
no problem or when the reschedule still uses it, move its nodes to the remaining device with
the least baseline busy time. Every ``probe_every`` runs in the degraded plan the original
plan runs once as a probe; when the device's slowdown is back under ``recover``, switch back.

The profile is measured in place: each device's ms per FLOP over the first ``calibrate``
runs (median busy time / FLOPs placed on it); a run's slowdown on a device is its busy
time over (that rate x the FLOPs the current plan puts there), so the degraded plan is
watched too (if the device it moved to is contended as well, it goes back). A probe also
switches back when the original plan's latency beats the degraded plan's recent median.
A switch that does not pay (the degraded plan's first ``patience`` runs are no faster than
the original's last ``patience``) is undone, and switching away is then held off for
``probe_every`` x 1, 2, 4... runs (back-off against flapping on a machine-wide slowdown).
Times in ms. The trace (per-run latency, plan, devices, slowdowns, switch points;
``adaptive_trace``) is JSON for ``viz.adaptive``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hetlab.cost.problem import Problem
from hetlab.devices.base import Device
from hetlab.devices.binding import bind
from hetlab.errors import HetlabError
from hetlab.executor.interpreter import Executor, Repetition
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.base import schedule
from hetlab.schedulers.plan import Plan
from hetlab.stretch.adaptive_trace import AdaptiveConfig, AdaptiveTrace, RunPoint


def busy_ms(rep: Repetition) -> dict[str, float]:
    """Per device: summed unit intervals of one repetition (ms)."""
    out: dict[str, float] = {}
    for ev in rep.events:
        if ev.kind == "unit":
            out[ev.device] = out.get(ev.device, 0.0) + (ev.finish - ev.start)
    return out


def without(
    graph: OpGraph,
    device_of: Mapping[str, str],
    slow: str,
    devices: Mapping[str, Device],
    baseline: Mapping[str, float],
    problem: Any = None,
    slowdown: float = 2.0,
    algo: str = "heft",
) -> dict[str, str]:
    """A placement avoiding ``slow``: ``problem`` rescheduled with its costs x ``slowdown`` if
    that avoids it, else its nodes moved to the least busy other device of the plan that runs them."""
    if problem is not None and slow in problem.devices:
        doc = problem.to_json()
        for n in doc["nodes"]:
            if n["cost"].get(slow) is not None:
                n["cost"][slow] = float(n["cost"][slow]) * slowdown
        dof = schedule(Problem.from_json(doc), algo).device_of
        if slow not in dof.values() and set(dof) == set(device_of):
            return dof
    used = set(device_of.values())
    others = sorted(
        (d for d in devices if d != slow and d in used), key=lambda d: baseline.get(d, 0.0)
    )
    if not others:
        raise HetlabError(f"adaptive: no device left besides {slow}")
    out = dict(device_of)
    for n in graph.nodes:
        if out[n.id] == slow:
            ok = [d for d in others if devices[d].supports(n, graph)]
            if not ok:
                return dict(device_of)  # nowhere to go: stay
            out[n.id] = ok[0]
    return out


class _Loop:
    """The state of one adaptive loop: an executor per placement, the calibrated ms per FLOP
    of each device, and where the switching stands (see the module doc)."""

    def __init__(
        self,
        graph: OpGraph,
        plan: Plan,
        devmap: dict[str, Device],
        inputs: Mapping[str, Any],
        cfg: AdaptiveConfig,
        problem: Any,
    ) -> None:
        self.graph, self.plan, self.devmap, self.inputs = graph, plan, devmap, inputs
        self.device_of = plan.device_of
        self.cfg, self.problem = cfg, problem
        self.trace = AdaptiveTrace(cfg)
        self.execs: dict[str, Executor] = {}
        self.placements: dict[str, dict[str, str]] = {"base": self.device_of}
        self.flops = {n.id: max(1.0, float(n.flops)) for n in graph.nodes}
        self.calib: dict[str, list[float]] = {}
        self.rate: dict[str, float] = {}  # ms per FLOP, per device, from the calibration runs
        self.current, self.slow_dev, self.strikes, self.since_switch = "base", "", 0, 0
        self.last_worst = ""
        self.recent: list[float] = []  # latencies of the degraded plan since the last switch
        self.base_lat: list[float] = []  # latencies of the original plan (not probes)
        self.before, self.hold_until, self.backoff = float("inf"), 0, 1

    def executor(self, label: str) -> Executor:
        if label not in self.execs:
            dof = self.placements[label]
            plan = self.plan if label == "base" else Plan.of(dof, self.graph.topo_order())
            ex = Executor(bind(plan, self.graph, self.devmap))
            ex.prepare()
            ex.run_once(self.inputs)  # warm-up, unmeasured
            self.execs[label] = ex
        return self.execs[label]

    def load(self, label: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for v, d in self.placements[label].items():
            out[d] = out.get(d, 0.0) + self.flops[v]
        return out

    def close(self) -> None:
        for ex in self.execs.values():
            ex.close()

    def step(self, i: int, adaptive: bool) -> Repetition:
        """Run ``i``: on the current plan, or on the original one as a probe."""
        cfg = self.cfg
        since = self.since_switch
        probe = self.current != "base" and since > 0 and since % cfg.probe_every == 0
        label = "base" if probe else self.current
        rep = self.executor(label).run_once(self.inputs)
        busy = busy_ms(rep)
        if i < cfg.calibrate:
            self.calibrate(i, busy)
        slow: dict[str, float] = {}
        if self.rate:
            mean_rate = statistics.mean(self.rate.values())
            for d, fl in self.load(label).items():
                if d in busy:
                    slow[d] = round(busy[d] / (self.rate.get(d, mean_rate) * fl), 3)
        point = RunPoint(i, round(rep.wall_ms, 4), label, sorted(busy), slow, probe)
        self.trace.runs.append(point)
        self.since_switch += 1
        if adaptive and self.rate:
            self.adapt(i, rep, label, probe, slow, point)
        return rep

    def calibrate(self, i: int, busy: dict[str, float]) -> None:
        for d, ms in busy.items():
            self.calib.setdefault(d, []).append(ms)
        if i == self.cfg.calibrate - 1:
            self.trace.baseline_ms = {d: float(statistics.median(v)) for d, v in self.calib.items()}
            base_load = self.load("base")
            self.rate = {
                d: ms / base_load[d] for d, ms in self.trace.baseline_ms.items() if base_load.get(d)
            }

    def adapt(
        self,
        i: int,
        rep: Repetition,
        label: str,
        probe: bool,
        slow: dict[str, float],
        point: RunPoint,
    ) -> None:
        cfg = self.cfg
        worst = max(slow, key=lambda d: slow[d]) if slow else ""
        rest = [x for d, x in slow.items() if d != worst]
        contended = (
            bool(worst)
            and slow[worst] > cfg.threshold
            and (
                label != "base" or not rest or slow[worst] >= cfg.relative * statistics.median(rest)
            )
        )
        self.strikes = (
            self.strikes + 1 if contended and worst == self.last_worst else int(contended)
        )
        self.last_worst = worst
        if label == "base" and not probe:
            self.base_lat.append(rep.wall_ms)
        if label == "base" and not probe and self.strikes >= cfg.patience and i >= self.hold_until:
            self.switch_away(i, worst, slow, point)
        elif label != "base":
            self.maybe_give_up(i, rep, worst, slow, point)
        elif probe:
            self.maybe_switch_back(i, rep, slow, point)

    def switch_away(self, i: int, worst: str, slow: dict[str, float], point: RunPoint) -> None:
        cfg = self.cfg
        key = f"without:{worst}"
        if key not in self.placements:
            self.placements[key] = without(
                self.graph,
                self.device_of,
                worst,
                self.devmap,
                self.trace.baseline_ms,
                self.problem,
                slow[worst],
                cfg.algo,
            )
        if self.placements[key] != self.placements["base"]:
            self.trace.switch(i + 1, "base", key, worst, slow[worst])
            point.note = f"{worst} {slow[worst]:.2f}x slower than its profile: switch away"
            self.before = statistics.median(self.base_lat[-cfg.patience :])
            self.current, self.slow_dev, self.strikes, self.since_switch = key, worst, 0, 0
            self.recent = []

    def maybe_give_up(
        self, i: int, rep: Repetition, worst: str, slow: dict[str, float], point: RunPoint
    ) -> None:
        """Back to the original plan when the new one moved onto a contended device, or is no
        faster; the next try waits twice as long."""
        cfg = self.cfg
        self.recent.append(rep.wall_ms)
        no_gain = len(self.recent) == cfg.patience and statistics.median(self.recent) >= self.before
        if self.strikes >= cfg.patience or no_gain:
            why = "no faster than before" if no_gain else f"{worst} slow too ({slow[worst]:.2f}x)"
            self.trace.switch(i + 1, self.current, "base", worst, slow.get(worst))
            point.note = (
                f"{why}: back to the original plan, hold {cfg.probe_every * self.backoff} runs"
            )
            self.hold_until = i + 1 + cfg.probe_every * self.backoff
            self.backoff *= 2
            self.current, self.strikes, self.since_switch = "base", 0, 0

    def maybe_switch_back(
        self, i: int, rep: Repetition, slow: dict[str, float], point: RunPoint
    ) -> None:
        """After a probe of the original plan: back to it when the slow device recovered."""
        cfg, slow_dev = self.cfg, self.slow_dev
        better = bool(self.recent) and rep.wall_ms < statistics.median(self.recent)
        if slow.get(slow_dev, cfg.recover) < cfg.recover or better:
            why = "recovered" if not better else "faster again"
            self.trace.switch(i + 1, self.current, "base", slow_dev, slow.get(slow_dev))
            point.note = f"probe: {slow_dev} {why} ({slow.get(slow_dev, 0):.2f}x): switch back"
            self.current, self.strikes, self.since_switch, self.backoff = "base", 0, 0, 1


def run_adaptive(
    graph: OpGraph,
    plan: Plan,
    devices: Sequence[Device] | Mapping[str, Device],
    inputs: Mapping[str, Any],
    repeat: int,
    config: AdaptiveConfig | None = None,
    problem: Any = None,
    adaptive: bool = True,
    before_run: Callable[[int, AdaptiveTrace], None] | None = None,
) -> tuple[AdaptiveTrace, list[Repetition]]:
    """Run ``graph`` by ``plan`` ``repeat`` times (after one warm-up), adapting as in the module doc; with
    ``adaptive=False`` the same loop never switches (the baseline to compare against).
    ``before_run(i, trace)`` is called before run ``i`` (to start/stop interference)."""
    cfg = config or AdaptiveConfig()
    devmap = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
    loop = _Loop(graph, plan, devmap, inputs, cfg, problem)
    reps: list[Repetition] = []
    try:
        loop.executor("base")
        for i in range(repeat):
            if before_run is not None:
                before_run(i, loop.trace)
            reps.append(loop.step(i, adaptive))
    finally:
        loop.close()
    return loop.trace, reps
