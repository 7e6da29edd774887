"""Cells that measure this machine fall back to a shipped profile, and say so, when the
measurement gives no usable result."""

from __future__ import annotations

import pytest

from hetlab.cost.datasets import load_measured_profile
from hetlab.course import live, stretch_live
from hetlab.errors import HetlabError
from hetlab.graph import load
from hetlab.stretch.transform import Constraints, CostModel


def test_a_usable_measurement_is_kept():
    shipped = load_measured_profile("xeon-2core-pocl", "squeezenet")
    got, measured = live.measured_or_shipped(lambda: shipped, ["cpu0"], ("h100-16core", "lstm"))
    assert measured and got is shipped


@pytest.mark.parametrize(
    ("measure", "why"),
    [
        (lambda: (_ for _ in ()).throw(HetlabError("no device 'cpu0'")), "no device 'cpu0'"),
        (lambda: load_measured_profile("xeon-2core-pocl", "squeezenet"), "no device 'cpu7'"),
    ],
)
def test_no_usable_measurement_falls_back_and_says_so(measure, why, capsys):
    got, measured = live.measured_or_shipped(measure, ["cpu7"], ("h100-16core", "squeezenet"))
    out = capsys.readouterr().out
    assert not measured and got.name == load_measured_profile("h100-16core", "squeezenet").name
    assert why in out and "data/profiles/h100-16core/squeezenet" in out


def test_zero_costs_are_not_a_measurement():
    p = load_measured_profile("xeon-2core-pocl", "squeezenet")
    for n in p.nodes:
        n.cost["cpu0"] = 0.0
    assert "no time measured on cpu0" in live.unusable_costs(p, ["cpu0"])


def test_stretch_falls_back_when_a_fast_cpu_leaves_nothing_to_branch(monkeypatch, capsys):
    """On a CPU ten times faster than the 2-core VM, every segment is too short for eq. 4:
    the measured search finds nothing, and the shipped profile's throughput is used."""
    g = load("squeezenet")
    assert g.name == "squeezenet"  # the model's own name, not its cache file's

    def fast(g, devices, names, repeat=1):
        return CostModel(dict.fromkeys(names, 1e9), dict.fromkeys(names, 0.02))

    monkeypatch.setattr(stretch_live, "measure_costs", fast)
    found = stretch_live.stretch_search(g, {}, ["cpu0", "cpu1"], Constraints(alpha=0.1, beta=1.1))
    out = capsys.readouterr().out
    assert found.source.startswith("shipped") and found.pair == ["cpu0", "cpu1"]
    assert "can be branched" in out and "xeon-2core-pocl" in out
    assert found.best.predicted_ms > 0 and found.rows


def test_stretch_on_a_one_group_machine_uses_the_shipped_pair(capsys):
    found = stretch_live.stretch_search(
        load("squeezenet"), {}, ["cpu0"], Constraints(alpha=0.1, beta=1.1)
    )
    assert found.pair == ["cpu0", "cpu1"] and "1 CPU group" in capsys.readouterr().out
    assert not stretch_live.runnable_here(found.pair, {"cpu0": None})
