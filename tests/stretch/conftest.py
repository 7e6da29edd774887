"""Shared fixtures: zoo graphs, a fixed cost model (no measuring), searched stretch plans."""

from __future__ import annotations

import pytest
from stretch_helpers import DEVICES, cost_model

from hetlab import zoo
from hetlab.graph import load
from hetlab.stretch.search import GRID, search
from hetlab.stretch.transform import Constraints


@pytest.fixture(scope="session")
def graphs():
    return {m: load(str(zoo.path(m))) for m in ("squeezenet", "resnet50")}


@pytest.fixture(scope="session")
def searched(graphs):
    """model -> (best candidate, rows) with the default constraints."""
    grids = {"resnet50": [("stage", "free"), ("merged", "free")]}  # keeps the suite short
    return {
        m: search(g, DEVICES, cost_model(), Constraints(), grid=grids.get(m, GRID))
        for m, g in graphs.items()
    }


@pytest.fixture(scope="session")
def written(graphs, searched, tmp_path_factory):
    """model -> path of the stretched model with weights."""
    from hetlab.stretch.onnx_rewrite import write

    d = tmp_path_factory.mktemp("stretched")
    return {m: write(graphs[m], searched[m][0].plan, d / f"{m}.onnx") for m in graphs}
