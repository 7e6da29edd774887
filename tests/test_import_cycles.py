"""No module of hetlab imports one that imports it back, except the kernel op registry's
modules (the registry imports its ops, which register themselves with it). Every import
counts: those under ``TYPE_CHECKING`` and inside functions too (a drawing of the imports,
e.g. pydeps, sees them), and a package face's lazy names (``_LAZY``)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
OP_REGISTRY = "hetlab.devices.kernels.ops"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.Module, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The hetlab modules a module imports: ``from pkg import sub`` names the submodule
    ``pkg.sub``, and ``pkg`` itself where a name comes from its face."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join(here + ([base] if base else []))
            subs = {f"{base}.{a.name}" for a in node.names}
            out.update(subs)
            if not subs <= modules:
                out.add(base)
    for node in tree.body:  # a package face's lazy names import their modules when read
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
            out.update(v.value for v in ast.walk(node.value) if isinstance(v, ast.Constant))
    return {m for m in out if m in modules and m != name}


def import_graph() -> nx.DiGraph:
    files = {module_name(p): p for p in (ROOT / "hetlab").rglob("*.py")}
    g = nx.DiGraph()
    for name, path in files.items():
        tree = ast.parse(path.read_text())
        for dep in imported(tree, name, path.name == "__init__.py", set(files)):
            g.add_edge(name, dep)
    return g


def test_no_import_cycle_but_the_op_registrys():
    cycles = [c for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    others = [sorted(c) for c in cycles if not all(m.startswith(OP_REGISTRY) for m in c)]
    assert not others, f"import cycles: {others}"


def test_the_check_sees_a_cycle_under_type_checking():
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hetlab.b import B\n"
    got = imported(ast.parse(src), "hetlab.a", False, {"hetlab.a", "hetlab.b"})
    assert got == {"hetlab.b"}
