"""A one-device run that leaves nodes on another device says how many, which ops, and how
many tensors crossed (``executor.left_behind``)."""

from __future__ import annotations

from hetlab.executor.left_behind import left_behind, left_behind_line
from hetlab.schedulers.plan import Plan
from tests.tiny import tiny_graph


def test_the_nodes_left_behind_are_counted_by_op_with_each_crossing_tensor_once():
    g = tiny_graph()
    ids = [n.id for n in g.nodes]
    device_of = dict.fromkeys(ids, "gpu")
    assert left_behind(g, Plan.of(device_of), "gpu") is None
    device_of[ids[-1]] = "cpu"  # the head: every tensor it reads crosses
    doc = left_behind(g, Plan.of(device_of), "gpu")
    head = g.node(ids[-1])
    assert doc["nodes"] == 1 and doc["of"] == len(ids) and doc["to"] == "cpu"
    assert doc["ops"] == {head.op_type: 1}
    reads = {t for e in g.edges if e.dst == head.id for t in e.tensors}
    assert doc["crossing"] == len(reads)
    line = left_behind_line(doc, "tiny")
    assert f"1 of {len(ids)} nodes" in line and "hetlab recommend tiny --devices gpu,cpu" in line
