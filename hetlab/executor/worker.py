"""The thread that drives one device for the interpreter (``interpreter.Executor``):
waits for the units each unit depends on, receives tensors from the host (once per device),
runs the unit, sends what other devices need to the host, frees buffers after last use, and
re-runs a failed OpenCL unit on the fallback CPU device. A worker sees the run only through
the ``RunContext`` the executor hands it (the bound plan, its prepared units and routes, and
the ``RunState`` that is its live side: ``run_state.py``), and never the executor itself.
Times: ``now()`` seconds."""

from __future__ import annotations

import os
import queue
import threading
from typing import Any

import numpy as np

from hetlab.devices.base import is_accelerator
from hetlab.devices.bound import UnitSpec
from hetlab.devices.buffer_pool import BufferPool
from hetlab.devices.runner import QueueRunner, RunContext
from hetlab.devices.unit import now
from hetlab.executor.run_state import RunState
from hetlab.executor.trace import Event
from hetlab.executor.units import RunError

# thread id -> [its cores before the first executor pinned it, executors holding it]
_HELD: dict[int, list] = {}
_HELD_LOCK = threading.Lock()


def hold_thread() -> None:
    """Note the calling thread's cores before an executor pins it (the first holder's view)."""
    with _HELD_LOCK:
        entry = _HELD.setdefault(threading.get_ident(), [os.sched_getaffinity(0), 0])
        entry[1] += 1


def let_go_thread() -> None:
    """The last executor holding the calling thread gives it back its original cores."""
    with _HELD_LOCK:
        entry = _HELD.get(threading.get_ident())
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _HELD[threading.get_ident()]
            os.sched_setaffinity(0, entry[0])


