"""CPU core groups served by onnxruntime (kind ``onnxruntime-cpu``).

A device is a group of cores. Each unit is the ONNX subgraph of its nodes, run as its own
``InferenceSession`` with ``intra_op_num_threads`` = the group's threads, sequential
execution, and its pool threads pinned to the group's cores through the
``session.intra_op_thread_affinities`` config entry (1-based logical processor ids, one
entry per pool thread; onnxruntime leaves the calling thread alone, so ``bind_thread``
pins the dispatching thread with ``os.sched_setaffinity``). With ``pin_pool`` off the pool
threads are not pinned one per core but start on the group's cores and stay among them.
Sessions are cached by node set. Where this CPU's onnxruntime saturates u8 x s8 integer
products, a session computes them exactly (``graph.onnx_exact``), as every other device does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from hetlab.devices.base import Device
from hetlab.devices.capabilities import Capabilities
from hetlab.devices.ort_refusals import ort_refuses
from hetlab.devices.topology import physical_cores
from hetlab.devices.unit import RunResult, Unit, node_time, now
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph
from hetlab.graph.onnx_exact import exact_source

KIND = "onnxruntime-cpu"
# Pool threads of a session spin between ops. "on" is onnxruntime's default; "stop" makes them
# stop when a run ends, leaving the cores to the next unit's pool; "off" never spins; "auto"
# (default) is "on" for a session over the whole model and "stop" for a part of one: a
# one-session plan runs as fast as a plain session only with "on", while with hundreds of
# sessions on a group (profiling, a 100-unit plan) "on" makes even the one-session run several
# times slower, so parked pools must not spin (docs/decisions.md#spin-modes).
SPIN = ("auto", "on", "stop", "off")


def affinity_string(cores: Sequence[int], threads: int) -> str:
    """onnxruntime's intra-op affinity config for ``threads`` threads on ``cores``: one
    entry per pool thread (the calling thread is thread 0 and pinned by ``bind_thread``),
    each pinned to one physical core (its hyperthread siblings, 1-based ids), cycling
    through the group's physical cores when threads outnumber them."""
    phys = physical_cores(list(cores))
    return ";".join(",".join(str(c + 1) for c in phys[i % len(phys)]) for i in range(1, threads))


