"""The exercise framework: a key, a title, graduated hints, and checks that test an
intermediate quantity before the final answer.

A student writes the answer into a skeleton (``...`` where the work goes) and calls
``check("ch03.eft", answer)``: the first check that fails is reported with the next hint, so
each wrong try reveals a little more. An answer that still holds a ``...`` (the skeleton as
given, e.g. during Run All) is no try: it says what to fill in and shows no hint. A wrong
answer is told what is wrong (which quantity, which way it is off), never the right value,
and the last hint points at the idea, never at the answer itself. ``hint("ch03.eft")`` reveals the hints one by one without
checking. A cell that shows the library's answer opens only once the check passed
(``unlocked``), or on request (``show_answer``). Model answers are not part of this package:
they live in the notebooks' build sources, and only the instructor edition shows them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetlab.course.shape import shape_error, template
from hetlab.course.wrong import first_gap
from hetlab.errors import HetlabError

# a check returns None when the answer passes it, else one line saying what is wrong
Test = Callable[[Any], "str | None"]


@dataclass(frozen=True)
class Step:
    """One checked quantity: ``what`` names it (e.g. "the start times"), ``test`` judges it."""

    what: str
    test: Test


@dataclass(frozen=True)
class Exercise:
    """``skeleton`` is the code a student completes; it defines the variable ``name``, which
    is passed to ``check``. ``call`` turns a function answer into the quantity the steps
    test (e.g. ``lambda f: f(small_dag())``). Steps run in order, intermediate ones first."""

    key: str
    title: str
    hints: tuple[str, ...]
    steps: tuple[Step, ...]
    skeleton: str
    name: str = "answer"
    call: Callable[[Any], Any] | None = None
    done: str = ""


@dataclass
class Verdict:
    """What ``check`` and ``hint`` return: true when right; shown as one or two lines."""

    ok: bool
    text: str
    failed: str | None = None  # the step that failed, for tests

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.text


# what a student's unfinished function commonly raises; reported as one line, not a traceback
STUDENT_ERRORS = (
    ArithmeticError,
    AssertionError,
    AttributeError,
    LookupError,
    NameError,
    NotImplementedError,
    TypeError,
    ValueError,
    RecursionError,
)
_EXERCISES: dict[str, Exercise] = {}
_loaded = False  # every chapter imported (load_chapters)


@dataclass
class Progress:
    """Where a student stands on one exercise: hints shown, solved, answer shown on request.
    Each exercise has its own, so a hint or a try on one never moves another's count."""

    hints_shown: int = 0
    solved: bool = False
    revealed: bool = False


_progress: dict[str, Progress] = {}


def progress(key: str) -> Progress:
    """The progress record of exercise ``key`` (created on first use)."""
    return _progress.setdefault(exercise(key).key, Progress())


def register(ex: Exercise) -> Exercise:
    if ex.key in _EXERCISES and _EXERCISES[ex.key] is not ex:
        raise HetlabError(f"exercise {ex.key!r} is defined twice")
    if len(ex.hints) < 2 or not ex.steps:
        raise HetlabError(f"exercise {ex.key!r} needs at least two hints and one step")
    _EXERCISES[ex.key] = ex
    return ex


