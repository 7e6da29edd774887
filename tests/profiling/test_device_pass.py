"""One device's pass in rounds: a unit lives as long as its timer may run."""

from __future__ import annotations

import gc
import weakref
from types import SimpleNamespace

from hetlab.devices.capabilities import Capabilities
from hetlab.devices.unit import Unit
from hetlab.graph import load
from hetlab.profiling import device_pass
from hetlab.profiling.measure import PROBE_CHAIN, Budget


class _Store:
    def __init__(self) -> None:
        self.data: dict[tuple[str, str], object] = {}

    def get(self, sec: str, key: str) -> object:
        return self.data.get((sec, key))

    def put(self, sec: str, key: str, value: object) -> None:
        self.data[sec, key] = value


def test_a_unit_outlives_every_round_of_a_timer_that_holds_only_raw_pointers(monkeypatch):
    """A CUDA timer replays a captured graph that points into the unit's buffers without
    holding them: the pass itself must keep each unit alive until its last round."""
    graph = load(str(PROBE_CHAIN))
    nodes = [n.id for n in graph.nodes]
    alive: list[weakref.ref] = []
    dead_runs: list[int] = []

    def runner(device, unit, arrays, written=False):
        ref = weakref.ref(unit)
        alive.append(ref)

        def once() -> float:
            gc.collect(0)  # the young generation: a full collection per run is slow in a big heap
            if ref() is None:
                dead_runs.append(1)
            return 1e-6

        return once, "raw pointers"

    monkeypatch.setattr(device_pass, "make_runner", runner)
    dev = SimpleNamespace(
        name="gpu",
        prepare=lambda g, ns: Unit("gpu", list(ns), [], [], object()),
        capabilities=Capabilities,
    )
    items = [("ops", f"sig{i}", [v]) for i, v in enumerate(nodes)]
    items.append(("windows", "sig0", nodes[:2]))  # one signature in two sections: two units
    values = SimpleNamespace(get=lambda names: {})
    out = device_pass.measure_device(
        dev, _Store(), items, graph, values, Budget(repeat=4, warmup=1), 3, lambda *a: None
    )
    assert not dead_runs
    assert len(alive) == len(items)
    assert all(out[sec, s] is not None for sec, s, _ in items)
    gc.collect()
    assert all(ref() is None for ref in alive)  # and none is kept after the pass
