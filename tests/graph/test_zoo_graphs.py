"""Issue 2 acceptance: every zoo model loads into a linted DAG through ``hetlab graph --json``."""

from __future__ import annotations

import json

import pytest

from hetlab import zoo
from hetlab.cli import main

BIG = {"nasnet_large", "pnasnet_large", "inception_v4"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in BIG else n for n in zoo.names()]
)
def test_graph_json_for_every_zoo_model(name, capsys):
    assert main(["graph", name, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ids = [n["id"] for n in doc["nodes"]]
    assert len(ids) == len(set(ids)) == zoo.info(name)["vertices"]
    assert doc["model_path"].endswith(".onnx")
    up = {n["id"]: n["uprank"] for n in doc["nodes"]}
    preds: dict[str, list[str]] = {}
    for e in doc["edges"]:
        assert e["bytes"] > 0
        preds.setdefault(e["dst"], []).append(e["src"])
    for v, r in up.items():  # HOPE eq. 8 holds on the whole graph
        assert r == 1 + max((up[u] for u in preds.get(v, [])), default=0)
    if name == "nasnet_large":
        assert len(ids) >= 1000
    if name == "lstm":  # the four gates of a step are parallel branches
        assert max(len(v) for v in _levels(up).values()) >= 8


def _levels(up: dict[str, int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for v, r in up.items():
        out.setdefault(r, []).append(v)
    return out
