"""The workbench's precision control: one Dropdown beside the devices, offering fp32 and every
precision a device there declares; disabled, with the reason as its tooltip, where only
fp32 exists. The devices profiled are the selected ones at that precision (those that do not
declare it stay at fp32, ``devices.precision_choice``); a plan records its precisions, so a
run runs at them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetlab.devices.precision import FP32, PRECISIONS
from hetlab.devices.precision_choice import at_precision
from hetlab.widgets.controls import disable

ONLY_FP32 = "only fp32: no device here declares another precision"


def offered(devices: Sequence[Any]) -> list[str]:
    """fp32 and the precisions some device of ``devices`` declares, in ``PRECISIONS`` order."""
    have = {p for d in devices for p in d.capabilities().precisions}
    return [p for p in PRECISIONS if p == FP32 or p in have]


def set_choices(dropdown: Any, devices: Sequence[Any]) -> None:
    """``dropdown``'s options for ``devices``; its value kept where still offered, else fp32;
    disabled with ``ONLY_FP32`` where fp32 is all there is."""
    options = offered(devices)
    keep = dropdown.value if dropdown.value in options else FP32
    dropdown.options = options
    dropdown.value = keep
    disable(dropdown, None if len(options) > 1 else ONLY_FP32)


def at_chosen(devices: Sequence[Any], dropdown: Any) -> list[Any]:
    """``devices`` at the precision ``dropdown`` shows."""
    return at_precision(list(devices), dropdown.value)
