"""The committed notebooks are exactly what ``notebooks/build`` writes, and no student
notebook reaches the instructor's answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NB_DIR = Path(__file__).resolve().parents[2] / "notebooks"


def test_committed_notebooks_are_built():
    pytest.importorskip("nbformat")
    from notebooks import build

    assert build.main(["--check"]) == 0


def test_every_notebook_has_a_module():
    pytest.importorskip("nbformat")
    from notebooks import build

    built = {m.NAME for m in build.modules()}
    assert built == {p.name for p in NB_DIR.glob("*.ipynb")}


@pytest.mark.parametrize("path", sorted(NB_DIR.glob("*.ipynb")), ids=lambda p: p.name)
def test_student_notebooks_never_see_solutions(path):
    text = "".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
    assert "instructor" not in text and "SOLUTIONS" not in text and "solutions(" not in text
