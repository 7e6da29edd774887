"""The house rules the style guide sets for the code, checked: every module under hetlab/
is at most ``MODULE_LINES`` lines and every function at most ``FUNCTION_LINES`` (its ``def``
line to its last line, docstring included); ``docs/imports.md`` is the drawing of the
imports as they are (``make deps``); and a word or a job has one home: one class named
``Plan``, one module outside the devices that builds onnxruntime sessions.

The allow-lists name today's violators with their size now. They must only shrink: a
violator that is fixed leaves its list, one that grows fails, and no new name enters.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HETLAB = ROOT / "hetlab"
MODULE_LINES = 300
FUNCTION_LINES = 60

# module -> its line count today; may only shrink
LONG_MODULES: dict[str, int] = {}

# "module:function" -> its line count today; may only shrink
LONG_FUNCTIONS: dict[str, int] = {}


def modules() -> list[Path]:
    return sorted(HETLAB.rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def module_sizes() -> dict[str, int]:
    return {rel(p): len(p.read_text().splitlines()) for p in modules()}


def function_sizes() -> dict[str, int]:
    """``"module:Qualified.name"`` -> lines from its ``def`` (decorators excluded) to its end."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str, path: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[f"{path}:{name}"] = child.end_lineno - child.lineno + 1
                walk(child, f"{name}.", path)

    for p in modules():
        walk(ast.parse(p.read_text(), str(p)), "", rel(p))
    return out


def over(sizes: dict[str, int], limit: int, allowed: dict[str, int]) -> list[str]:
    """What breaks the rule beyond its allowance, and allowances no longer needed."""
    bad = [
        f"{k}: {n} lines (limit {limit}" + (f", allowed {allowed[k]})" if k in allowed else ")")
        for k, n in sorted(sizes.items())
        if n > max(limit, allowed.get(k, 0))
    ]
    stale = [
        f"{k}: allowed {a} but now {sizes.get(k, 'gone')}: lower or remove its allowance"
        for k, a in sorted(allowed.items())
        if sizes.get(k, 0) <= limit or sizes[k] < a
    ]
    return bad + stale


def test_modules_are_at_most_300_lines():
    assert over(module_sizes(), MODULE_LINES, LONG_MODULES) == []


def test_functions_are_at_most_60_lines():
    assert over(function_sizes(), FUNCTION_LINES, LONG_FUNCTIONS) == []


def test_the_import_drawing_is_current():
    """docs/imports.md is what ``make deps`` draws from the code now."""
    r = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "imports.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("sizes", "allowed", "expected"),
    [
        ({"a": 10}, {}, []),
        ({"a": 70}, {}, ["a: 70 lines (limit 60)"]),
        ({"a": 70}, {"a": 70}, []),
        ({"a": 71}, {"a": 70}, ["a: 71 lines (limit 60, allowed 70)"]),
        ({"a": 65}, {"a": 70}, ["a: allowed 70 but now 65: lower or remove its allowance"]),
        ({}, {"a": 70}, ["a: allowed 70 but now gone: lower or remove its allowance"]),
    ],
)
def test_allowances_only_shrink(sizes, allowed, expected):
    assert over(sizes, 60, allowed) == expected


def test_one_class_named_plan():
    """The schedule is ``schedulers/plan.py: Plan``; nothing else takes the name."""
    named = [
        rel(p)
        for p in modules()
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.ClassDef) and n.name == "Plan"
    ]
    assert named == ["hetlab/schedulers/plan.py"]


def test_one_module_outside_the_devices_builds_onnxruntime_sessions():
    """The reference session is ``graph/ort_session.py``'s; the devices build their own."""
    builders = {rel(p) for p in modules() if "InferenceSession(" in p.read_text()}
    outside = {b for b in builders if not b.startswith("hetlab/devices/")}
    assert outside == {"hetlab/graph/ort_session.py"}
