"""Fixtures shared by the device tests.

The op and fusion tests run twice on the OpenCL device: with the normal build and with the
bounds-checked build (``opencl/bounds.py``), where any kernel index outside its buffer fails
the test with the kernel, node and index. ``HETLAB_CL_BOUNDS=1`` checks every test.
"""

from __future__ import annotations

import pytest

BOUNDS_CHECKED = ("test_opencl_ops", "test_opencl_fusion")  # modules run under both builds


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if "dev" in metafunc.fixturenames and module in BOUNDS_CHECKED:
        metafunc.parametrize("bounds", [False, True], ids=["plain", "bounds"], scope="module")


@pytest.fixture(scope="module")
def bounds() -> bool:
    """Whether the module's OpenCL device builds bounds-checked kernels (parametrized above)."""
    return False


@pytest.fixture(scope="module")
def dev(bounds):
    """The first OpenCL device (PoCL here, the GPU where there is one); skips without one."""
    pytest.importorskip("pyopencl")
    from hetlab.devices.opencl import discover

    devs = discover()
    if not devs:
        pytest.skip("no OpenCL device found (install PoCL or a GPU driver)")
    if bounds:
        devs[0].bounds_check = True
    return devs[0]
