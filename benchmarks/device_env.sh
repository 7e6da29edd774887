# Source this from the repository root on a GPU host (see benchmarks/README.md): registers
# NVIDIA's OpenCL driver with the ICD loader, installs the carried wheels (pyopencl with
# pytools, platformdirs and siphash24, pulp, highspy, and onnx2torch for gpu_queues' torch
# columns; built for its Python 3.12) and puts the checkout on PYTHONPATH, so that hetlab
# imports and `python3 -m benchmarks.NAME` runs a benchmark.
mkdir -p /tmp/icd
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null || true
export OCL_ICD_VENDORS=/tmp/icd
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || return 1
export PYTHONPATH=/tmp/site:$PWD HETLAB_CACHE=/tmp/hetlab-cache PYTHONUNBUFFERED=1
