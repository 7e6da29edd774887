"""Each backend declares its capabilities, and the executor follows the declaration alone:
a device of a kind it has never heard of is treated as what it declares."""

from __future__ import annotations

import numpy as np
import pytest

from hetlab.cost.problem import Problem
from hetlab.devices import Capabilities, OrtCpuDevice
from hetlab.devices.binding import bind
from hetlab.devices.capabilities import AHEAD_OF_TIME
from hetlab.devices.kernels.device import KernelDevice
from hetlab.devices.platform import whole_cpu
from hetlab.devices.replay import ReplayDevice, graph_from_problem
from hetlab.executor import Executor, RunError, run
from hetlab.schedulers.plan import Plan

PROBLEM = {
    "name": "pair",
    "devices": ["a", "b"],
    "nodes": [
        {"id": "u", "cost": {"a": 0.2, "b": 0.2}},
        {"id": "v", "cost": {"a": 0.2, "b": 0.2}},
        {"id": "w", "cost": {"a": 0.2, "b": 0.2}},
    ],
    "edges": [{"src": "u", "dst": "v", "bytes": 64}, {"src": "v", "dst": "w", "bytes": 64}],
}
SPLIT = {"u": "a", "v": "b", "w": "a"}


class Declared(ReplayDevice):
    """A replay device of an unknown kind that declares ``caps``; it notes the node-times
    switch each run finds."""

    def __init__(
        self, name: str, problem: Problem, caps: Capabilities, fail_on: tuple[str, ...] = ()
    ) -> None:
        super().__init__(name, problem, kind="mystery", fail_on=fail_on)
        self.caps = caps
        self.seen: list[bool] = []

    def capabilities(self) -> Capabilities:
        return self.caps

    def run(self, unit, inputs, node_times=None):
        self.seen.append(node_times)
        return super().run(unit, inputs)


def test_a_group_the_executor_has_no_runner_for_is_refused():
    with pytest.raises(ValueError, match="unknown queue runner"):
        Capabilities(runner="all at once")


def test_cpu_groups_are_host_devices_and_the_whole_cpu_declares_its_groups():
    cpu = OrtCpuDevice("cpu0", [0])
    caps = cpu.capabilities()
    assert not caps.accelerator and caps.runner is None and not caps.writes_inputs
    assert cpu.root is cpu and cpu.queue_measures() is None
    assert list(cpu.cores) == [0]
    whole = whole_cpu("cpu", [{"name": "cpu0", "cores": [0]}, {"name": "cpu1", "cores": [0]}])
    assert whole.capabilities().covers == ("cpu0", "cpu1") and caps.covers == ()


def test_the_opencl_device_declares_its_group_memory_and_queues(dev):
    from hetlab.devices.opencl import queues

    if dev.kind != "opencl":  # HETLAB_TEST_CUDA makes the fixture the CUDA device
        pytest.skip("the fixture is not an OpenCL device")
    caps = dev.capabilities()
    assert caps.accelerator and caps.runner == AHEAD_OF_TIME
    # what the kernel library reads of it is declared, with the defaults of KernelDevice
    assert isinstance(dev, KernelDevice) and not dev.launches_from_graph and dev.cores == ()
    assert caps.node_times and caps.writes_inputs and caps.share_key == "opencl_share"
    assert caps.unified_memory == dev.info()["host_unified_memory"]
    view = dev.queue_view(1)
    assert view.root is dev and dev.root is dev and view.queue_measures() is queues.MEASURES
    assert view.capabilities() == caps


def test_an_unknown_kind_is_run_as_what_it_declares():
    """Declared an accelerator with a share key: counted in that share, and its failure
    falls back to the host device; it is told to time its nodes only while a run asks for
    node timelines."""
    p = Problem.from_json(PROBLEM)
    g = graph_from_problem(p)
    caps = Capabilities(accelerator=True, node_times=True, share_key="opencl_share")
    b = Declared("b", p, caps)
    rep = run(g, SPLIT, [ReplayDevice("a", p), b], repeat=1, warmup=0)
    assert rep.to_json()["opencl_share"]["vertices"] == pytest.approx(1 / 3, abs=1e-4)
    ex = Executor(
        bind(Plan.of(SPLIT, g.topo_order()), g, [ReplayDevice("a", p), b]), node_times=True
    )
    try:
        ex.run_once({"input": np.zeros(1, np.float32)})
    finally:
        ex.close()
    assert b.seen == [False, True]
    plain = Declared("b", p, Capabilities())
    doc = run(g, SPLIT, [ReplayDevice("a", p), plain], repeat=1, warmup=0).to_json()
    assert "opencl_share" not in doc and plain.seen == [None]
    failing = Declared("b", p, caps, fail_on=("v",))
    rep = run(g, SPLIT, [ReplayDevice("a", p), failing], repeat=1, warmup=0)
    assert [(f["device"], f["to"]) for f in rep.fallbacks] == [("b", "a")]
    with pytest.raises(RunError, match="DeviceFailure"):  # a host device does not fall back
        run(g, SPLIT, [ReplayDevice("a", p), Declared("b", p, Capabilities(), ("v",))])
