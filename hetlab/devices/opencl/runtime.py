"""pyopencl imported with one clear error, and what hetlab asks of a pyopencl device before
it drives it: its type, and whether it offers correctly rounded division."""

from __future__ import annotations

from typing import Any

from hetlab.errors import HetlabError


def pyopencl() -> Any:
    """The pyopencl module; one ``HetlabError`` line where it is not importable."""
    try:
        # lazy: pyopencl is optional and slow to import
        import pyopencl as cl
    except (ImportError, OSError) as e:  # pragma: no cover - depends on the machine
        raise HetlabError(
            f"pyopencl is not importable ({e}); install pyopencl to use OpenCL"
        ) from None
    return cl


def exact_divide_option(cl: Any, cl_device: Any) -> list[str]:
    """The build option that makes ``/`` and ``sqrt`` correctly rounded, as onnxruntime's CPU
    kernels compute them, where the device offers it. OpenCL otherwise allows 2.5 ulp for a
    float division (NVIDIA's driver uses it), and one ulp moved before a quantisation step
    (``DynamicQuantizeLinear``) can move a value by a whole step."""
    flag = cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT
    try:
        offered = bool(int(cl_device.single_fp_config) & int(flag))
    except Exception:  # noqa: BLE001 - the query is optional before OpenCL 1.2
        offered = False
    return ["-cl-fp32-correctly-rounded-divide-sqrt"] if offered else []


def device_type(d: Any) -> str:
    """``GPU``, ``ACCELERATOR`` or ``CPU`` from a pyopencl device's type bits."""
    cl = pyopencl()
    t = int(d.type)
    if t & cl.device_type.GPU:
        return "GPU"
    if t & cl.device_type.ACCELERATOR:
        return "ACCELERATOR"
    return "CPU"
