"""A tensor too large for its device is refused in one line before anything is allocated."""

from __future__ import annotations

import os

import onnx
import pytest
from onnx import TensorProto, helper

from hetlab.cli import main as cli_main
from hetlab.devices.memory import check_fits, human_bytes
from hetlab.devices.ort_cpu import OrtCpuDevice
from hetlab.errors import HetlabError
from hetlab.executor import run
from hetlab.graph.onnx_io import load

CORES = sorted(os.sched_getaffinity(0))
HUGE = "x=10000000x10000000"  # 400 TB of float32: more than any host


class Small(OrtCpuDevice):
    """An onnxruntime device that declares ``mem`` bytes of memory and ``cap`` per buffer."""

    def __init__(self, name: str, mem: int, cap: int | None = None) -> None:
        super().__init__(name, CORES[:1], threads=1, pin=False)
        self.mem, self.cap = mem, cap

    def memory_bytes(self) -> int | None:
        return self.mem

    def max_alloc_bytes(self) -> int | None:
        return self.mem if self.cap is None else self.cap


@pytest.fixture(scope="module")
def relu(tmp_path_factory) -> str:
    """x[n, m] -> Relu -> y, both dimensions symbolic."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "m"])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "relu", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    path = tmp_path_factory.mktemp("mem") / "relu.onnx"
    onnx.save(m, str(path))
    return str(path)


def test_human_bytes_uses_binary_units():
    assert human_bytes(512) == "512 B"
    assert human_bytes(24 * 2**30) == "24 GiB"
    assert human_bytes(10**12 * 4) == "3.64 TiB"


def test_a_tensor_larger_than_the_device_is_named_with_both_sizes(relu):
    g = load(relu, {"x": (1000, 1000)})  # 4 MB tensors
    with pytest.raises(HetlabError) as e:
        run(g, "s", [Small("s", mem=2**20)])
    msg = str(e.value)
    assert "tensor 'x' (1000x1000 float32, 3.81 MiB) does not fit s's memory (1 MiB)" in msg
    assert "--shape" in msg and "\n" not in msg


def test_a_buffer_limit_below_the_memory_is_named_as_such(relu):
    g = load(relu, {"x": (1000, 1000)})
    with pytest.raises(HetlabError, match=r"does not fit s's largest buffer \(2 MiB\)"):
        check_fits(g, [("r", Small("s", mem=2**30, cap=2 * 2**20))])


def test_a_node_whose_inputs_and_outputs_together_exceed_the_memory_is_refused(relu):
    g = load(relu, {"x": (1000, 1000)})  # x and y: 3.81 MiB each, 7.63 MiB together
    with pytest.raises(HetlabError, match=r"node 'r' \(Relu\) reads and writes 7.63 MiB"):
        check_fits(g, [("r", Small("s", mem=6 * 2**20))])
    check_fits(g, [("r", Small("s", mem=8 * 2**20))])  # fits: nothing raised


def test_cli_run_refuses_a_tensor_larger_than_the_host(relu, capsys):
    assert cli_main(["run", relu, "--device", "cpu0", "--shape", HUGE]) == 2
    err = capsys.readouterr().err.strip()
    assert "tensor 'x' (10000000x10000000 float32, 364 TiB) does not fit cpu0's memory" in err
    assert err.count("\n") == 0 and "internal error" not in err


def test_cli_profile_refuses_it_and_writes_nothing(relu, capsys, tmp_path):
    out = tmp_path / "p.json"
    args = ["profile", relu, "--devices", "cpu0", "--shape", HUGE, "--out", str(out), "--quiet"]
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "does not fit cpu0's memory" in err[-1] and not out.exists()


def test_an_opencl_device_declares_its_global_memory_and_buffer_limit(dev):
    assert dev.memory_bytes() == int(dev.dev.global_mem_size)
    assert 0 < dev.max_alloc_bytes() <= dev.memory_bytes()
