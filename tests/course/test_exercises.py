"""Every exercise: its unsolved skeleton fails its checker, the instructor's answer passes it,
and a wrong answer gets the hints in order."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path

import pytest

from hetlab import course
from hetlab.course.exercise import unfinished

INSTRUCTOR = Path(__file__).resolve().parents[2] / "notebooks" / "instructor"


def _solutions() -> dict:
    out: dict = {}
    for path in sorted(INSTRUCTOR.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_instructor_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for key, value in getattr(mod, "SOLUTIONS", {}).items():
            assert key not in out, f"{key} is solved in two instructor files"
            out[key] = value
    return out


SOLUTIONS = _solutions()
KEYS = [ex.key for ex in course.exercises()]


def _skeleton_answer(ex: course.Exercise, tmp_path: Path):
    """Run the skeleton as the notebook cell does (without its check) and take its answer."""
    path = tmp_path / "skeleton.py"
    path.write_text(ex.skeleton)
    ns = runpy.run_path(str(path))
    assert ex.name in ns, f"{ex.key}'s skeleton does not define {ex.name}"
    return ns[ex.name]


def test_every_exercise_has_a_solution():
    assert KEYS, "no exercises registered"
    assert sorted(SOLUTIONS) == sorted(KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_skeleton_fails(key, tmp_path):
    ex = course.exercise(key)
    course.reset(key)
    v = course.check(key, _skeleton_answer(ex, tmp_path))
    assert not v and "✘" in v.text and "hint 1/" in v.text


@pytest.mark.parametrize("key", KEYS)
def test_solution_passes(key):
    course.reset(key)
    v = course.check(key, SOLUTIONS[key])
    assert v, v.text
    assert v.text.startswith("✔")


@pytest.mark.parametrize("key", KEYS)
def test_hints_are_graduated(key):
    ex = course.exercise(key)
    course.reset(key)
    shown = [course.hint(key).text for _ in range(len(ex.hints) + 1)]
    for i, h in enumerate(ex.hints):
        assert h in shown[i] and f"hint {i + 1}/{len(ex.hints)}" in shown[i]
    assert shown[-1] == shown[-2]  # the last hint stays
    course.reset(key)


@pytest.mark.parametrize("key", KEYS)
def test_an_intermediate_quantity_is_checked(key):
    """Each exercise checks something before its final answer (ranks, start times...)."""
    assert len(course.exercise(key).steps) >= 2


def test_a_wrong_intermediate_is_named_first():
    sol = SOLUTIONS["ch01.rank_u"]
    bad = {"mean_cost": dict(sol["mean_cost"], F=2.0), "rank_u": dict(sol["rank_u"], A=0.0)}
    course.reset("ch01.rank_u")
    v = course.check("ch01.rank_u", bad)
    assert v.failed == "the mean costs w̄" and "F" in v.text and "hint 1/2" in v.text
    v = course.check("ch01.rank_u", dict(bad, mean_cost=sol["mean_cost"]))
    assert v.failed == "rank_u" and "rank_u of A" in v.text and "hint 2/2" in v.text


def test_unfinished_sees_nested_ellipsis():
    assert unfinished({"a": [1, ...]}) and unfinished(None) and not unfinished({"a": (1, 2)})


def test_unknown_key_is_one_line():
    from hetlab.errors import HetlabError

    with pytest.raises(HetlabError, match="no exercise"):
        course.check("ch99.nothing", 1)
