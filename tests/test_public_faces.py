"""Code that measures or teaches what a user reaches uses hetlab's public API only: ``hetlab``
itself, the packages' faces (``hetlab.devices``, ``hetlab.cost``...) and the top-level
modules (``hetlab.zoo``, ``hetlab.errors``...), never a module inside a package and never a
``_private`` name. ``lint-imports`` checks the first for benchmarks/ (its "benchmarks use the
public API" contract); this test also checks the private names, which import-linter cannot
see, and the notebooks' code cells and model answers, which it cannot read.

The course follows the same rule: a chapter's notebook imports ``hetlab.course``, whose face
exports the chapters' helpers (``hetlab/course/chNN.py``, ``live.py``...), never a chapter's
module itself.
"""

from __future__ import annotations

import ast
import importlib
import json
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HETLAB = ROOT / "hetlab"
NOTEBOOKS = [ROOT / "notebooks"]
# the folders whose code must use the public API only
PUBLIC_ONLY = [ROOT / "benchmarks", *NOTEBOOKS]
PACKAGES = sorted(p.parent.name for p in HETLAB.glob("*/__init__.py"))


@cache
def face(package: str) -> frozenset[str]:
    """The names ``hetlab.<package>``'s ``__init__.py`` exports (its ``__all__``)."""
    tree = ast.parse((HETLAB / package / "__init__.py").read_text())
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets
        ):
            return frozenset(ast.literal_eval(stmt.value))
    return frozenset()


def is_package(name: str) -> bool:
    return (HETLAB / name / "__init__.py").is_file()


def inside_package(dotted: str) -> bool:
    """Whether ``dotted`` (``hetlab.a.b...``) names a module inside a hetlab package: a
    submodule or subpackage of ``hetlab.a`` that its face does not export under that name."""
    parts = dotted.split(".")
    if len(parts) < 3 or parts[0] != "hetlab" or not is_package(parts[1]):
        return False
    sub = HETLAB / parts[1] / parts[2]
    exists = sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file()
    return len(parts) > 3 or (exists and parts[2] not in face(parts[1]))


def private_uses(source: str, label: str) -> list[str]:
    """Each use in ``source`` of a module inside a hetlab package or of a ``_private`` hetlab
    name, as ``label:line: what``: imports (``from hetlab.a.b import x``, ``import
    hetlab.a.b``, ``from hetlab.a import submodule``, ``from hetlab.a import _x``) and
    attribute chains from an imported ``hetlab`` (``hetlab.a.b.f``, ``hetlab._x``)."""
    out = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(f"{label}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("hetlab.") and (
                    inside_package(a.name) or "._" in a.name or a.name.count(".") > 1
                ):
                    bad(node, f"import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hetlab":
            mod = node.module or ""
            if node.level or mod.count(".") > 1 or "._" in mod or inside_package(mod):
                bad(node, f"from {mod} import ...")
                continue
            for a in node.names:
                if a.name.startswith("_") or inside_package(f"{mod}.{a.name}"):
                    bad(node, f"from {mod} import {a.name}")
        elif isinstance(node, ast.Attribute):
            first = first_private(dotted_name(node) or "")
            if first:
                bad(node, first)
    return sorted(set(out))


def first_private(dotted: str) -> str | None:
    """The shortest prefix of the attribute chain ``dotted`` (``hetlab.a.b.c``) that is a
    private name or a module inside a package, or None."""
    parts = dotted.split(".")
    if parts[0] != "hetlab":
        return None
    for k in range(2, len(parts) + 1):
        prefix = ".".join(parts[:k])
        if parts[k - 1].startswith("_") or (k == 3 and inside_package(prefix)):
            return prefix
    return None


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def label(path: Path) -> str:
    """``path`` relative to the repository, or its name where it lies outside."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def code_cells(path: Path) -> Iterator[tuple[str, str]]:
    """``(label, source)`` of each code cell of a notebook, IPython's ``%`` and ``!`` lines
    blanked."""
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.splitlines()]
        yield f"{label(path)}[cell {i}]", "\n".join(lines)


def sources(folders: Iterable[Path]) -> Iterator[tuple[str, str]]:
    """``(label, source)`` of every ``.py`` file and every notebook code cell in
    ``folders``, recursively."""
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix == ".py":
                yield label(path), path.read_text()
            elif path.suffix == ".ipynb" and ".ipynb_checkpoints" not in path.parts:
                yield from code_cells(path)


def private_uses_in(folders: Iterable[Path]) -> list[str]:
    """Every private use (``private_uses``) in the code of ``folders``."""
    return [use for label, src in sources(folders) for use in private_uses(src, label)]


def test_benchmarks_and_notebooks_use_the_public_api_only():
    assert private_uses_in(PUBLIC_ONLY) == []


def test_the_notebooks_model_answers_use_the_public_api_only():
    """The instructor edition's answers, which the student notebooks do not carry."""
    pytest.importorskip("nbformat")
    from notebooks import build

    uses = [private_uses(code, f"answer {key}") for key, code in build.solutions().items()]
    assert [u for found in uses for u in found] == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_a_face_exports_is_there(package):
    """Each name of a face's ``__all__`` resolves. A name that is also a module's inside the
    package (``f`` of ``pkg/f.py``) resolves to the same object before and after that module
    is imported, and to the module only where the module does not define the name: the
    import system binds a loaded module to its package's attribute, which shadows a lazily
    exported ``f`` from ``pkg/f.py``."""
    mod = importlib.import_module(f"hetlab.{package}")
    for name in sorted(face(package)):
        got = getattr(mod, name)
        if (HETLAB / package / f"{name}.py").is_file():
            sub = importlib.import_module(f"hetlab.{package}.{name}")
            now = getattr(mod, name)
            assert now is got and not (now is sub and hasattr(sub, name)), name


def test_the_check_finds_modules_inside_packages_and_private_names():
    allowed = """
import hetlab
import hetlab.devices
from hetlab import zoo, Plan
from hetlab.calibrate import profile
from hetlab.devices import select, is_accelerator
from hetlab.errors import HetlabError
hetlab.devices.select("cpu0")
hetlab.profile(g, "cpu0").extra
x._private
"""
    assert private_uses(allowed, "ok") == []
    refused = {
        "from hetlab.profiling.profiler import profile": "from hetlab.profiling.profiler import ...",
        "import hetlab.executor.interpreter": "import hetlab.executor.interpreter",
        "from hetlab.profiling import profiler": "from hetlab.profiling import profiler",
        "from hetlab.devices import opencl": "from hetlab.devices import opencl",
        "from hetlab.devices.opencl.queues import queue_costs": "from hetlab.devices.opencl",
        "from hetlab.devices import _LAZY": "from hetlab.devices import _LAZY",
        "from hetlab import _LAZY": "from hetlab import _LAZY",
        "import hetlab\nhetlab.cost.queues.with_queues(p)": "hetlab.cost.queues",
        "import hetlab\nhetlab._LAZY": "hetlab._LAZY",
    }
    for src, what in refused.items():
        got = private_uses(src, "f.py")
        assert len(got) == 1 and what in got[0], (src, got)


def test_notebook_cells_are_read_without_their_magics(tmp_path):
    cells = [
        {"cell_type": "markdown", "source": ["from hetlab.profiling.profiler import x"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import hetlab\n"]},
        {"cell_type": "code", "source": "!pip list\nfrom hetlab.graph.ir import Node"},
    ]
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": cells}))
    got = [private_uses(src, label) for label, src in code_cells(nb)]
    assert got == [[], ["n.ipynb[cell 2]:2: from hetlab.graph.ir import ..."]]
