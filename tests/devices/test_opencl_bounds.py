"""The bounds-checked build of the OpenCL kernels (``opencl/bounds.py``, ``kernels/bounds.h``):
every global access goes through the checking macros, the checked build is a program of its
own with the bound arguments, and a launch given an index one element too far fails its
run with the kernel, node and index."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import helper

from hetlab.devices.kernels import KERNEL_DIR, bounds
from hetlab.devices.kernels.ops import depthwise
from hetlab.errors import HetlabError
from tests.devices.opencl_case import kernel_name, make_model, rnd, run_case, to_graph

KERNELS = sorted(KERNEL_DIR.glob("*.cl"))


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_every_global_buffer_is_bounded_and_read_only_through_the_macros(path):
    code = re.sub(r"//[^\n]*", "", path.read_text())
    params = set(re.findall(r"__global\s+(?:const\s+)?\w+\s*\*\s*(\w+)", code))
    views = set(re.findall(r"VIEW\([^,]+,\s*(\w+),", code))
    assert params, path.name
    assert params <= set(re.findall(r"HL_N\((\w+)\)", code))  # every buffer has its range
    raw = sorted(n for n in params | views if re.search(rf"\b{n}\s*\[", code))
    assert not raw, f"{path.name} indexes {raw} without LD/ST"


def test_the_switch_reads_the_environment(monkeypatch):
    for value, on in (("1", True), ("yes", True), ("0", False), ("", False)):
        monkeypatch.setenv(bounds.ENV, value)
        assert bounds.from_env() is on
    monkeypatch.delenv(bounds.ENV)
    assert bounds.from_env() is False


@pytest.fixture
def checked(dev):
    before, dev.bounds_check = dev.bounds_check, True
    yield dev
    dev.bounds_check = before


def test_checked_programs_are_cached_apart_and_take_the_bound_arguments(dev):
    before = dev.bounds_check
    try:
        dev.bounds_check = False
        plain, plain_k = dev.program("eltwise.cl"), dev.kernel("eltwise.cl", "unary")
        dev.bounds_check = True
        checked, checked_k = dev.program("eltwise.cl"), dev.kernel("eltwise.cl", "unary")
        dev.bounds_check = False
        assert checked is not plain and dev.program("eltwise.cl") is plain
    finally:
        dev.bounds_check = before
    # x and y: (hl0, hln) each, plus the error record and the launch's site
    assert (plain_k.num_args, checked_k.num_args) == (9, 9 + 2 + 2 * 2)


def _unit(dev, node, inputs):
    model = make_model([node], inputs, {}, [node.output[0]])
    graph = to_graph(model, inputs, 17)
    return dev.prepare(graph, [node.name])


# node, inputs, (kernel, argument made one element too large, its value), and the first
# violation: (read or wrote, lowest and highest index it can be, the buffer's element count)
WRONG = {
    "size": (
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
        {"x": rnd(1, 100)},
        ("unary", 2, 101),
        ("read", 100, 100, 100),
    ),
    "rows": (
        helper.make_node("MatMul", ["x", "b"], ["y"], name="mm"),
        {"x": rnd(20, 8), "b": rnd(8, 5, seed=1)},
        ("gemm", 0, 21),
        ("read", 160, 167, 160),  # row 20 of A, read before any write
    ),
    "offset": (
        helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2]),
        {"x": rnd(1, 2, 4, 4)},
        ("pool2d", 4, 1),
        ("wrote", 18, 18, 18),  # 2 planes of 3 x 3
    ),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_a_launch_one_element_too_far_fails_its_run(checked, case):
    node, inputs, (kernel, arg, value), (kind, lo, hi, count) = WRONG[case]
    unit = _unit(checked, node, inputs)
    (launch,) = unit.handle.launches
    if kernel in ("gemm", "unary", "pool2d") and checked.cpu_kernels:  # *_cpu.cl on a CPU
        kernel += "_cpu"
    assert kernel_name(launch) == kernel
    checked.run(unit, inputs)  # as built: every index in range
    launch.kernel.set_arg(arg, np.int32(value))
    with pytest.raises(HetlabError) as e:
        checked.run(unit, inputs)
    msg = str(e.value)
    assert f"kernel {kernel} of node {node.name}" in msg
    m = re.search(r"(read|wrote) index (-?\d+) of a buffer of (\d+) elements at \w+\.cl:\d+", msg)
    assert m, msg
    assert m.group(1) == kind and lo <= int(m.group(2)) <= hi and int(m.group(3)) == count, msg


def test_the_record_clears_after_an_error(checked):
    node, inputs, (_, arg, value), _ = WRONG["size"]
    unit = _unit(checked, node, inputs)
    (launch,) = unit.handle.launches
    launch.kernel.set_arg(arg, np.int32(value))
    with pytest.raises(HetlabError, match="read index 100 of a buffer of 100 elements"):
        checked.run(unit, inputs)
    launch.kernel.set_arg(arg, np.int32(100))
    out = checked.copy_out(checked.run(unit, inputs).outputs["y"])
    assert np.array_equal(out, np.maximum(inputs["x"], 0))


def test_a_view_is_checked_against_its_whole_buffer(checked, monkeypatch):
    """Conv reads its input through a view at a per-plane offset; a depthwise conv given one
    more output row than its planes have reads past the input's end (on a CPU device the
    kernel whose geometry is an argument, ``depthwise8``: no private plane allowed)."""
    monkeypatch.setattr(depthwise, "PLANE_MOST", 0)
    x, w = rnd(1, 4, 6, 6), rnd(4, 1, 3, 3, seed=2)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="dw", group=4, pads=[1, 1, 1, 1])
    _, (unit, _), _ = run_case(checked, [node], {"x": x}, {"w": w})
    (launch,) = unit.handle.launches
    # conv_cpu.cl's depthwise8 on a CPU device, the same arguments
    kernel = "depthwise8" if checked.cpu_kernels else "depthwise"
    assert kernel_name(launch) == kernel
    cp = np.array([6, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 4, 4, 4], np.int32)
    cp[0] = 8  # H: the last plane's rows run past the buffer
    table = checked.copy_in(cp)
    launch.kernel.set_arg(5, table.buf)
    with pytest.raises(
        HetlabError, match=rf"kernel {kernel} of node dw .* index \d+ of a buffer of 144 "
    ):
        checked.run(unit, {"x": x})
