"""A fake device that declares tf32 and errs by a known amount there, an fp32 one that is
never the fastest, and a tiny model with its ONNX file, for the tests of precision as a
setting (CLI, check, recommend, the workbench's error budget)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from onnx import helper, numpy_helper

from hetlab.devices.capabilities import Capabilities
from hetlab.devices.unit import RunResult, Unit
from tests.profiling.cost_helpers import OrtTestDevice, save_model, vi

FAST = {"repeat": 3, "warmup": 1, "seconds": 0.02, "context": 0, "comm": False, "cache": False}
ERR = 3e-3  # the tf32 device's error in the tests that choose within a budget


class SlowDevice(OrtTestDevice):
    """An fp32-only device that waits 5 ms a run: never the fastest."""

    def run(self, unit, inputs, node_times=None):
        time.sleep(0.005)
        return super().run(unit, inputs)


class Tf32Device(OrtTestDevice):
    """An onnxruntime test device that declares tf32: at tf32 its float outputs are scaled by
    ``1 + err`` (a relative error of exactly ``err``) and each run waits ``pause_s`` less, so
    tf32 is faster and off by a known amount. Its queue views share it."""

    def __init__(self, name: str, err: float = 1e-3, pause_s: float = 0.0) -> None:
        super().__init__(name)
        self.err, self.pause_s = err, pause_s

    def info(self) -> dict[str, Any]:
        return {**super().info(), "err": self.err}

    def capabilities(self) -> Capabilities:
        return Capabilities(precisions=("fp32", "tf32"))

    def queue_view(self, index: int) -> Tf32Device:
        view = Tf32Device(f"{self.name}.q{index}", self.err, self.pause_s)
        view.parent = self
        return view

    @property
    def root(self) -> Tf32Device:
        return self if self.parent is None else self.parent

    def run(self, unit: Unit, inputs: dict[str, Any], node_times: bool | None = None) -> RunResult:
        import time

        if self.precision == "fp32" and self.pause_s:
            time.sleep(self.pause_s)
        got = super().run(unit, inputs)
        if self.precision != "fp32":
            got.outputs = {k: _scaled(v, 1.0 + self.err) for k, v in got.outputs.items()}
        return got


def _scaled(value: Any, by: float) -> Any:
    a = np.asarray(value)
    return (a * np.float32(by)).astype(a.dtype) if a.dtype.kind == "f" else value


def chain_model(path: Path) -> str:
    """x[1, 16] -> MatMul(w) -> Relu -> MatMul(w2) -> y[1, 8]: two matrix products."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="mm1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["y"], name="mm2"),
    ]
    return save_model(path, nodes, [vi("x", [1, 16])], [vi("y", [1, 8])], [w, w2])