def load_chapters() -> None:
    """Import every ``chNN`` module of this package once (they register their exercises)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    package = __name__.rpartition(".")[0]
    here = [str(Path(__file__).parent)]
    for mod in sorted(pkgutil.iter_modules(here), key=lambda m: m.name):
        if mod.name.startswith("ch"):
            importlib.import_module(f"{package}.{mod.name}")


def exercise(key: str) -> Exercise:
    load_chapters()
    if key not in _EXERCISES:
        raise HetlabError(f"no exercise {key!r}; there are: {', '.join(sorted(_EXERCISES))}")
    return _EXERCISES[key]


def exercises() -> list[Exercise]:
    """Every exercise of every chapter, by key."""
    load_chapters()
    return [_EXERCISES[k] for k in sorted(_EXERCISES)]


def unfinished(x: Any) -> bool:
    """True when ``x`` still holds a ``...`` (or is NotImplemented / None) anywhere inside."""
    if x is ... or x is NotImplemented or x is None:
        return True
    if isinstance(x, Mapping):
        return any(unfinished(v) for v in x.values())
    if isinstance(x, list | tuple | set | frozenset):
        return any(unfinished(v) for v in x)
    return False


def _next_hint(ex: Exercise) -> str:
    state = progress(ex.key)
    i = min(state.hints_shown, len(ex.hints) - 1)
    state.hints_shown = min(state.hints_shown + 1, len(ex.hints))
    return f"hint {i + 1}/{len(ex.hints)}: {ex.hints[i]}"


def hint(key: str) -> Verdict:
    """The next hint of exercise ``key`` (the last one again once all are shown)."""
    ex = exercise(key)
    return Verdict(False, "💡 " + _next_hint(ex))


def reset(key: str | None = None) -> None:
    """Forget the hints shown, the solved state and any answer shown (of one exercise, or
    of all)."""
    if key is None:
        _progress.clear()
    else:
        _progress.pop(key, None)


def show_answer(key: str) -> Verdict:
    """Open the cells that show the library's answer to exercise ``key`` without solving it
    (run them again to see it)."""
    progress(key).revealed = True
    return Verdict(False, f"🔓 the answer cells of {key} are open: run them again to see them.")


def unlocked(*keys: str) -> bool:
    """True once ``check`` passed on every exercise of ``keys`` (or ``show_answer`` opened
    it); else False, and says how to open the cell. Cells that show the library's answer to
    an exercise start with it, so running every cell gives no answer away."""
    locked = [k for k in keys if not (progress(k).solved or progress(k).revealed)]
    if not locked:
        return True
    calls = " and ".join(f'show_answer("{k}")' for k in locked)
    print(
        f"🔒 This cell shows the answer to exercise {', '.join(locked)} once your check of it "
        f"passes. To see it anyway, run {calls}, then this cell again."
    )
    return False


def _fail(ex: Exercise, what: str, why: str) -> Verdict:
    return Verdict(False, f"✘ {ex.title}: {why}\n  {_next_hint(ex)}", what)


def _not_tried(ex: Exercise, value: Any) -> Verdict:
    """An answer with a ``...`` left is no try: no hint is used up, the student is told what
    to do (an untouched skeleton) or where the gap is."""
    skeleton = template(ex.skeleton, ex.name)
    untouched = (
        value is None or value is ... or (type(value) is type(skeleton) and value == skeleton)
    )
    if ex.call is not None:
        what = f"{ex.name} returns None: write its body in place of `...`, with a return"
    elif untouched:
        what = "write your answer in place of each `...` in this cell, then run it again"
    else:
        what = f"{first_gap(value, ex.name)} is still `...`: fill it in and run the cell again"
    return Verdict(
        False, f'✎ {ex.title}: not answered yet: {what} (a hint: hint("{ex.key}"))', "unfinished"
    )


def check(key: str, answer: Any) -> Verdict:
    """Check ``answer`` to exercise ``key``: ✔, or ✘ with what is wrong and the next hint."""
    ex = exercise(key)
    value = answer
    if ex.call is not None and answer is not None and answer is not ...:
        if not callable(answer):
            return _fail(ex, "call", f"expected a function, got {type(answer).__name__}")
        try:
            value = ex.call(answer)
        except STUDENT_ERRORS as e:
            return _fail(ex, "call", f"your function raised {type(e).__name__}: {e}")
    if unfinished(value):
        return _not_tried(ex, value)
    if ex.call is None:
        why = shape_error(template(ex.skeleton, ex.name), value, ex.name)
        if why:
            return _fail(ex, "shape", f"{why} (the cell's skeleton shows the shape)")
    for step in ex.steps:
        try:
            why = step.test(value)
        except STUDENT_ERRORS as e:
            why = f"could not read it ({type(e).__name__}: {e})"
        if why:
            return _fail(ex, step.what, f"{step.what}: {why}")
    progress(key).solved = True
    return Verdict(True, f"✔ {ex.title}: right." + (f" {ex.done}" if ex.done else ""))


@dataclass
class Table:
    """Helper for checks that compare a dict of numbers with the expected one."""

    want: Mapping[str, Any]
    tol: float = 1e-6
    order: list[str] = field(default_factory=list)

    def first_wrong(self, got: Mapping[str, Any]) -> str | None:
        """The first key (in ``order``, else sorted) whose value is missing or wrong."""
        for k in self.order or sorted(self.want):
            if k not in got or not close_enough(got[k], self.want[k], self.tol):
                return k
        return None


def close_enough(a: Any, b: Any, tol: float) -> bool:
    """Numbers within ``tol``, sequences element by element, anything else by equality."""
    if isinstance(b, int | float) and not isinstance(b, bool):
        try:
            return abs(float(a) - float(b)) <= tol
        except (TypeError, ValueError):
            return False
    if isinstance(b, list | tuple):
        return (
            isinstance(a, list | tuple)
            and len(a) == len(b)
            and all(close_enough(x, y, tol) for x, y in zip(a, b, strict=True))
        )
    return a == b