class Worker:
    """The thread that drives one device: pinned once, then runs its units per job; or,
    when not ``threaded``, the caller's thread, pinned for the run and restored after."""

    def __init__(
        self, ctx: RunContext, device: str, specs: list[UnitSpec], threaded: bool = True
    ) -> None:
        self.ctx = ctx
        self.state: RunState = ctx.live  # the executor's live side of the run
        self.dev = ctx.plan.devices[device]
        self.specs = specs
        # the run's node timing, passed to devices that declare it (``Device.run``)
        caps = self.dev.capabilities()
        self.timing = {"node_times": ctx.node_times} if caps.node_times else {}
        self.jobs: queue.Queue = queue.Queue()
        self.bind_error: BaseException | None = None
        self.received: set[str] = set()
        self.pool = BufferPool(self.dev)  # received tensors' buffers, reused across runs
        self.writes = self.dev.capabilities().writes_inputs  # into ``pool``'s buffers
        self.thread: threading.Thread | None = None
        # (thread, its cores) once run_here has pinned the calling thread
        self.pinned: tuple[int, set[int]] | None = None
        if threaded:
            self.thread = threading.Thread(target=self._loop, name=f"hetlab-{device}", daemon=True)
            self.thread.start()

    def run_here(self) -> None:
        """Run this device's queue on the calling thread. The thread is pinned at its first
        run and stays pinned until ``release`` (the executor's ``close``): re-pinning it for
        every run moves it between cores, and a sub-millisecond model then runs from cold
        caches (docs/decisions.md#pin-once). Pinned again only if something else (another
        executor on this thread) changed its cores in between."""
        try:
            if not hasattr(os, "sched_getaffinity"):
                self.dev.bind_thread()
            elif self.pinned is None:
                hold_thread()
                self.pinned = (threading.get_ident(), set())  # held, even if pinning fails
                self.dev.bind_thread()
                self.pinned = (threading.get_ident(), os.sched_getaffinity(0))
            elif os.sched_getaffinity(0) != self.pinned[1]:
                self.dev.bind_thread()
            self._run_all()
        except BaseException as e:  # noqa: BLE001 - Ctrl-C too: others stop, run_once re-raises
            self.state.fail(self.specs[0], e)

    def _loop(self) -> None:
        try:
            self.dev.bind_thread()
        except BaseException as e:  # noqa: BLE001 - reported at the first run
            self.bind_error = e
        while True:
            finished = self.jobs.get()
            if finished is None:
                return
            try:
                if self.bind_error is not None:
                    raise RunError(f"cannot pin the thread of {self.dev.name}: {self.bind_error}")
                self._run_all()
            except BaseException as e:  # noqa: BLE001 - recorded, re-raised by run_once
                self.state.fail(self.specs[0], e)
            finally:
                finished.put(self.dev.name)

    def _run_all(self) -> None:
        st = self.state
        sequential = self.ctx.plan.sequential
        self.local: dict[str, Any] = {}
        for s in self.specs:
            for p in s.deps:
                st.done[p].wait()
            if sequential:
                st.wait_turn(s)
            if st.abort is not None:
                return
            try:
                if self.dev.name in st.failed:
                    self._run_fallback(s)
                else:
                    self._run_unit(s)
            except BaseException as e:  # noqa: BLE001 - recorded, re-raised by run_once
                if (
                    is_accelerator(self.dev)
                    and st.fallback_device
                    and self.dev.name not in st.failed
                ):
                    st.failed[self.dev.name] = f"{type(e).__name__}: {e}"
                    try:
                        self._run_fallback(s)
                    except BaseException as e2:  # noqa: BLE001 - recorded, re-raised by run_once
                        st.fail(s, e2)
                        return
                else:
                    st.fail(s, e)
                    return
            st.done[s.index].set()
            if sequential:
                st.end_turn()

    def _run_unit(self, s: UnitSpec) -> None:
        st, dev, routes = self.state, self.dev, self.ctx.routes
        local = self.local
        unit = self.ctx.units[s.index]
        recv = routes.recv[s.index]
        if recv:
            a = now()
            local.update(self._receive(recv))
            self._copies("recv", recv, [st.host[t] for t in recv], a, s.index)
        res = dev.run(unit, {t: local[t] for t in unit.inputs}, **self.timing)
        local.update(res.outputs)
        st.events.append(
            Event(
                "unit",
                dev.name,
                s.label,
                st.ms(res.start),
                st.ms(res.finish),
                {"unit": s.index, "nodes": len(s.nodes)},
            )
        )
        if res.node_times is not None:  # read after the run's clock stops (may be lazy)
            st.raw_node_times[s.index] = res.node_times
        publish = routes.publish[s.index]
        if publish:
            a = now()
            arrays = dev.copy_out_all([local[t] for t in publish])
            self._copies("send", publish, arrays, a, s.index)
            for t, array in zip(publish, arrays, strict=True):
                st.host[t] = array
                st.published(t)
        for t in routes.free_after[s.index]:
            buf = local.pop(t, None)
            if buf is not None and t in self.received and t not in self.pool:
                dev.free(buf)

    def _receive(self, names: list[str]) -> dict[str, Any]:
        """Host -> this device. Devices that declare ``writes_inputs`` (OpenCL, CUDA) keep one
        buffer per received tensor across runs (allocated once, overwritten each run, freed at
        ``close``), all written by one ``write_all``; others get ``copy_in`` and ``free``
        after the tensor's last use here. Unit outputs belong to the unit (a device may reuse
        them next run): never freed here."""
        self.received.update(names)
        host = self.state.host
        if not self.writes:
            return {t: self.dev.copy_in(host[t]) for t in names}
        out, pairs = {}, []
        for t in names:
            array = np.asarray(host[t])
            out[t], _ = self.pool.get(t, array.shape, str(array.dtype))
            pairs.append((out[t], array))
        self.dev.write_all(pairs)
        return out

    def _copies(self, kind: str, names: list[str], arrays: list[Any], a: float, unit: int) -> None:
        """One ``kind`` event per tensor of a batch of copies that ran from ``a`` to now,
        the batch's interval split over its tensors by their bytes."""
        st, b = self.state, now()
        sizes = [max(int(getattr(x, "nbytes", 0)), 1) for x in arrays]
        total, done = sum(sizes), 0
        for t, n in zip(names, sizes, strict=True):
            t0 = a + (b - a) * done / total
            done += n
            t1 = a + (b - a) * done / total
            st.events.append(Event(kind, self.dev.name, t, st.ms(t0), st.ms(t1), {"unit": unit}))

    def release(self) -> None:
        """Free the receive buffers; give the calling thread its cores back (``run_here``)."""
        if self.pinned is not None and self.pinned[0] == threading.get_ident():
            let_go_thread()
        self.pinned = None
        self.pool.release()

    def _run_fallback(self, s: UnitSpec) -> None:
        """Run ``s`` on the fallback device from host copies (its own device has failed)."""
        st = self.state
        local = self.local
        cpu = self.ctx.plan.devices[st.fallback_device]
        unit = st.fallback_unit(s)
        inputs = {}
        for t in unit.inputs:
            if t in st.host:
                inputs[t] = st.host[t]
            elif t in local:
                inputs[t] = self.dev.copy_out(local[t])
            else:
                raise RunError(f"tensor {t!r} is lost with failed device {self.dev.name}")
        res = cpu.run(unit, {t: cpu.copy_in(inputs[t]) for t in unit.inputs})
        for t, v in res.outputs.items():
            st.host[t] = cpu.copy_out(v)
            st.published(t)
        st.events.append(
            Event(
                "unit",
                self.dev.name,
                f"{s.label} -> {cpu.name}",
                st.ms(res.start),
                st.ms(res.finish),
                {"unit": s.index, "fallback": cpu.name},
            )
        )
        for t in self.ctx.routes.free_after[s.index]:
            local.pop(t, None)
        st.fallbacks.setdefault(
            s.index,
            {
                "unit": s.index,
                "device": self.dev.name,
                "to": cpu.name,
                "nodes": len(s.nodes),
                "first": s.nodes[0],
                "error": st.failed.get(self.dev.name, ""),
            },
        )


class QueueWorker(Worker):
    """The thread that runs one device's units and its queue views' through the queue runner
    its device offers
    (``devices/runner.py``: an OpenCL context's units enqueued ahead of time, a CUDA device's
    units as one graph)."""

    def __init__(self, ctx: RunContext, runner: QueueRunner, threaded: bool = True) -> None:
        self.runner = runner
        super().__init__(ctx, runner.names[0], runner.specs, threaded=threaded)

    def _run_all(self) -> None:
        try:
            self.runner.run()
        except BaseException as e:  # noqa: BLE001 - recorded, re-raised by run_once
            self.state.fail(self.specs[0], e)
