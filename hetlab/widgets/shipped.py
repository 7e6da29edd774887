"""The profiles that ship with hetlab, as the workbench offers them: HOPE's phone profiles
(``hope/<name>``) and the platforms hetlab measured (``<platform>/<model>``, e.g.
``h200-16core/googlenet-streams``: one GPU as four CUDA streams)."""

from __future__ import annotations

from hetlab.cost.datasets import (
    load_hope_profile,
    load_measured_profile,
    measured_models,
    measured_platforms,
    profile_names,
)
from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError

HOPE = "hope"
PICK = ("shipped profiles…", "")  # the dropdown's resting choice: loads nothing


def shipped_names() -> list[str]:
    """Every shipped profile by name, the measured platforms first."""
    measured = [f"{pl}/{m}" for pl in measured_platforms() for m in measured_models(pl)]
    return measured + [f"{HOPE}/{n}" for n in profile_names()]


def shipped_choices() -> list[tuple[str, str]]:
    """(label, name) pairs for a dropdown, led by ``PICK``."""
    out = [PICK]
    for name in shipped_names():
        where, model = name.split("/", 1)
        label = f"phone (HOPE) · {model}" if where == HOPE else f"{where} · {model}"
        out.append((label, name))
    return out


def load_shipped(name: str) -> Problem:
    """The shipped profile ``name`` (one of ``shipped_names()``)."""
    where, sep, model = name.partition("/")
    if not sep or not model:
        raise HetlabError(
            f"shipped profile {name!r}: name it hope/<name> or <platform>/<model>, "
            f"e.g. {', '.join(shipped_names()[:2]) or 'none in this installation'}"
        )
    if where == HOPE:
        return load_hope_profile(model)
    return load_measured_profile(where, model)
