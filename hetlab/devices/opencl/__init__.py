"""OpenCL devices (pyopencl) running hetlab's own kernels; see ``device.py``."""

from hetlab.devices.opencl.device import CLBuffer, OpenCLDevice, discover

__all__ = ["CLBuffer", "OpenCLDevice", "discover"]
