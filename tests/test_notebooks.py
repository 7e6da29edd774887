"""Execute every notebook top to bottom (nbclient) and fail on any error output.

Notebooks run with ``HETLAB_QUICK=1``: a notebook reads it to shrink its sweeps (fewer cells,
shorter time limits), so the whole folder stays within the test budget on two cores.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.kernel_path import KERNEL_PATH

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(p.name for p in NB_DIR.glob("*.ipynb"))
LIMIT_S = 120  # per notebook, on a 2-core machine


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name: str, monkeypatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    root = str(NB_DIR.parent)  # the kernel imports this checkout's hetlab, not an installed one
    path = [root, KERNEL_PATH, os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    monkeypatch.setenv("HETLAB_QUICK", "1")
    nb = nbformat.read(NB_DIR / name, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{name} is committed with outputs"
    )
    client = nbclient.NotebookClient(
        nb,
        timeout=LIMIT_S - 10,
        kernel_name="python3",
        resources={"metadata": {"path": str(NB_DIR)}},
    )
    t0 = time.perf_counter()
    client.execute()
    dt = time.perf_counter() - t0
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    shown = sum(
        1
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result")
    )
    assert shown > 0, f"{name} displayed nothing"
    printed = "".join(  # what the cells printed, and the text of what they showed
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells
        for o in c.get("outputs", [])
    )
    assert "Running HiGHS" not in printed, f"{name} prints HiGHS's banner"
    # Run All checks each skeleton as given: that is no try, so no hint may be shown
    assert "hint 1/" not in printed, f"{name}: an untouched skeleton used up a hint"
    assert dt < LIMIT_S, f"{name} took {dt:.0f} s (limit {LIMIT_S} s on a 2-core machine)"
