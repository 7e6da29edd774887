"""The run of an OpenCL unit with control flow: its handle (``Composite``), and the kernel
segments of one run (``Pending``), enqueued on one in-order queue and waited for together.

A unit with ``If`` (``if_runner.py``) is a chain of kernel segments and ``If`` steps, and a
taken branch is another chain. A segment's launches read only buffers that earlier segments
on the same in-order queue write, so none needs the host to wait for the one before: the
host waits only where it reads a value (an ``If`` condition, or an int entering a branch,
which picks the branch and its build) and once at the end of the run. ``Pending`` holds the
segments enqueued so far, waits when asked (counted in ``waits``), and gives their node
times afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hetlab.devices.opencl.stamps import run_node_times
from hetlab.devices.unit import LazyNodeTimes, RunResult, Unit, node_time, now
from hetlab.errors import HetlabError
from hetlab.timeline import Interval


class Pending:
    """The segments one run has enqueued on ``device.queue_for(timed)``; see module doc."""

    def __init__(self, device: Any, timed: bool) -> None:
        self.device = device
        self.timed = timed
        # per segment: its handle, the time before its first enqueue, its launches' events
        # (where timed) and the end of the wait that covered it (None until then)
        self.runs: list[list[Any]] = []
        self.waits = 0  # host waits for the queue in this run

    def enqueue(self, unit: Unit, env: dict[str, Any]) -> dict[str, Any]:
        """Enqueue kernel unit ``unit`` on its inputs from ``env``; its outputs (buffers
        that hold once the queue is waited for)."""
        t0, events = self.device.enqueue_unit(unit, {t: env[t] for t in unit.inputs}, self.timed)
        self.runs.append([unit.handle, t0, events, None])
        h = unit.handle
        return {t: h.result(t) for t in unit.outputs}

    def wait(self) -> float:
        """Wait for every launch enqueued so far (no wait when none is outstanding); the
        time the queue was found finished."""
        if self.runs and self.runs[-1][3] is None:
            self.device.queue_for(self.timed).finish()
            return self._finished()
        return now()

    def read(self, *values: Any) -> list[np.ndarray]:
        """``values`` on the host: host arrays as they are, device buffers by reads on the
        launches' queue and one wait for them all, which is also the wait for every launch
        enqueued before them (the queue is in order)."""
        q = self.device.queue_for(self.timed)
        outs: list[np.ndarray] = []
        reads = 0
        for v in values:
            if not hasattr(v, "buf"):
                outs.append(np.asarray(v))
                continue
            outs.append(np.empty(v.shape, dtype=v.dtype))
            if outs[-1].size:
                self.device.cl.enqueue_copy(q, outs[-1], v.buf, is_blocking=False)
                reads += 1
        if reads or (self.runs and self.runs[-1][3] is None):
            q.finish()
            self._finished()
        return outs

    def _finished(self) -> float:
        """Note a host wait on the queue, after which every launch enqueued has finished;
        its end."""
        self.waits += 1
        end = now()
        for r in self.runs:
            if r[3] is None:
                r[3] = end
                if r[0].checks is not None:  # a bounds-checked build (bounds.py)
                    r[0].checks.verify()
        return end

    def node_times(self, first: int, stop: int) -> list[Interval]:
        """The node times of segments ``first`` to ``stop`` (exclusive), timed runs only."""
        if not self.timed:
            return []
        name = self.device.name
        out: list[Interval] = []
        for h, t0, events, t1 in self.runs[first:stop]:
            out.extend(run_node_times(h, events, t0, t1, name))
        return out

    def span(self, node: str, start: float, first: int, stop: int) -> Interval:
        """The interval of a node whose work is segments ``first`` to ``stop`` (an ``If``'s
        taken branch), enqueued from ``start``: its launches' first start to last end where
        timed, else from ``start`` to the wait that covered its last segment."""
        if first == stop:
            return node_time(self.device.name, node, start, start)
        times = self.node_times(first, stop)
        if times:
            return node_time(
                self.device.name, node, min(i.start for i in times), max(i.finish for i in times)
            )
        return node_time(self.device.name, node, start, self.runs[stop - 1][3])


@dataclass
class Composite:
    """The handle of an OpenCL unit with control flow: kernel segments and ``IfStep`` s."""

    steps: list[tuple[str, Any]]
    node_ids: list[str]
    waits: int = 0  # host waits for the queue in the last run (conditions read, the end)

    def executed_nodes(self) -> dict[str, int]:
        """Nodes of the taken If bodies in the last run, recursively: ``device`` (kernels
        and nested Ifs, run every time), ``shape`` and ``folded`` (host nodes resolved once
        per input signature: shape arithmetic, constant folding)."""
        out = {"device": 0, "shape": 0, "folded": 0}
        for kind, s in self.steps:
            if kind == "if":
                for k, v in s.executed.items():
                    out[k] = out.get(k, 0) + v
        return out

    def run(self, device: Any, unit: Unit, inputs: dict[str, Any], timed: bool) -> RunResult:
        """Enqueue every segment and taken branch on one queue; the host waits where it
        reads a condition and once at the end (``Pending``)."""
        env = dict(inputs)
        pending = Pending(device, timed)
        t0 = now()
        parts: list[tuple[str | None, float, int, int]] = []  # (If node, start, segments)
        for kind, s in self.steps:
            a, first = now(), len(pending.runs)
            if kind == "kernels":
                env.update(pending.enqueue(s, env))
            else:
                env.update(s.run(env, pending))
            parts.append((None if kind == "kernels" else s.node_id, a, first, len(pending.runs)))
        t1 = pending.wait()
        self.waits = pending.waits
        missing = [t for t in unit.outputs if t not in env]
        if missing:
            raise HetlabError(f"OpenCL unit from {unit.nodes[0]} did not produce {missing[0]!r}")

        def times() -> list[Interval]:
            out: list[Interval] = []
            for node, a, first, stop in parts:
                if node is None:
                    out.extend(pending.node_times(first, stop))
                else:
                    out.append(pending.span(node, a, first, stop))
            return out

        return RunResult(
            outputs={t: env[t] for t in unit.outputs},
            start=t0,
            finish=t1,
            node_times=LazyNodeTimes(times),
        )
