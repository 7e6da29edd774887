"""The committed notebooks are exactly what ``notebooks/build`` writes, no student notebook
holds or reaches the instructor's answers, and the instructor edition holds every answer."""

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
    pytest.importorskip("nbformat")
    from hetlab.course import exercise
    from notebooks import build

    cells = json.loads(path.read_text())["cells"]
    text = "".join("".join(c["source"]) for c in cells)
    assert "instructor" not in text and "solutions(" not in text and "notebooks.build" not in text
    for c in cells:
        meta = c["metadata"].get("hetlab")
        if meta:  # an exercise cell: its skeleton, its check, nothing of the answer
            assert set(meta) == {"exercise"}
            assert "".join(c["source"]).startswith(exercise(meta["exercise"]).skeleton)
    for key, code in build.solutions().items():
        assert code not in text, f"{path.name} holds the answer to {key}"


def test_no_answers_ship_in_the_notebooks_folder():
    assert not (NB_DIR / "instructor").exists()
    assert not list(NB_DIR.glob("**/solution*.py"))


def test_instructor_edition_holds_every_answer(tmp_path):
    pytest.importorskip("nbformat")
    from notebooks import build

    assert build.main(["--instructor", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.glob("*.ipynb")} == {m.NAME for m in build.modules()}
    text = "".join(p.read_text() for p in tmp_path.glob("*.ipynb"))
    for key, code in build.solutions().items():
        first = json.dumps(code.splitlines()[0])[1:-1]
        assert first in text, f"the instructor edition lacks the answer to {key}"
    assert build.main(["--instructor", str(NB_DIR / "out")]) == 2  # never beside the students'
    assert not (NB_DIR / "out").exists()
