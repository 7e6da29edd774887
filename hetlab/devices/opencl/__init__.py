"""OpenCL devices (pyopencl) running hetlab's own kernels; see ``device.py``."""

from hetlab.devices.kernels import CLBuffer
from hetlab.devices.opencl.device import OpenCLDevice, discover

__all__ = ["CLBuffer", "OpenCLDevice", "discover"]
