"""Writes the course notebooks (without outputs) from the chapter modules of this folder.

Each ``chNN_*.py`` (and ``workbench.py``) defines ``NAME = "NN_slug.ipynb"`` and ``cells()``.
Review those modules, not the JSON. Run from the repository root, with hetlab importable::

    python -m notebooks.build            # every notebook
    python -m notebooks.build 03 04      # the notebooks whose name starts with 03 or 04
    python -m notebooks.build --check    # fail if a committed notebook differs from its module
    python -m notebooks.build --instructor OUTDIR   # the instructor edition, answers filled in

The model answers live here, in the chapter modules (``exercise(key, prompt, solution)``).
The student edition, committed beside this folder, carries each exercise's skeleton only; the
instructor edition replaces it with the answer and is written only on request, outside the
committed notebooks (as nbgrader and otter strip solutions from a release).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat as nbf

from .cells import META, check_line

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


def notebook(mod, instructor: bool = False) -> nbf.NotebookNode:
    """The notebook of one chapter module, with stable cell ids: the student edition (each
    exercise's skeleton, no answer anywhere), or the instructor edition (the answers)."""
    nb = nbf.v4.new_notebook()
    stem = mod.NAME.removesuffix(".ipynb")
    nb.cells = [
        nbf.from_dict(dict(_edition(c, instructor), id=f"{stem[:24]}-{i:02d}"))
        for i, c in enumerate(mod.cells())
    ]
    nb.metadata = METADATA
    nbf.validate(nb)
    return nb


def _edition(cell, instructor: bool):
    meta = cell.get("metadata", {}).get(META)
    if not meta:
        return cell
    cell = nbf.from_dict(cell)  # a copy: the module's cells stay as written
    solution = cell.metadata[META].pop("solution")
    if instructor:
        from hetlab.course import exercise  # lazy: only the instructor edition needs it

        cell.source = (
            f"{solution}\n\n{check_line(meta['exercise'], exercise(meta['exercise']).name)}"
        )
    return cell


def solutions() -> dict[str, str]:
    """Each exercise's model answer (code), by key, from every chapter module."""
    out: dict[str, str] = {}
    for mod in modules():
        for c in mod.cells():
            meta = c.get("metadata", {}).get(META)
            if meta:
                if meta["exercise"] in out:
                    raise ValueError(f"exercise {meta['exercise']} appears twice")
                out[meta["exercise"]] = meta["solution"]
    return out


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".ipynb.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    args = list(argv or [])
    check = "--check" in args
    outdir = None
    if "--instructor" in args:
        i = args.index("--instructor")
        if i + 1 >= len(args) or args[i + 1].startswith("--"):
            print("--instructor needs an output folder (outside notebooks/)")
            return 2
        outdir = Path(args.pop(i + 1)).resolve()
        if outdir == OUT or OUT in outdir.parents:
            print(f"the instructor edition goes outside {OUT.name}/, where students read")
            return 2
        outdir.mkdir(parents=True, exist_ok=True)
    prefixes = [a for a in args if not a.startswith("--")]
    stale = []
    for mod in modules():
        if prefixes and not any(mod.NAME.startswith(p) for p in prefixes):
            continue
        text = nbf.writes(notebook(mod, instructor=outdir is not None)) + "\n"
        path = (outdir or OUT) / mod.NAME
        if check and outdir is None:
            if not path.exists() or path.read_text() != text:
                stale.append(mod.NAME)
            continue
        _write(path, text)
        print("wrote", path)
    if stale:
        print("not as built (run python -m notebooks.build):", ", ".join(stale))
        return 1
    return 0