class OrtCpuDevice(Device):
    """A group of CPU cores (``cores``: logical processor ids) driven by onnxruntime."""

    kind = KIND

    def __init__(
        self,
        name: str,
        cores: Sequence[int],
        threads: int | None = None,
        pin: bool = True,
        optimize: bool = True,
        spin: str = "auto",
        small_flops: int = 0,
        pin_pool: bool = True,
    ) -> None:
        if spin not in SPIN:
            raise HetlabError(
                f"CPU device {name!r}: spin must be one of {', '.join(SPIN)}, not {spin!r}"
            )
        self.spin = spin
        self.small_flops = int(small_flops)  # units below this many flops run on one thread
        self.name = name
        self.cores = sorted(int(c) for c in cores)
        if not self.cores:
            raise HetlabError(f"CPU device {name!r} has no cores")
        self.threads = int(threads or len(self.cores))
        self.pin = pin  # the dispatching thread is bound to ``cores`` (``bind_thread``)
        # pool threads pinned one per core; off, they run anywhere on ``cores``, as in a
        # plain session
        self.pin_pool = pin_pool
        self.optimize = optimize
        self._sessions: dict[tuple[frozenset[str], tuple[str, ...] | None, str], Any] = {}
        self._lock = threading.Lock()
        self._run_options: Any = None
        self.covers: list[str] = []  # a whole-CPU device's groups (platform.whole_cpu)

    def capabilities(self) -> Capabilities:
        return Capabilities(covers=tuple(self.covers))

    def info(self) -> dict[str, Any]:
        # lazy: onnxruntime is slow to import
        import onnxruntime as ort

        return {
            "name": self.name,
            "kind": self.kind,
            "threads": self.threads,
            "cores": self.cores,
            "spin": self.spin,
            "pool_pinned": self.pin and self.pin_pool,
            "onnxruntime": ort.__version__,
        }

    def supports(self, node: Node, graph: OpGraph) -> bool:
        return self.why_not(node, graph) is None

    def why_not(self, node: Node, graph: OpGraph) -> str | None:
        """None when an onnxruntime CPU session accepts ``node`` (see ``ort_refuses``)."""
        return ort_refuses(node, graph)

    # --- sessions --------------------------------------------------------------------
    def session_options(self, whole: bool = False, threads: int | None = None) -> Any:
        """Options of a unit's session; ``whole``: it covers the whole model (see SPIN)."""
        threads = threads or self.threads
        # lazy: onnxruntime is slow to import
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        if not self.optimize:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        spin = ("on" if whole else "stop") if self.spin == "auto" else self.spin
        if spin == "stop":
            so.add_session_config_entry("session.force_spinning_stop", "1")
        elif spin == "off":
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self.pin and self.pin_pool and threads > 1:
            so.add_session_config_entry(
                "session.intra_op_thread_affinities", affinity_string(self.cores, threads)
            )
        return so

    def prepare(
        self, graph: OpGraph, nodes: Sequence[str], outputs: Sequence[str] | None = None
    ) -> Unit:
        """One session over ``nodes``' subgraph (the model file itself when ``nodes`` is the
        whole model), cached by node set."""
        key = (
            frozenset(nodes),
            tuple(outputs) if outputs is not None else None,
            graph.model_path or graph.name,
        )
        with self._lock:
            sess = self._sessions.get(key)
            if sess is None:
                whole = len(key[0]) == len(graph.nodes) and outputs is None and graph.model_path
                if whole:
                    src: Any = str(graph.model_path)
                else:
                    # lazy: onnx is slow to import
                    from hetlab.graph.onnx_io import extract

                    src = extract(
                        graph, list(nodes), list(outputs) if outputs is not None else None
                    )
                try:
                    flops = sum(graph.node(v).flops for v in nodes)
                    small = not whole and flops < self.small_flops
                    so = self.session_options(whole=bool(whole), threads=1 if small else None)
                    sess = self._new_session(src, so)
                except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types
                    first = nodes[0] if nodes else "?"
                    raise HetlabError(
                        f"{self.name}: onnxruntime cannot build a session for "
                        f"{len(nodes)} node(s) from {first!r}: {str(e).splitlines()[0]}"
                    ) from None
                self._sessions[key] = sess
        ins = [i.name for i in sess.get_inputs()]
        outs = [o.name for o in sess.get_outputs()]
        return Unit(device=self.name, nodes=list(nodes), inputs=ins, outputs=outs, handle=sess)

    def _new_session(self, src: Any, so: Any) -> Any:
        """A session whose pool threads start on the device's cores. onnxruntime starts them
        from the calling thread, which may be bound to another group's cores; an unpinned
        pool would keep that affinity."""
        # lazy: onnxruntime is slow to import
        import onnxruntime as ort

        calling = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        if calling is not None and calling != set(self.cores):
            with suppress(OSError):  # cores this process may not use: leave it as it is
                os.sched_setaffinity(0, self.cores)
        try:  # integer products as ONNX defines them, where onnxruntime saturates them here
            return ort.InferenceSession(
                exact_source(src)[0], so, providers=["CPUExecutionProvider"]
            )
        finally:
            if calling is not None:
                os.sched_setaffinity(0, calling)

    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        sess = unit.handle
        feed = {t: inputs[t] for t in unit.inputs}
        if self._run_options is None:
            # lazy: onnxruntime is slow to import
            import onnxruntime as ort

            self._run_options = ort.RunOptions()
            self._run_options.log_severity_level = 3
        t0 = now()
        res = sess.run(unit.outputs, feed, self._run_options)
        t1 = now()
        nt = [node_time(self.name, unit.nodes[0], t0, t1)] if len(unit.nodes) == 1 else []
        return RunResult(
            outputs=dict(zip(unit.outputs, res, strict=False)), start=t0, finish=t1, node_times=nt
        )

    def copy_in(self, array: Any) -> Any:
        # not np.ascontiguousarray: it turns a 0-d array into a 1-d one
        return np.asarray(array, order="C")

    def bind_thread(self) -> None:
        """Pin the calling (dispatching) thread to this group's cores."""
        if self.pin and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, self.cores)

    def forget(self, units: Sequence[Unit] | None = None) -> None:
        """Drop cached sessions (of ``units``, or all); each keeps a pool of pinned threads
        while it lives. A session that profiling has run (``make_runner``'s IO binding) runs
        slower afterwards than a new one, so after profiling a plan gets new sessions
        (docs/decisions.md#session-residue)."""
        with self._lock:
            if units is None:
                self._sessions.clear()
                return
            handles = {id(u.handle) for u in units}
            for k in [k for k, v in self._sessions.items() if id(v) in handles]:
                del self._sessions[k]

    def close(self) -> None:
        self.forget()
