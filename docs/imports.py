"""Draw hetlab's package import graph as Mermaid text: ``docs/imports.md`` (``make deps``).

Reads every module under ``hetlab/`` with ``ast`` (nothing is imported), maps each import to
the layer entry of the contract in ``pyproject.toml`` that holds it (``hetlab.cost``,
``hetlab.sweep_run``...), and writes one arrow per pair of entries with the number of
modules importing. Imports inside functions count, as they do for ``lint-imports``; so do
the module names a lazy face or the command table gives as strings (``"hetlab.calibrate"``).
An arrow that goes up a layer is drawn dashed and listed, whether or not the contract
declares it an exception. ``--check`` exits 1 when the committed drawing differs.

    python docs/imports.py            # rewrite docs/imports.md
    python docs/imports.py --check    # is it current?
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "imports.md"


def contract() -> dict:
    """The layers contract of ``pyproject.toml``."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return next(c for c in doc["tool"]["importlinter"]["contracts"] if c["type"] == "layers")


def layers() -> list[list[str]]:
    """The contract's layers, top first, each a list of entries (``hetlab.x``)."""
    return [[e.strip() for e in layer.split("|")] for layer in contract()["layers"]]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, modules: set[str]) -> set[str]:
    """Every hetlab module name ``tree`` imports, statically or as a module-path string."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)
    return {m for m in out if m in modules}


def entry_of(module: str, entries: list[str]) -> str | None:
    """The contract entry holding ``module`` (the longest that prefixes it), or None."""
    hits = [e for e in entries if module == e or module.startswith(e + ".")]
    return max(hits, key=len) if hits else None


def edges() -> tuple[Counter, list[list[str]]]:
    """(``{(importer entry, imported entry): modules importing}``, the layers)."""
    lays = layers()
    entries = [e for layer in lays for e in layer]
    files = sorted((ROOT / "hetlab").rglob("*.py"))
    modules = {module_name(f) for f in files}
    count: Counter = Counter()
    for f in files:
        src = entry_of(module_name(f), entries)
        if src is None:
            continue
        tree = ast.parse(f.read_text(), str(f))
        targets = {entry_of(m, entries) for m in imported(tree, modules)}
        for dst in targets - {None, src}:
            count[src, dst] += 1
    return count, lays


def short(entry: str) -> str:
    return entry.removeprefix("hetlab.")


def node(entry: str) -> str:
    """A Mermaid node id (prefixed: ``graph`` and ``end`` are Mermaid keywords)."""
    return "p_" + short(entry).replace(".", "_")


def drawing() -> str:
    count, lays = edges()
    rank = {e: i for i, layer in enumerate(lays) for e in layer}
    up = sorted(k for k in count if rank[k[1]] <= rank[k[0]])
    lines = [
        "# hetlab's imports, drawn",
        "",
        "Written by `make deps` (`python docs/imports.py`) from the code; do not edit by hand.",
        "Boxes are the layers of the contract in `pyproject.toml`, top first; an arrow is",
        "`importer --> imported`, labelled with how many modules of the importer import it",
        "(imports inside functions and module names given as strings included). The shared",
        "top-level modules every layer may use (`errors`, `fileio`, `lazy`, `timeline`, `version`) are not drawn.",
        "",
        "```mermaid",
        "flowchart TD",
    ]
    for i, layer in enumerate(lays):
        lines.append(f'  subgraph L{i}["layer {i + 1}"]')
        lines.extend(f"    {node(e)}[{short(e)}]" for e in layer)
        lines.append("  end")
    for (a, b), n in sorted(count.items(), key=lambda kv: (rank[kv[0][0]], kv[0])):
        arrow = f"-.->|{n} up|" if (a, b) in up else f"-->|{n}|"
        lines.append(f"  {node(a)} {arrow} {node(b)}")
    lines += ["```", ""]
    declared = contract().get("ignore_imports", [])
    if up:
        lines.append("Arrows that go up a layer (dashed):")
        lines += [f"- `{a}` -> `{b}` ({count[a, b]} modules)" for a, b in up]
    else:
        lines.append("No arrow goes up a layer.")
    if declared:
        lines += ["", "Exceptions the contract declares (`ignore_imports`):"]
        lines += [f"- `{d}`" for d in declared]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = drawing()
    if "--check" in argv:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run make deps", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
