"""Every exercise: its unsolved skeleton fails its checker, the instructor's answer (kept in the
notebooks' build sources) passes it, a wrong answer gets the hints in order, and an answer of
the wrong shape gets one plain line saying what shape is expected."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from hetlab import course
from hetlab.course.exercise import progress, unfinished

build = pytest.importorskip("notebooks.build", reason="the build sources need nbformat")
SOLUTIONS = build.solutions()
KEYS = [ex.key for ex in course.exercises()]


def _run(code: str, name: str, tmp_path: Path):
    """Run a cell's code as the notebook does (without its check) and take ``name``."""
    path = tmp_path / "cell.py"
    path.write_text(code)
    ns = runpy.run_path(str(path))
    assert name in ns, f"the cell does not define {name}"
    return ns[name]


def _skeleton_answer(ex: course.Exercise, tmp_path: Path):
    return _run(ex.skeleton, ex.name, tmp_path)


def test_every_exercise_has_a_solution():
    assert KEYS, "no exercises registered"
    assert sorted(SOLUTIONS) == sorted(KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_untouched_skeleton_is_no_try(key, tmp_path):
    """Run All checks every skeleton as given: that fails, says what to do, and uses up no
    hint, however often it runs."""
    ex = course.exercise(key)
    course.reset(key)
    for _ in range(3):
        v = course.check(key, _skeleton_answer(ex, tmp_path))
        assert not v and v.failed == "unfinished" and "not answered yet" in v.text
        assert "in place of " in v.text and "hint " not in v.text.split("(a hint")[0]
    assert progress(key).hints_shown == 0 and not course.unlocked(key)
    course.reset(key)


def test_a_partly_filled_answer_names_its_gap():
    course.reset("ch01.rank_u")
    v = course.check(
        "ch01.rank_u",
        {
            "mean_cost": dict.fromkeys("ABCDEF", 1.0),
            "rank_u": {"A": 1.0, "B": 1.0, "C": ..., "D": 1.0, "E": 1.0, "F": 1.0},
        },
    )
    assert not v and "answer['rank_u']['C'] is still `...`" in v.text
    assert progress("ch01.rank_u").hints_shown == 0
    course.reset("ch01.rank_u")


@pytest.mark.parametrize("key", KEYS)
def test_the_last_hint_does_not_print_the_answer(key):
    """No hint holds the model answer's code, nor any value of the expected answer."""
    ex = course.exercise(key)
    solution = " ".join(SOLUTIONS[key].split())
    for h in ex.hints:
        flat = " ".join(h.split())
        assert flat not in solution
        for line in SOLUTIONS[key].splitlines():
            code = line.split("#")[0].strip()
            if len(code) > 25 and not code.startswith(("def ", '"""', "answer", ex.name)):
                assert code not in flat, f"{key}: a hint prints the answer's {code!r}"


def test_eq5_hints_never_print_the_constraint():
    for h in course.exercise("ch04.order").hints:
        assert ">=" not in h.replace("use >= for", "") and "ψ·M" not in h


@pytest.mark.parametrize("key", KEYS)
def test_solution_passes(key, tmp_path):
    ex = course.exercise(key)
    course.reset(key)
    v = course.check(key, _run(SOLUTIONS[key], ex.name, tmp_path))
    assert v, v.text
    assert v.text.startswith("✔")
    assert course.unlocked(key)  # the cells that show the answer open once it passes


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


def test_a_wrong_intermediate_is_named_first(tmp_path):
    sol = _run(SOLUTIONS["ch01.rank_u"], "answer", tmp_path)
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


def test_answer_cells_stay_locked_until_solved_or_shown(capsys):
    course.reset()
    assert not course.unlocked("ch01.level", "ch01.rank_u")
    out = capsys.readouterr().out
    assert 'show_answer("ch01.level")' in out and 'show_answer("ch01.rank_u")' in out
    course.check("ch01.level", {"A": 0})  # a wrong answer opens nothing
    assert not course.unlocked("ch01.level")
    course.show_answer("ch01.level")
    assert course.unlocked("ch01.level") and not course.unlocked("ch01.rank_u")
    course.reset()


def test_hints_are_counted_per_exercise():
    course.reset()
    for _ in range(3):
        course.hint("ch03.eft")
    v = course.check("ch01.level", {"A": 0})
    assert "hint 1/" in v.text  # ch03's hints do not move ch01's count
    assert progress("ch03.eft").hints_shown == 2 and progress("ch01.level").hints_shown == 1
    course.reset("ch03.eft")
    assert progress("ch03.eft").hints_shown == 0 and progress("ch01.level").hints_shown == 1
    course.reset()


@pytest.mark.parametrize(
    ("key", "bad", "says"),
    [
        ("ch01.level", [1, 2, 2, 2, 3, 4], "level should be a dict with the keys 'A'"),
        ("ch01.rank_u", {"mean_cost": [2.5], "rank_u": {}}, "answer['mean_cost'] should be a dict"),
        ("ch01.rank_u", {"rank_u": {}}, "answer has no key 'mean_cost'"),
        ("ch03.eft", {"order": "ABC", "placed": {}}, "answer['order'] should be a list, not a str"),
        ("ch04.partition", {"cut": 4, "parts": [1, 2]}, "answer['parts'][0] should be a list"),
        ("ch04.order", [1], "expected a function, got list"),
        ("ch09.workers", 3, "answer should be a dict with the keys 'cpus', 'workers'"),
    ],
)
def test_a_wrong_shape_is_one_plain_line(key, bad, says):
    v = course.check(key, bad)
    assert not v and says in v.text
    assert "Error" not in v.text and "attribute" not in v.text


def _first_number(x, path=()):
    """The path to the first number (not a bool) inside ``x``, or None."""
    if isinstance(x, int | float) and not isinstance(x, bool):
        return path
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, v in items:
        found = _first_number(v, (*path, k))
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("key", [k for k in KEYS if course.exercise(k).call is None])
def test_a_wrong_number_is_told_its_direction_not_the_right_value(key, tmp_path):
    ex = course.exercise(key)
    right = _run(SOLUTIONS[key], ex.name, tmp_path)
    path = _first_number(right)
    if path is None:
        pytest.skip("no number in this answer")
    wrong = _run(SOLUTIONS[key], ex.name, tmp_path)
    *head, last = path
    box = wrong
    for k in head:
        box = box[k]
    want = box[last]
    box[last] = want * 3 + 7  # clearly too high
    course.reset(key)
    v = course.check(key, wrong)
    assert not v and ("too high" in v.text or "too late" in v.text), v.text
    said = v.text.split("hint 1/")[0]
    for shown in {repr(want), f"{want:g}", f"{float(want):g}"}:
        if len(shown) >= 3:
            assert not re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", said), v.text
    course.reset(key)


def test_ch10_pays_does_not_say_the_rule_s_answer(tmp_path):
    right = _run(SOLUTIONS["ch10.pays"], "answer", tmp_path)
    m = next(iter(right["pays"]))
    course.reset("ch10.pays")
    v = course.check(
        "ch10.pays", dict(right, pays=dict(right["pays"], **{m: not right["pays"][m]}))
    )
    assert not v and "threshold" in v.text and "the rule says" not in v.text
    course.reset("ch10.pays")
