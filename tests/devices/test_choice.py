"""Devices by name with platform options as arguments (``hetlab.devices.choice``)."""

from __future__ import annotations

import pytest

from hetlab.devices import implied_queues, parse_queues, select
from hetlab.devices.choice import platform_doc
from hetlab.errors import HetlabError


def test_queues_parse_from_flags_and_refuse_what_is_not_a_count():
    assert parse_queues(["cuda0=4", "cl0=2,cl1=1"]) == {"cuda0": 4, "cl0": 2, "cl1": 1}
    assert parse_queues(None) == {}
    for bad in ("cuda0", "cuda0=x", "=3", "cuda0=0", "cuda0=17"):
        with pytest.raises(HetlabError):
            parse_queues(bad)


def test_a_view_name_implies_the_queues_of_its_device():
    assert implied_queues(["cpu0", "cuda0.q3", "cuda0.q1", "cl0.q1", "x.qa"]) == {
        "cuda0": 4,
        "cl0": 2,
    }


def test_the_options_go_into_every_accelerator_section_of_a_copy():
    doc = {"cpu": [{"name": "c", "cores": [0]}], "cuda": {"queues": {"cuda1": 2}}}
    out = platform_doc(doc, {"cuda0": 3}, "all")
    assert out["cuda"]["queues"] == {"cuda1": 2, "cuda0": 3}
    assert out["opencl"]["queues"] == {"cuda0": 3} and out["whole_cpu"] == "all"
    assert doc["cuda"]["queues"] == {"cuda1": 2}  # the caller's document is left alone
    assert platform_doc("file.toml") == "file.toml"


def test_select_adds_the_views_of_a_device_run_as_queues():
    from hetlab.devices import devices

    queued = [d.name for d in devices() if d.kind in ("opencl", "cuda")]
    if not queued:
        pytest.skip("no OpenCL or CUDA device here")
    name = queued[0]
    devs = select(f"cpu0,{name}", queues={name: 3})
    assert [d.name for d in devs] == ["cpu0", name, f"{name}.q1", f"{name}.q2"]
    assert [d.name for d in select([f"{name}.q2"])] == [f"{name}.q2"]


@pytest.mark.parametrize(
    ("names", "queues", "pattern"),
    [
        ("", None, "names no device"),
        ("cpu0,cpu0", None, "named twice"),
        ("cpu0,nowhere", None, "unknown device 'nowhere'"),
        ("cpu0", {"nowhere": 2}, "--queues names 'nowhere'"),
    ],
)
def test_bad_names_are_one_line(names, queues, pattern):
    with pytest.raises(HetlabError, match=pattern):
        select(names, queues=queues)
