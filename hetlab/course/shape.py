"""The shape an exercise's answer must have, read from its skeleton, and one plain line when an
answer has another shape (a list where a dict goes, a missing key), so that a wrong type never
surfaces as a Python error such as ``'list' object has no attribute 'get'``."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from hetlab.errors import HetlabError


def template(skeleton: str, name: str) -> Any:
    """The literal the skeleton assigns to ``name`` (its ``...`` unfilled); ``...`` (any
    shape) when the skeleton defines ``name`` otherwise, e.g. as a function."""
    for stmt in ast.parse(skeleton).body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            try:
                return ast.literal_eval(stmt.value)
            except ValueError as e:
                raise HetlabError(f"the skeleton of {name!r} is not a literal: {e}") from e
    return ...


def _kind(x: Any) -> str:
    if isinstance(x, Mapping):
        return "a dict"
    if isinstance(x, bool):
        return "True/False"
    if isinstance(x, list | tuple):
        return f"a {type(x).__name__} of {len(x)}"
    name = type(x).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({x!r:.40})"


def _keys(want: Mapping) -> str:
    return ", ".join(repr(k) for k in want)


def shape_error(want: Any, got: Any, where: str) -> str | None:
    """None when ``got`` has the shape of ``want`` (a skeleton's value, ``...`` matching
    anything), else one line naming the first place that differs and what belongs there."""
    if want is ...:
        return None
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return f"{where} should be a dict with the keys {_keys(want)}, not {_kind(got)}"
        for k, w in want.items():
            if k not in got:
                return f"{where} has no key {k!r} (it needs {_keys(want)})"
            why = shape_error(w, got[k], f"{where}[{k!r}]")
            if why:
                return why
        return None
    if isinstance(want, list | tuple):
        if not isinstance(got, list | tuple):
            return f"{where} should be a list, not {_kind(got)}"
        if isinstance(want, tuple) and len(got) != len(want):
            return f"{where} should hold {len(want)} values, not {len(got)}"
        if isinstance(want, tuple):
            pairs = zip(want, got, strict=False)
        else:  # a list skeleton shows one element's shape, then ``...`` for the rest
            pairs = ((want[0], g) for g in got) if want else iter(())
        for i, (w, g) in enumerate(pairs):
            why = shape_error(w, g, f"{where}[{i}]")
            if why:
                return why
    return None
