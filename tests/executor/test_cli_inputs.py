"""Inputs the model itself cannot run on tell one story on every device: the model's own
onnxruntime run fails on them, exit 2, one line; ``--input NAME=NUMBER`` fills the shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from hetlab.errors import HetlabError
from hetlab.executor.api import run
from hetlab.executor.bad_inputs import InputsRejected
from hetlab.graph.onnx_io import load
from tests.graph.models import save

ROOT = Path(__file__).parents[2]
STORY = "hetlab: error: the model's reference onnxruntime run failed on these inputs: "


def hetlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hetlab", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def _opencl() -> str | None:
    try:
        from hetlab.devices.opencl import discover

        found = discover()
    except Exception:  # noqa: BLE001  no pyopencl or no platform: the OpenCL half skips
        return None
    return found[0].name if found else None


@pytest.fixture(scope="module")
def tagger(tmp_path_factory) -> str:
    """Token types of a BERT-style tagger: a 2-row table, looked up and summed."""
    tab = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "tab")
    g = helper.make_graph(
        [
            helper.make_node("Gather", ["tab", "types"], ["e"]),
            helper.make_node("Relu", ["e"], ["y"]),
        ],
        "tagger",
        [helper.make_tensor_value_info("types", TensorProto.INT64, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [tab],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return save(m, tmp_path_factory.mktemp("tagger") / "tagger.onnx")


def _devices() -> list[str]:
    cl = _opencl()
    return ["cpu0"] + ([cl] if cl else [])


def test_an_index_past_the_table_is_one_story_on_every_device(tagger, tmp_path):
    bad = np.zeros((1, 256), np.int64)
    bad[0, 7] = 2
    np.save(tmp_path / "bad.npy", bad)
    lines = {}
    for dev in _devices():
        for given in (f"types={tmp_path / 'bad.npy'}", "types=5"):
            for extra in ([], ["--check"]):
                r = hetlab(
                    "run", tagger, "--device", dev, "--repeat", "1", "--input", given, *extra
                )
                err = r.stderr.strip().splitlines()
                assert r.returncode == 2 and len(err) == 1, (dev, given, r.stderr)
                assert err[0].startswith(STORY) and "--input" in err[0], err[0]
                lines.setdefault((given, tuple(extra)), set()).add(err[0])
    assert all(len(v) == 1 for v in lines.values())  # the same line on every device


def test_a_number_fills_the_declared_shape_on_every_device(tagger):
    for dev in _devices():
        r = hetlab(
            "run",
            tagger,
            "--device",
            dev,
            "--repeat",
            "1",
            "--input",
            "types=1",
            "--check",
            "--json",
        )
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["max_rel_err"] == 0.0


def test_random_types_stay_inside_the_table(tagger):
    for dev in _devices():
        r = hetlab("run", tagger, "--device", dev, "--repeat", "1", "--check", "--json")
        assert r.returncode == 0, r.stderr


def test_the_api_tells_the_same_story_from_a_failed_unit_and_from_the_check(tagger):
    g = load(tagger)
    bad = {"types": np.full((1, 256), 3, np.int64)}
    with pytest.raises(InputsRejected, match="idx=3") as e:
        run(g, "cpu0", inputs=bad, warmup=0)  # the onnxruntime unit fails mid-run
    assert e.value.exit_code == 2
    for dev in _devices()[1:]:
        with pytest.raises(InputsRejected, match="idx=3"):
            run(g, dev, inputs=bad, warmup=0, check=True)  # before the kernels run


def test_a_unit_that_fails_for_another_reason_keeps_its_own_error(tagger, monkeypatch):
    from hetlab.executor import interpreter

    def broken(self, *a, **k):
        raise HetlabError("unit 0 on cpu0 failed: something else")

    monkeypatch.setattr(interpreter.Executor, "run_once", broken)
    with pytest.raises(HetlabError, match="something else") as e:
        run(load(tagger), "cpu0", warmup=0)
    assert not isinstance(e.value, InputsRejected)


@pytest.mark.parametrize("command", ["profile", "recommend"])
def test_profile_and_recommend_refuse_the_same_inputs_in_the_same_words(tagger, tmp_path, command):
    out = str(tmp_path / "out.json")
    r = hetlab(command, tagger, "--devices", "cpu0", "--input", "types=5", "--out", out, "--quiet")
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith(STORY), r.stderr
    assert not Path(out).exists()
