"""The workbench's precision control: fp32 alone is a disabled Dropdown with its reason; a
device that declares tf32 makes it a choice, and the devices profiled are at the choice."""

from __future__ import annotations

import ipywidgets as W

from hetlab.widgets import precision
from tests.precision_fakes import Tf32Device
from tests.profiling.cost_helpers import OrtTestDevice


def _dropdown() -> W.Dropdown:
    return W.Dropdown(options=["fp32"], value="fp32")


def test_only_fp32_is_disabled_with_its_reason():
    d = _dropdown()
    precision.set_choices(d, [OrtTestDevice("cpu0")])
    assert list(d.options) == ["fp32"] and d.disabled and d.tooltip == precision.ONLY_FP32


def test_a_device_that_declares_tf32_makes_it_a_choice_applied_to_the_devices():
    d = _dropdown()
    devs = [OrtTestDevice("cpu0"), Tf32Device("gpu")]
    precision.set_choices(d, devs)
    assert list(d.options) == ["fp32", "tf32"] and not d.disabled and d.tooltip == ""
    d.value = "tf32"
    assert [x.precision for x in precision.at_chosen(devs, d)] == ["fp32", "tf32"]
    precision.set_choices(d, devs)  # the same devices again keep the choice
    assert d.value == "tf32"
    precision.set_choices(d, devs[:1])  # no longer offered: back to fp32
    assert d.value == "fp32" and d.disabled


def test_the_workbench_shows_the_control_beside_the_devices():
    from hetlab.devices.replay import graph_from_problem, replay_devices
    from hetlab.widgets import Workbench
    from tests.tiny import tiny_problem

    p = tiny_problem()
    wb = Workbench(model=graph_from_problem(p), devices=replay_devices(p))
    assert wb.precision_select.disabled and wb.precision_select.value == "fp32"
    assert [d.precision for d in wb._chosen_devices()] == ["fp32"] * len(wb.device_select.value)
