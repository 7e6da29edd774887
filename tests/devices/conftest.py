"""Fixtures shared by the device tests.

The op and fusion tests run twice on the OpenCL device: with the normal build and with the
bounds-checked build (``opencl/bounds.py``), where any kernel index outside its buffer fails
the test with the kernel, node and index. ``HETLAB_CL_BOUNDS=1`` checks every test.
"""

from __future__ import annotations

import os

import pytest

BOUNDS_CHECKED = (
    "test_opencl_ops",
    "test_opencl_fusion",
    "test_opencl_int_ops",
    "test_opencl_quant",
    "test_opencl_integer",
    "test_opencl_bytes",
    "test_opencl_scatter",
    "test_opencl_fewer_launches",
    "test_opencl_operand_views",
    "test_opencl_ml",
    "test_opencl_more_ops",
    "test_opencl_half",
    "test_opencl_half_ops",
    "test_opencl_contrib",
    "test_opencl_rnn",
    "test_opencl_views",
    "test_opencl_narrow",
    "test_opencl_prelu_epilogue",
    "test_opencl_depthwise",
    "test_tensor_cores",
)  # modules run under both builds


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
    """The first OpenCL device (PoCL here, the GPU where there is one), or the first whose
    platform or device name contains ``HETLAB_TEST_OPENCL`` (e.g. ``Portable`` for PoCL on a
    many-core host, where a kernel that depends on its thread count shows); skips without
    one. With ``HETLAB_TEST_CUDA=1`` the same tests run the kernels on the first CUDA device
    instead (compiled by NVRTC)."""
    if os.environ.get("HETLAB_TEST_CUDA"):
        return _cuda_device(bounds)
    pytest.importorskip("pyopencl")
    from hetlab.devices.opencl import discover

    want = os.environ.get("HETLAB_TEST_OPENCL", "")
    devs = [d for d in discover() if want in f"{d.info().get('platform')} {d.info().get('device')}"]
    if not devs:
        pytest.skip(f"no OpenCL device found{f' matching {want!r}' if want else ''}")
    if bounds:
        devs[0].bounds_check = True
    return devs[0]


def _cuda_device(bounds: bool):
    """The first CUDA device for the kernel tests; skips without one."""
    from hetlab.devices.cuda import discover

    if bounds:
        pytest.skip("the bounds-checked build is OpenCL's (compute-sanitizer checks CUDA)")
    found = discover()
    if not found:
        pytest.skip("no CUDA device (CuPy and an NVIDIA GPU)")
    return found[0]


SHAPES = {"cpu_shape": (True, False), "gpu_shape": (False, False), "gpu_steps": (False, True)}


@pytest.fixture(params=list(SHAPES))
def shaped(dev, request):
    """``dev`` with the shape of a recurrence (LSTM, GRU, RNN, DynamicQuantizeLSTM) chosen:
    the CPU kernels (``cpu_kernels``, ``rnn_cpu.cl``), the GPU's whole sequence in one
    work-group (``rnn_gpu.cl``), or the GPU's launches per step (``step_launches``). The CPU
    kernels are OpenCL C with vector types, which the CUDA backend does not build."""
    if request.param == "cpu_shape" and dev.kind == "cuda":
        pytest.skip("the CPU-shaped kernels are OpenCL's")
    before = dev.cpu_kernels, dev.step_launches
    dev.cpu_kernels, dev.step_launches = SHAPES[request.param]
    yield dev
    dev.cpu_kernels, dev.step_launches = before
