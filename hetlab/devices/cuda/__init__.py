"""CUDA devices through CuPy: hetlab's OpenCL kernels compiled by NVRTC, runs as CUDA graphs."""

from hetlab.devices.cuda.device import CudaBuffer, CudaDevice, discover
from hetlab.devices.cuda.runtime import why_no_cuda

__all__ = ["CudaBuffer", "CudaDevice", "discover", "why_no_cuda"]
