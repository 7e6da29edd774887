"""The waits between launches of one program spread over streams (``launch_deps``): run in
any order that keeps each stream's launches in order and every wait, a program computes
what the one-device order computes.

The check runs on the OpenCL device (PoCL here), whose builder makes the same programs as
the CUDA device's: the launches are put in a random order allowed by the waits, every
buffer of the unit is filled with NaN first (so a launch that reads a buffer before it is
written shows), and the outputs are compared with onnxruntime's.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from hetlab.devices.cuda.launch_deps import issue_order, launch_waits
from hetlab.devices.platform import devices as platform_devices
from hetlab.executor.check import random_inputs, reference_outputs
from hetlab.graph import load
from hetlab.zoo import path as zoo_path
from tests.executor.dags import random_topo_order

STREAMS = ("s0", "s1", "s2")


@pytest.fixture(scope="module")
def cl0():
    found = {d.name: d for d in platform_devices({"opencl": {}})}
    if "cl0" not in found:
        pytest.skip("no OpenCL device here")
    return found["cl0"]


def allowed_order(launches, waits, stream_of, rng) -> list[int]:
    """A random order of the launches that keeps each stream's order and every wait."""
    queues: dict[str, list[int]] = {}
    for i, L in enumerate(launches):
        queues.setdefault(stream_of[L.node], []).append(i)
    done: set[int] = set()
    order: list[int] = []
    while len(order) < len(launches):
        ready = [q for q in queues.values() if q and all(j in done for j in waits[q[0]])]
        assert ready, "the waits and the streams' orders deadlock"
        i = ready[rng.integers(len(ready))].pop(0)
        done.add(i)
        order.append(i)
    return order


def assert_computes_the_model(cl0, unit, graph, model: str, seed: int) -> None:
    """The unit, every buffer NaN-filled first (a launch that reads a buffer before it is
    written shows), gives onnxruntime's outputs."""
    for buf in unit.handle.buffers.values():
        cl0.write(buf, np.full(buf.shape, np.nan, dtype=buf.dtype))
    feed = random_inputs(graph, seed)
    got = cl0.run(unit, feed).outputs
    want = reference_outputs(str(zoo_path(model)), feed, graph.outputs)
    for name, ref in want.items():
        out = cl0.copy_out(got[name])
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * float(np.abs(ref).max()))


@pytest.mark.parametrize(
    ("model", "seed"), [("squeezenet", 0), ("squeezenet", 1), ("googlenet", 2)]
)
def test_any_order_the_waits_allow_computes_the_model(cl0, model, seed):
    graph = load(str(zoo_path(model)))
    rng = np.random.default_rng(seed)
    stream_of = {n.id: STREAMS[rng.integers(len(STREAMS))] for n in graph.nodes}
    unit = cl0.prepare(graph, [n.id for n in graph.nodes])
    h = unit.handle
    waits = launch_waits(graph, h.launches, h.fused, stream_of)
    for i, w in enumerate(waits):
        mine = stream_of[h.launches[i].node]
        assert all(j < i and stream_of[h.launches[j].node] != mine for j in w)
    assert any(waits), "a random spread over three streams leaves some launch waiting"
    h.launches[:] = [h.launches[i] for i in allowed_order(h.launches, waits, stream_of, rng)]
    assert_computes_the_model(cl0, unit, graph, model, seed)


@pytest.mark.parametrize(("model", "seed"), [("squeezenet", 3), ("googlenet", 4)])
def test_the_plans_order_issues_each_launch_after_what_it_reads(cl0, model, seed):
    """Launches issued in a plan's order (``issue_order``), each stream's in turn, compute
    the model; each wait names a launch issued before it."""
    graph = load(str(zoo_path(model)))
    rng = np.random.default_rng(seed)
    order = random_topo_order(graph, random.Random(seed))
    stream_of = {n.id: STREAMS[rng.integers(len(STREAMS))] for n in graph.nodes}
    unit = cl0.prepare(graph, [n.id for n in graph.nodes])
    h = unit.handle
    issue = issue_order(h.launches, h.fused, order)
    assert sorted(issue) == list(range(len(h.launches)))
    rank = {i: k for k, i in enumerate(issue)}
    waits = launch_waits(
        graph, h.launches, h.fused, stream_of, [rank[i] for i in range(len(h.launches))]
    )
    assert all(rank[j] < rank[i] for i, w in enumerate(waits) for j in w)
    h.launches[:] = [h.launches[i] for i in issue]
    assert_computes_the_model(cl0, unit, graph, model, seed)


