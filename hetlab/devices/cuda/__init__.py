"""CUDA devices through CuPy: hetlab's OpenCL kernels compiled by NVRTC, runs as CUDA graphs."""

from hetlab.devices.cuda.device import CudaBuffer, CudaDevice, discover

__all__ = ["CudaBuffer", "CudaDevice", "discover"]
