"""Cell helpers for the chapter modules: markdown, code, and an exercise's cells."""

from __future__ import annotations

import nbformat as nbf


def md(text: str):
    """A markdown cell (surrounding blank lines stripped)."""
    return nbf.v4.new_markdown_cell(text.strip())


def code(src: str):
    """A code cell (surrounding blank lines stripped)."""
    return nbf.v4.new_code_cell(src.strip())


def exercise(key: str, prompt: str) -> list:
    """The statement of exercise ``key`` and its skeleton, checked in the same cell.

    The skeleton is the exercise's own (``hetlab.course``), so the code a student completes is
    the code the tests prove to fail before it is solved."""
    from hetlab.course import exercise as lookup

    ex = lookup(key)
    body = (
        f"{ex.skeleton}\n\n"
        f'check("{key}", {ex.name})\n'
        f'# hint("{key}")  # one more hint each time you run it'
    )
    return [md(f"**Exercise `{key}` · {ex.title}.** {prompt.strip()}"), code(body)]
