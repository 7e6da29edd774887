"""``hetlab graph`` end to end through the real entry point: output and bad-input behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.graph.models import diamond  # noqa: F401  (fixture)


def hetlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hetlab", *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[1],
        check=False,
    )


def test_graph_json_and_summary(diamond):  # noqa: F811
    r = hetlab("graph", diamond, "--shape", "x=2x3x8x8", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["nodes"][0] == {**doc["nodes"][0], "id": "conv", "op_type": "Conv", "uprank": 1}
    assert doc["edges"][0]["bytes"] == 2 * 4 * 8 * 8 * 4
    r = hetlab("graph", diamond)
    assert "vertices   6" in r.stdout and "depth      5" in r.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["graph", "/nonexistent/m.onnx"], "not found"),
        (["graph", "no_such_zoo_model"], "zoo"),
        (["graph", "{diamond}", "--shape", "x=1by3"], "malformed --shape"),
        (["graph", "{diamond}", "--shape", "x=1x3"], "dimensions"),
        (["schedule"], "PROBLEM.json"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line(diamond, args, needle):  # noqa: F811
    r = hetlab(*[a.replace("{diamond}", diamond) for a in args])
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert needle in lines[0]
