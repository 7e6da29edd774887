"""The interpreter over a plan (issue 6; HOPE §4.2-4.3), in the style of torch.fx's
``Interpreter.run -> run_node``, with one pinned worker thread per device.

- Each device's units form a queue in plan order; its worker waits on a per-unit event of
  every unit on another device it depends on, so a finished unit wakes its successors on
  their own devices (HOPE's per-operator ``executed`` flag, one per unit here).
- A tensor that changes device is copied to the host once by its producer (``send``) and
  into each receiving device once by the first unit there that reads it (``recv``, in the
  receiver's stream): tensor caching. Buffers are freed after their last use on a device.
- Units are prepared once (sessions, programs) and run many times.
- If a unit fails on an OpenCL device, it and the rest of that device's units run on the
  first other device (the first CPU group) from host copies; the report lists them.
Times: ``now()`` seconds on devices, ms from the repetition's start in events.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from hetlab.devices.base import Device, Unit, now
from hetlab.errors import HetlabError
from hetlab.executor.trace import Event
from hetlab.executor.units import UnitSpec, build_units, check_plan
from hetlab.graph.ir import OpGraph

HOST = "host"


class RunError(HetlabError):
    """A unit failed during a run (not a bad input): names the unit, its device and nodes."""

    exit_code = 1


@dataclass
class Rep:
    """One repetition's result: wall time (ms), model outputs on the host, measured events."""

    wall_ms: float
    outputs: dict[str, Any]
    events: list[Event]
    node_times: dict[int, list[tuple[str, float, float]]] = field(default_factory=dict)


