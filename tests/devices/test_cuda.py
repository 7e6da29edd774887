"""The CUDA backend: the OpenCL kernels as CUDA C, the platform's [cuda] section, a launch's
blocks and a run's node times from its events, and (where CuPy finds a GPU) runs checked
against onnxruntime, alone and as graphs over streams."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from hetlab.devices import platform as pf
from hetlab.devices.cuda.kernel import block_for, dim3
from hetlab.devices.cuda.source import options_to_nvrtc, to_cuda
from hetlab.devices.cuda.timing import launch_node_times
from hetlab.devices.kernels import KERNEL_DIR, source
from hetlab.devices.kernels.ops.common import CTYPE
from hetlab.devices.platform_file import validate_platform
from hetlab.errors import HetlabError

# *_cpu.cl: kernels of CPU devices only, in OpenCL vector types; CUDA never builds them
KERNELS = sorted(p for p in KERNEL_DIR.glob("*.cl") if not p.stem.endswith("_cpu"))

# enough of CUDA's device-side declarations for a C++ compiler to check the translation
CUDA_STUB = """
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(x)
struct uint3 { unsigned x, y, z; }; struct dim3 { unsigned x, y, z; };
struct int4 { int x, y, z, w; };
extern uint3 threadIdx, blockIdx; extern dim3 blockDim, gridDim;
void __syncthreads(); float __int_as_float(int); typedef unsigned long size_t;
float fmaf(float, float, float); float fma(float, float, float); float rsqrt(float);
float fminf(float, float); float fmaxf(float, float); float fmin(float, float);
float fmax(float, float); float exp(float); float tanh(float); float erf(float);
float log1p(float); float log(float); float sqrt(float); float pow(float, float);
float fabs(float); float ceil(float); float floor(float); int abs(int);
float fmod(float, float); float rint(float);
float sin(float); float cos(float); float tan(float); float asin(float); float acos(float);
float atan(float); float sinh(float); float cosh(float); float asinh(float);
float acosh(float); float atanh(float); int atomicMax(int*, int);
unsigned int __float_as_uint(float); float __uint_as_float(unsigned int);
int min(int, int); int max(int, int); float min(float, float); float max(float, float);
float __fmul_rn(float, float); float __fadd_rn(float, float);
"""


def test_kernel_heads_become_cuda_entry_points():
    src = (
        "inline float f(float x) { return x; }\n"
        "__kernel __attribute__((reqd_work_group_size(16, 16, 1)))\n"
        "void g(__global float* y, __constant int* m) { y[0] = f(m[0]); }\n"
        "__kernel void h(__global float* y) { __local float t[4]; barrier(CLK_LOCAL_MEM_FENCE); }\n"
    )
    out = to_cuda(src)
    assert 'extern "C" __global__ __launch_bounds__((16)*(16)*(1)) \nvoid g(' in out
    assert 'extern "C" __global__ void h(' in out
    assert "__device__ inline float f(" in out
    assert "__kernel" not in out.split("#line 1", 1)[1]


def test_build_options_keep_only_defines():
    assert options_to_nvrtc("-DTS=32 -D A_KC=1 -cl-fast-relaxed-math -DCONV") == (
        "-DTS=32",
        "-DA_KC=1",
        "-DCONV",
    )


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler here")
@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
@pytest.mark.parametrize(
    "defines",
    [
        "",
        "-DCONV -DTS=32 -DA_KC=1 -DB_NC=0",
        "-DDT=long -DDT_INT -DIT=int -DOT=uchar -DOT_BOOL",
        "-DDT=int -DDT_INT -DIT=long -DOT=long",
        "-DDT=uchar -DIT=uchar -DOT=float",
        "-DDT=I8 -DIT=float -DOT=I8 -DOT_NARROW",
        "-DTX=I8 -DTW=I8 -DTY=I8",
        "-DTX=U8 -DTW=I8 -DTY=U8 -DREQUANT",
        "-DTX=U8 -DTW=I8 -DTOFLOAT -DMLAS_GATES",
        "-DOUT_F16 -DPRE_RELU",
        "-DOUT_BF16",
    ],
)
def test_every_kernel_file_translates_to_valid_cuda_c(path: Path, defines: str, tmp_path):
    (tmp_path / "stub.h").write_text(CUDA_STUB)
    (tmp_path / "k.cu").write_text(to_cuda(source(path.name)))
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-nostdinc", "-x", "c++"]
    cmd += ["-include", str(tmp_path / "stub.h"), *defines.split(), str(tmp_path / "k.cu")]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[:2000]


ACCESS = """
__kernel void k(__global const float* x, __global float* y, const int n
                HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    VIEW(__global const float*, xp, x, n);
    ST(y, i, LD(xp, i) + LD(x, i));
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler here")
def test_access_macros_translate_to_plain_indexing(tmp_path):
    """The normal build's LD/ST/VIEW (kernels/bounds.h) become plain CUDA indexing: no
    check, no extra kernel argument."""
    header = (KERNEL_DIR / "bounds.h").read_text()
    (tmp_path / "stub.h").write_text(CUDA_STUB)
    (tmp_path / "k.cu").write_text(to_cuda(header + ACCESS))
    cmd = ["g++", "-std=c++17", "-E", "-P", "-nostdinc", "-x", "c++"]
    cmd += ["-include", str(tmp_path / "stub.h"), str(tmp_path / "k.cu")]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[:2000]
    kernel = " ".join(res.stdout.split("void k(", 1)[1].split()).replace(" )", ")")
    assert kernel.startswith("const float* x, float* y, const int n) {"), kernel
    assert "const float* xp = (x) + (n);" in kernel
    assert "((y)[i] = (((xp)[i]) + ((x)[i])));" in kernel
    assert not any(w in kernel for w in ("hl_ok", "hl_err", "hl_site", "_hl0", "_hln"))


def test_int8_is_signed_in_both_builds():
    """int8 tensors compile as I8, which eltwise.cl makes a signed char outside OpenCL C:
    plain char's sign is the CUDA host's choice (unsigned on Arm)."""
    src = to_cuda(source("eltwise.cl"))
    assert "#define I8 signed char" in src
    assert CTYPE["int8"] == "I8" and CTYPE["uint8"] == "uchar"


def test_typed_kernels_keep_their_widths_in_cuda():
    """The element types the typed kernels compile for are the same widths in the CUDA
    translation as in OpenCL C: uchar 1 byte, int 4, long 8 (a typedef and an assertion in
    the prelude, no rewriting of the kernels' text)."""
    src = "__kernel void k(__global long* a, __global uchar* b) { a[0] = (long)b[0]; }"
    out = to_cuda(src)
    assert "typedef unsigned char uchar;" in out
    assert "static_assert(sizeof(long) == 8" in out
    assert out.split("#line 1\n", 1)[1].startswith('extern "C" __global__ void k(__global long* a')


class _Cuda:
    kind = "cuda"

    def __init__(self, name):
        self.name, self.host_cores = name, None

    def queue_view(self, k):
        return _Cuda(f"{self.name}.q{k}")


def test_platform_cuda_section_names_streams(monkeypatch):
    monkeypatch.setattr(pf, "opencl_devices", list)
    monkeypatch.setattr(
        pf,
        "_discovered",
        lambda backend: [_Cuda("cuda0"), _Cuda("cuda1")] if backend == "cuda" else [],
    )
    devs = pf.devices({"cuda": {"exclude": ["cuda1"], "queues": {"cuda0": 3}}})
    assert [d.name for d in devs if d.kind == "cuda"] == ["cuda0", "cuda0.q1", "cuda0.q2"]
    with pytest.raises(HetlabError, match=r"cuda\.queues"):
        validate_platform({"cuda": {"queues": {"cuda0": 0}}})


@pytest.mark.parametrize("size", [1, 7, 96, 256, 291, 1000, 4096])
def test_a_launch_without_a_block_gets_one_dividing_its_global_size(size):
    block = block_for((size, 5))
    assert size % block[0] == 0 and block[0] <= 256 and block[1:] == (1,)
    assert dim3(block) == (block[0], 1, 1) and dim3((2, 3, 4)) == (2, 3, 4)


def test_node_times_span_their_launches_within_the_run():
    """Marks are event times in ms from the first; a node's interval covers its launches,
    clipped to the run's host interval, and a fused node sits at its host's finish; each is
    a node interval on the device that ran it."""
    cp = SimpleNamespace(cuda=SimpleNamespace(get_elapsed_time=lambda a, b: b - a))
    launches = [SimpleNamespace(node=v) for v in ("a", "b", "a", "c")]
    h = SimpleNamespace(launches=launches, node_ids=["a", "b", "c", "r", "z"], fused={"r": "b"})
    times = launch_node_times(cp, h, [0, 1, 2, 4, 9], 10, 10.006, "cuda0")
    assert {(x.kind, x.device) for x in times} == {("node", "cuda0")}
    t = {x.name: (x.start, x.finish) for x in times}
    assert t["a"] == pytest.approx((10.0, 10.004)) and t["b"] == pytest.approx((10.001, 10.002))
    assert t["c"] == pytest.approx((10.004, 10.006))  # its 9 ms end clipped to the run's end
    assert t["r"] == pytest.approx((10.002, 10.002)) and t["z"] == (10, 10)
    no_marks = launch_node_times(cp, h, [], 10, 11, "cuda0")  # not timed: every node at the start
    assert [(x.start, x.finish) for x in no_marks] == [(10, 10)] * 5


def _gpu():
    from hetlab.devices.cuda import discover

    found = discover()
    if not found:
        pytest.skip("no CUDA device (CuPy and an NVIDIA GPU)")
    return found[0]


def test_cuda_runs_match_onnxruntime_alone_and_over_streams():
    gpu = _gpu()
    from hetlab.executor import run
    from hetlab.graph import load
    from hetlab.zoo import path as zoo_path

    graph = load(str(zoo_path("squeezenet")))
    devs = {d.name: d for d in [gpu, gpu.queue_view(1)]}
    assert run(graph, gpu.name, devs, repeat=2, check=True).max_rel_err <= 1e-4
    names = list(devs)
    device_of = {v: names[i % 2] for i, v in enumerate(graph.topo_order())}
    rep = run(graph, device_of, devs, repeat=2, check=True)
    assert rep.max_rel_err <= 1e-4
