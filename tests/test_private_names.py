"""The house rules the layering contract cannot see: inside ``hetlab``, no module reaches
for another module's ``_private`` name (an import of it, or an attribute of an imported
hetlab module), so a name used across modules is public and a private one can change
without breaking a neighbour."""

from __future__ import annotations

import ast
from pathlib import Path

HETLAB = Path(__file__).resolve().parents[1] / "hetlab"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_reaches(source: str, label: str) -> list[str]:
    """Each ``from hetlab... import _x``, ``import hetlab..._x`` and ``m._x`` (``m`` a hetlab
    module or name imported in ``source``), as ``label:line: what``."""
    tree = ast.parse(source)
    out: list[str] = []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or node.module.startswith("hetlab")):
            for a in node.names:
                if is_private(a.name):
                    out.append(f"{label}:{node.lineno}: from {node.module} import {a.name}")
                imported.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "hetlab":
                    continue
                if any(is_private(p) for p in a.name.split(".")):
                    out.append(f"{label}:{node.lineno}: import {a.name}")
                imported.add((a.asname or a.name).split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and is_private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
        ):
            out.append(f"{label}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_module_reaches_for_another_modules_private_names():
    found = []
    for path in sorted(HETLAB.rglob("*.py")):
        found += private_reaches(path.read_text(), str(path.relative_to(HETLAB.parent)))
    assert found == [], "\n".join(found)


def test_the_check_sees_every_way_of_reaching():
    source = """
from hetlab.graph.onnx_proto import (
    read_model,
    _dtype,
)
import hetlab.graph._hidden
from hetlab.devices.kernels import builder
builder._weights(g)
from hetlab.lazy import __getattr__
builder.weights(g)
"""
    got = private_reaches(source, "f.py")
    assert [g.split(": ", 1)[1] for g in got] == [
        "from hetlab.graph.onnx_proto import _dtype",
        "import hetlab.graph._hidden",
        "builder._weights",
    ]