class Executor:
    """Runs ``graph`` placed by ``device_of`` (node -> device name) on ``devices``.

    ``order``: the plan's global order (default: topological); ``sequential``: one unit at
    a time in global order (spec §3's sequential plans). Call ``prepare`` once (``run_once``
    does it if needed), ``run_once`` many times, ``close`` at the end."""

    def __init__(self, graph: OpGraph, device_of: Mapping[str, str],
                 devices: Sequence[Device] | Mapping[str, Device],
                 order: Sequence[str] | None = None, sequential: bool = False) -> None:  # fmt: skip
        self.graph = graph
        self.devices = dict(devices) if isinstance(devices, Mapping) else {d.name: d for d in devices}
        check_plan(graph, device_of, list(self.devices), order)
        self.device_of = dict(device_of)
        for n in graph.nodes:
            dev = self.devices[self.device_of[n.id]]
            if not dev.supports(n, graph):
                why = dev.why_not(n, graph) or f"{n.op_type} is not supported"
                raise HetlabError(f"plan places {n.id!r} ({n.op_type}) on {dev.name}, which cannot run it: {why}")
        self.specs: list[UnitSpec] = build_units(graph, self.device_of, order)
        self.sequential = sequential
        self.units: list[Unit] = []
        self.failed: dict[str, str] = {}  # device -> first error
        self.fallbacks: dict[int, dict[str, Any]] = {}
        self._fb_units: dict[int, Unit] = {}
        self._fb_lock = threading.Lock()
        self._workers: dict[str, _Worker] = {}
        others = [d.name for d in self.devices.values() if d.kind != "opencl"]
        self.fallback_device = others[0] if others else None

    # --- preparing ----------------------------------------------------------------
    def prepare(self) -> None:
        if self.units:
            return
        for s in self.specs:
            try:
                self.units.append(self.devices[s.device].prepare(self.graph, s.nodes))
            except HetlabError:
                raise
            except Exception as e:
                raise RunError(f"preparing {s.label} failed: {type(e).__name__}: {e}") from e
        self._route()
        used = [d for d in self.devices if any(s.device == d for s in self.specs)]
        for d in used:
            self._workers[d] = _Worker(self, d, [s for s in self.specs if s.device == d])

    def _route(self) -> None:
        """Where each unit input comes from, which outputs go to the host, when to free."""
        g = self.graph
        producer: dict[str, int] = {}
        for s, u in zip(self.specs, self.units):
            for t in u.outputs:
                producer[t] = s.index
        n = len(self.specs)
        self.recv: list[list[str]] = [[] for _ in range(n)]
        self.publish: list[list[str]] = [[] for _ in range(n)]
        self.free_after: list[list[str]] = [[] for _ in range(n)]
        self.const_inputs: set[str] = set()
        have: dict[tuple[str, str], int] = {}  # (device, tensor) -> unit that brought/made it
        last: dict[tuple[str, str], int] = {}
        published: set[str] = set()
        for s, u in zip(self.specs, self.units):
            for t in u.inputs:
                p = producer.get(t)
                if p is None and t not in g.inputs:
                    if t not in g.consts:
                        raise RunError(f"{s.label} reads {t!r}, which no unit produces and is no model input")
                    self.const_inputs.add(t)  # a device that wants weights fed like inputs
                src = HOST if p is None else self.specs[p].device
                if src != s.device and (s.device, t) not in have:
                    self.recv[s.index].append(t)
                    have[s.device, t] = s.index
                    if p is not None and t not in published:
                        self.publish[p].append(t)
                        published.add(t)
                last[s.device, t] = s.index
            for t in u.outputs:
                have[s.device, t] = s.index
                last.setdefault((s.device, t), s.index)
                if t in g.outputs and t not in published:
                    self.publish[s.index].append(t)
                    published.add(t)
        missing = [t for t in g.outputs if t not in published]
        if missing:
            raise RunError(f"no unit produces model output {missing[0]!r}")
        self.consts: dict[str, Any] = {}
        if self.const_inputs:
            from hetlab.graph.onnx_io import weights

            w = weights(g)
            self.consts = {t: w[t] for t in self.const_inputs}
        for (d, t), i in last.items():
            self.free_after[i].append(t)

    # --- running ------------------------------------------------------------------
    def run_once(self, inputs: Mapping[str, Any]) -> Rep:
        """One inference: every worker runs its queue; returns outputs and the timeline."""
        self.prepare()
        absent = [t for t in self.graph.inputs if t not in inputs]
        if absent:
            raise HetlabError(f"missing model input {absent[0]!r}")
        self._done = [threading.Event() for _ in self.specs]
        self._abort: tuple[UnitSpec, BaseException] | None = None
        self._turn = 0
        self._turn_cv = threading.Condition()
        self.host: dict[str, Any] = {**self.consts, **inputs}
        self._events: list[Event] = []
        self._node_times: dict[int, list[tuple[str, float, float]]] = {}
        finished: queue.Queue = queue.Queue()
        self._t0 = t0 = now()
        for w in self._workers.values():
            w.jobs.put(finished)
        for _ in self._workers:
            finished.get()
        wall = (now() - t0) * 1000.0
        if self._abort is not None:
            s, e = self._abort
            if isinstance(e, HetlabError) and not isinstance(e, RunError):
                raise e
            raise RunError(f"{s.label} failed: {type(e).__name__}: {e}") from e
        outs = {t: self.host[t] for t in self.graph.outputs}
        events = sorted(self._events, key=lambda ev: (ev.start, ev.device))
        return Rep(wall, outs, events, self._node_times)

    def ms(self, t: float) -> float:
        return (t - self._t0) * 1000.0

    def fail(self, spec: UnitSpec, e: BaseException) -> None:
        if self._abort is None:
            self._abort = (spec, e)
        for ev in self._done:
            ev.set()
        with self._turn_cv:
            self._turn_cv.notify_all()

    def wait_turn(self, spec: UnitSpec) -> None:
        with self._turn_cv:
            while self._turn != spec.index and self._abort is None:
                self._turn_cv.wait()

    def end_turn(self) -> None:
        with self._turn_cv:
            self._turn += 1
            self._turn_cv.notify_all()

    def fallback_unit(self, spec: UnitSpec) -> Unit:
        with self._fb_lock:
            if spec.index not in self._fb_units:
                dev = self.devices[self.fallback_device]
                self._fb_units[spec.index] = dev.prepare(self.graph, spec.nodes)
            return self._fb_units[spec.index]

    def close(self) -> None:
        for w in self._workers.values():
            w.jobs.put(None)
        for w in self._workers.values():
            w.thread.join(timeout=5)
            w.release()
        self._workers.clear()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Worker:
    """The thread that drives one device: pinned once, then runs its units per job."""

    def __init__(self, ex: Executor, device: str, specs: list[UnitSpec]) -> None:
        self.ex = ex
        self.dev = ex.devices[device]
        self.specs = specs
        self.jobs: queue.Queue = queue.Queue()
        self.bind_error: BaseException | None = None
        self.received: set[str] = set()
        self.pool: dict[str, Any] = {}  # tensor -> buffer reused across runs (OpenCL)
        self.thread = threading.Thread(target=self._loop, name=f"hetlab-{device}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            self.dev.bind_thread()
        except BaseException as e:  # reported at the first run
            self.bind_error = e
        while True:
            finished = self.jobs.get()
            if finished is None:
                return
            try:
                if self.bind_error is not None:
                    raise RunError(f"cannot pin the thread of {self.dev.name}: {self.bind_error}")
                self._run_all()
            except BaseException as e:
                self.ex.fail(self.specs[0], e)
            finally:
                finished.put(self.dev.name)

    def _run_all(self) -> None:
        ex = self.ex
        self.local: dict[str, Any] = {}
        for s in self.specs:
            for p in s.deps:
                ex._done[p].wait()
            if ex.sequential:
                ex.wait_turn(s)
            if ex._abort is not None:
                return
            try:
                if self.dev.name in ex.failed:
                    self._run_fallback(s)
                else:
                    self._run_unit(s)
            except BaseException as e:
                if self.dev.kind == "opencl" and ex.fallback_device and self.dev.name not in ex.failed:
                    ex.failed[self.dev.name] = f"{type(e).__name__}: {e}"
                    try:
                        self._run_fallback(s)
                    except BaseException as e2:
                        ex.fail(s, e2)
                        return
                else:
                    ex.fail(s, e)
                    return
            ex._done[s.index].set()
            if ex.sequential:
                ex.end_turn()

    def _run_unit(self, s: UnitSpec) -> None:
        ex, dev = self.ex, self.dev
        local = self.local
        unit = ex.units[s.index]
        for t in ex.recv[s.index]:
            a = now()
            local[t] = self._receive(t, ex.host[t])
            ex._events.append(Event("recv", dev.name, t, ex.ms(a), ex.ms(now()), {"unit": s.index}))
        res = dev.run(unit, {t: local[t] for t in unit.inputs})
        local.update(res.outputs)
        ex._events.append(Event("unit", dev.name, s.label, ex.ms(res.start), ex.ms(res.finish),
                                {"unit": s.index, "nodes": len(s.nodes)}))  # fmt: skip
        if res.node_times:
            ex._node_times[s.index] = [(nt.node, ex.ms(nt.start), ex.ms(nt.finish)) for nt in res.node_times]
        for t in ex.publish[s.index]:
            a = now()
            ex.host[t] = dev.copy_out(local[t])
            ex._events.append(Event("send", dev.name, t, ex.ms(a), ex.ms(now()), {"unit": s.index}))
        for t in ex.free_after[s.index]:
            buf = local.pop(t, None)
            if buf is not None and t in self.received and t not in self.pool:
                dev.free(buf)

    def _receive(self, t: str, array: Any) -> Any:
        """Host -> this device. Devices with ``write(buf, array)`` (OpenCL) keep one buffer
        per received tensor across runs (allocated once, overwritten each run, freed at
        ``close``); others get ``copy_in`` and ``free`` after the tensor's last use here.
        Unit outputs belong to the unit (a device may reuse them next run): never freed here."""
        self.received.add(t)
        write = getattr(self.dev, "write", None)
        if write is None:
            return self.dev.copy_in(array)
        array = np.asarray(array)
        shape = tuple(array.shape)
        buf = self.pool.get(t)
        if buf is None or tuple(getattr(buf, "shape", ())) != shape or getattr(buf, "dtype", None) != str(array.dtype):
            if buf is not None:
                self.dev.free(buf)
            buf = self.pool[t] = self.dev.alloc(shape, str(array.dtype))
        write(buf, array)
        return buf

    def release(self) -> None:
        for buf in self.pool.values():
            try:
                self.dev.free(buf)
            except Exception:  # noqa: BLE001 - a lost device cannot free; nothing to do
                pass
        self.pool.clear()

    def _run_fallback(self, s: UnitSpec) -> None:
        """Run ``s`` on the fallback device from host copies (its own device has failed)."""
        ex = self.ex
        local = self.local
        cpu = ex.devices[ex.fallback_device]
        unit = ex.fallback_unit(s)
        inputs = {}
        for t in unit.inputs:
            if t in ex.host:
                inputs[t] = ex.host[t]
            elif t in local:
                inputs[t] = self.dev.copy_out(local[t])
            else:
                raise RunError(f"tensor {t!r} is lost with failed device {self.dev.name}")
        res = cpu.run(unit, {t: cpu.copy_in(inputs[t]) for t in unit.inputs})
        for t, v in res.outputs.items():
            ex.host[t] = cpu.copy_out(v)
        ex._events.append(Event("unit", self.dev.name, f"{s.label} -> {cpu.name}", ex.ms(res.start),
                                ex.ms(res.finish), {"unit": s.index, "fallback": cpu.name}))  # fmt: skip
        for t in ex.free_after[s.index]:
            local.pop(t, None)
        ex.fallbacks.setdefault(s.index, {
            "unit": s.index, "device": self.dev.name, "to": cpu.name, "nodes": len(s.nodes),
            "first": s.nodes[0], "error": ex.failed.get(self.dev.name, "")})  # fmt: skip