def test_a_launch_waits_for_the_writers_of_an_elided_concat(cl0):
    """squeezenet's fire modules: both expand convs write into their Concat's buffer, so a
    reader of the Concat on another stream waits for both."""
    graph = load(str(zoo_path("squeezenet")))
    unit = cl0.prepare(graph, [n.id for n in graph.nodes])
    h = unit.handle
    launched = {L.node for L in h.launches}
    concat = next(n for n in graph.nodes if n.op_type == "Concat" and n.id not in launched)
    stream_of = {n.id: "s0" for n in graph.nodes}
    producers = {m.id for m in graph.nodes if set(m.outputs) & set(concat.inputs)}
    writers = {h.fused.get(p, p) for p in producers}
    for w in writers:
        stream_of[w] = "s1"
    waits = launch_waits(graph, h.launches, h.fused, stream_of)
    readers = [
        i for i, L in enumerate(h.launches) if concat.outputs[0] in graph.node(L.node).inputs
    ]
    assert readers
    last = {L.node: i for i, L in enumerate(h.launches)}
    assert {last[w] for w in writers} <= set(waits[readers[0]])


class _Stream:
    """A stream that logs what a capture records on it (CuPy's stream, as the capture uses it)."""

    def __init__(self, name: str, log: list, current: list) -> None:
        self.name, self.log, self.current = name, log, current

    def record(self):
        event = ("event", len(self.log))
        self.log.append(("record", self.name, event))
        return event

    def wait_event(self, event) -> None:
        self.log.append(("wait", self.name, event))

    def begin_capture(self) -> None:
        pass

    def end_capture(self) -> str:
        return "graph"

    def __enter__(self):
        self.current.append(self)

    def __exit__(self, *exc) -> None:
        self.current.pop()


def _happens_before(log: list) -> dict[int, set[int]]:
    """Per launch, the launches that precede it in the captured graph: a stream's own order
    plus the event waits."""
    before: dict[int, set[int]] = {}
    seen_on: dict[str, set[int]] = {}
    recorded: dict[tuple, set[int]] = {}
    for kind, stream, what in log:
        mine = seen_on.setdefault(stream, set())
        if kind == "record":
            recorded[what] = set(mine)
        elif kind == "wait":
            mine |= recorded[what]
        else:
            before[what] = set(mine)
            mine.add(what)
    return before


@pytest.mark.parametrize("seed", range(5))
def test_the_capture_puts_each_launch_after_the_launches_it_waits_for(seed):
    from types import SimpleNamespace

    from hetlab.devices.cuda.graph import GraphRunner

    rng = np.random.default_rng(seed)
    log: list = []
    current: list = []
    devs = {d: SimpleNamespace(stream=_Stream(d, log, current)) for d in ("g", "g.q1", "g.q2")}

    class Kernel:
        def __init__(self, i: int) -> None:
            self.i = i

        def launch(self, gsize, lsize) -> None:
            log.append(("launch", current[-1].name, self.i))

    n = 40
    stream_of = [list(devs)[rng.integers(3)] for _ in range(n)]
    issue = [int(i) for i in rng.permutation(n)]  # the plan's order, not the program's
    rank = {i: k for k, i in enumerate(issue)}
    waits = [
        sorted(
            j
            for j in range(n)
            if rank[j] < rank[i] and stream_of[j] != stream_of[i] and rng.random() < 0.1
        )
        for i in range(n)
    ]
    launches = [SimpleNamespace(kernel=Kernel(i), gsize=(1,), lsize=None) for i in range(n)]
    group = SimpleNamespace(
        stream=_Stream("origin", log, current),
        devs=devs,
        waits=waits,
        issue=issue,
        stream_of=stream_of,
        program=SimpleNamespace(launches=launches),
    )
    GraphRunner._capture(group)
    assert group.graph == "graph"
    before = _happens_before(log)
    assert sorted(before) == list(range(n))
    for i in range(n):
        assert set(waits[i]) <= before[i]
        same = {j for j in range(n) if rank[j] < rank[i] and stream_of[j] == stream_of[i]}
        assert same <= before[i]
