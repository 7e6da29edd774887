"""Chapter 10's helpers: the measured stream table is read from the committed benchmark file,
the stream devices follow the queue model, and the what-if crossover brackets ratio 1."""

from __future__ import annotations

import json

import pytest

from hetlab.cost.datasets import load_hope_profile
from hetlab.course import ch10
from hetlab.schedulers import schedule


@pytest.fixture(scope="module")
def doc():
    return ch10.stream_results()


def test_the_table_is_the_benchmark_file(doc):
    raw = json.loads((ch10.RESULTS / ch10.HOST / "gpu_queues.json").read_text())
    rows = {r["model"]: r for r in ch10.stream_table(doc)}
    assert set(rows) == {r["model"] for r in raw["rows"]}
    for r in raw["rows"]:
        row = rows[r["model"]]
        assert row["ilp (streams)"] == pytest.approx(r["ilp/streams"]["measured_ms"])
        assert row["ilp vs 1 stream"] == pytest.approx(
            r["cuda0"]["measured_ms"] / r["ilp/streams"]["measured_ms"]
        )
        torch = [r[k] for k in ("torch_eager_ms", "torch_graph_ms") if k in r]
        assert row["ilp vs torch"] == pytest.approx(min(torch) / r["ilp/streams"]["measured_ms"])


def test_stream_views_cost_the_slowdown_and_move_no_bytes(doc):
    p = ch10.streams_problem("googlenet", doc)
    slowdown = next(r for r in doc["rows"] if r["model"] == "googlenet")["streams"]["slowdown"]
    assert p.devices == ["cl0", "cl0.q1", "cl0.q2", "cl0.q3"]
    n = p.nodes[0]
    assert n.cost["cl0.q2"] == pytest.approx(n.cost["cl0"] * slowdown)
    heft = schedule(p, "heft")
    assert heft.makespan <= schedule(p, "single:cl0").makespan + 1e-9


def test_crossover_pays_near_equal_devices_only():
    phone = load_hope_profile("inception-v3-huawei_p40")
    c = ch10.crossover(phone, "cpu", "gpu", [0.01, 1.0, 1000.0])
    assert c["gains"][1] > 0.05 and c["gains"][0] < 0.05 and c["gains"][2] < 0.05
    assert c["pays_from"] == c["pays_until"] == 1.0
    assert ch10.speed_ratio(phone, "cpu", "gpu") == pytest.approx(c["measured_ratio"])


def test_the_pays_exercise_follows_the_queue_rule():
    want = ch10.pays_expected()
    for m, copies in want["copies"].items():
        assert want["pays"][m] == (copies >= 1.5)
