"""Fixtures shared by the device tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def dev():
    """The first OpenCL device (PoCL here, the GPU where there is one); skips without one."""
    pytest.importorskip("pyopencl")
    from hetlab.devices.opencl import discover

    devs = discover()
    if not devs:
        pytest.skip("no OpenCL device found (install PoCL or a GPU driver)")
    return devs[0]
