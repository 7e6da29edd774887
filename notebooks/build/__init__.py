"""Writes the course notebooks (without outputs) from the chapter modules of this folder.

Each ``chNN_*.py`` (and ``workbench.py``) defines ``NAME = "NN_slug.ipynb"`` and ``cells()``.
Review those modules, not the JSON. Run from the repository root, with hetlab importable::

    python -m notebooks.build            # every notebook
    python -m notebooks.build 03 04      # the notebooks whose name starts with 03 or 04
    python -m notebooks.build --check    # fail if a committed notebook differs from its module
"""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat as nbf

HERE = Path(__file__).resolve().parent
OUT = HERE.parent
METADATA = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


def modules() -> list:
    """The chapter modules (and the workbench's), in file-name order."""
    stems = sorted(p.stem for p in HERE.glob("ch[0-9][0-9]_*.py"))
    if (HERE / "workbench.py").exists():
        stems.append("workbench")
    return [importlib.import_module(f"{__name__}.{s}") for s in stems]


def notebook(mod) -> nbf.NotebookNode:
    """The notebook of one chapter module, with stable cell ids."""
    nb = nbf.v4.new_notebook()
    stem = mod.NAME.removesuffix(".ipynb")
    nb.cells = [
        nbf.from_dict(dict(c, id=f"{stem[:24]}-{i:02d}")) for i, c in enumerate(mod.cells())
    ]
    nb.metadata = METADATA
    nbf.validate(nb)
    return nb


def main(argv: list[str] | None = None) -> int:
    args = list(argv or [])
    check = "--check" in args
    prefixes = [a for a in args if not a.startswith("--")]
    stale = []
    for mod in modules():
        if prefixes and not any(mod.NAME.startswith(p) for p in prefixes):
            continue
        text = nbf.writes(notebook(mod)) + "\n"
        path = OUT / mod.NAME
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(mod.NAME)
            continue
        tmp = path.with_suffix(".ipynb.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        print("wrote", path.relative_to(OUT.parent))
    if stale:
        print("not as built (run python -m notebooks.build):", ", ".join(stale))
        return 1
    return 0
