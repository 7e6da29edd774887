"""Where the HOPE phone profiles live (``shared/hope-profiles`` beside the repository).

They are real per-operator measurements from HOPE's public repository (see their README);
they are not copied into this repository, so every user of them must cope with their absence.
"""

from __future__ import annotations

import os
from pathlib import Path

from hetlab.errors import HetlabError

ROOT = Path(__file__).resolve().parents[2]


def profiles_dir() -> Path | None:
    """``$HETLAB_HOPE_PROFILES``, else ``../shared/hope-profiles`` or ``../../shared/...``
    from the repository root; None when none exists."""
    env = os.environ.get("HETLAB_HOPE_PROFILES")
    cands = [Path(env)] if env else []
    cands += [
        ROOT.parent / "shared" / "hope-profiles",
        ROOT.parent.parent / "shared" / "hope-profiles",
    ]
    for c in cands:
        if c.is_dir() and any(c.glob("*.json")):
            return c
    return None


def profile_names() -> list[str]:
    d = profiles_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d else []


def load_hope_profile(name: str):
    """The ``Problem`` of one phone profile, e.g. ``"inception-v3-huawei_p40"``."""
    from hetlab.cost.problem import Problem

    d = profiles_dir()
    if d is None:
        raise HetlabError(
            "the HOPE phone profiles are not here: put shared/hope-profiles beside "
            "the repository or set HETLAB_HOPE_PROFILES"
        )
    f = d / f"{name}.json"
    if not f.exists():
        raise HetlabError(f"no HOPE profile {name!r}; choose one of: {', '.join(profile_names())}")
    return Problem.load(f)
