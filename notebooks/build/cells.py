"""Cell helpers for the chapter modules: markdown, code, an exercise's cells, and the cells that
show an exercise's answer only once it is solved."""

from __future__ import annotations

import textwrap

import nbformat as nbf

# metadata key of an exercise cell: {"exercise": key}, plus {"solution": code} until the
# student edition strips it (see notebooks.build.notebook)
META = "hetlab"


def md(text: str):
    """A markdown cell (surrounding blank lines stripped)."""
    return nbf.v4.new_markdown_cell(text.strip())


def code(src: str):
    """A code cell (surrounding blank lines stripped)."""
    return nbf.v4.new_code_cell(src.strip())


def check_line(key: str, name: str) -> str:
    return f'check("{key}", {name})'


def exercise(key: str, prompt: str, solution: str) -> list:
    """The statement of exercise ``key`` and its skeleton, checked in the same cell.

    The skeleton is the exercise's own (``hetlab.course``), so the code a student completes is
    the code the tests prove to fail before it is solved. ``solution`` is the model answer:
    code that defines the same variable; only the instructor edition shows it."""
    from hetlab.course import exercise as lookup

    ex = lookup(key)
    body = (
        f"{ex.skeleton}\n\n"
        f"{check_line(key, ex.name)}\n"
        f'# hint("{key}")  # one more hint each time you run it'
    )
    cell = code(body)
    cell.metadata[META] = {"exercise": key, "solution": textwrap.dedent(solution).strip()}
    return [md(f"**Exercise `{key}` · {ex.title}.** {prompt.strip()}"), cell]


def answer(keys: str | tuple[str, ...], src: str):
    """A cell that shows the library's answer to exercise ``keys``: its body runs only once
    the student's checks passed (or after ``show_answer(key)``), so running every cell of a
    fresh notebook gives no answer away. The body shows what it shows with ``display`` or
    ``print``."""
    keys = (keys,) if isinstance(keys, str) else keys
    body = textwrap.indent(textwrap.dedent(src).strip(), "    ")
    args = ", ".join(f'"{k}"' for k in keys)
    return code(
        f"if unlocked({args}):  # opens once your check passes, or after show_answer\n{body}"
    )
