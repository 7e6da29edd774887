"""Profiles that ship with the repository, as ``Problem`` objects.

- ``data/hope-profiles/``: HOPE's per-operator phone measurements (see its README);
- ``data/profiles/<platform>/``: profiles that hetlab measured on real machines.

A checkout has both; an installed wheel has neither, and says so in one line.
"""

from __future__ import annotations

from pathlib import Path

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError

DATA = Path(__file__).resolve().parents[2] / "data"
HOPE_DIR = DATA / "hope-profiles"
MEASURED_DIR = DATA / "profiles"


def profiles_dir() -> Path | None:
    """The folder of HOPE's phone profiles, or None when this is not a checkout."""
    return HOPE_DIR if HOPE_DIR.is_dir() and any(HOPE_DIR.glob("*.json")) else None


def profile_names() -> list[str]:
    """HOPE's phone profiles, e.g. ``inception-v3-huawei_p40``."""
    d = profiles_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d else []


def _load(path: Path, what: str, choices: list[str]) -> Problem:
    if not path.exists():
        if not choices:
            raise HetlabError(
                f"no {what} here: they ship in the repository's data/ folder, "
                "so use a checkout of hetlab"
            )
        raise HetlabError(f"no {what} {path.stem!r}; choose one of: {', '.join(choices)}")
    return Problem.load(path)


def load_hope_profile(name: str) -> Problem:
    """The ``Problem`` of one phone profile, e.g. ``"inception-v3-huawei_p40"``."""
    return _load(HOPE_DIR / f"{name}.json", "HOPE phone profile", profile_names())


def measured_platforms() -> list[str]:
    """Platforms with profiles measured by hetlab, e.g. ``xeon-2core-pocl``."""
    if not MEASURED_DIR.is_dir():
        return []
    return sorted(p.name for p in MEASURED_DIR.iterdir() if any(p.glob("*.json")))


def measured_models(platform: str) -> list[str]:
    """The models profiled on one platform."""
    return sorted(p.stem for p in (MEASURED_DIR / platform).glob("*.json"))


def load_measured_profile(platform: str, model: str) -> Problem:
    """A profile hetlab measured, e.g. ``("xeon-2core-pocl", "googlenet")``."""
    if platform not in measured_platforms():
        choices = ", ".join(measured_platforms()) or "none in this installation"
        raise HetlabError(
            f"no measured profiles for platform {platform!r}; choose one of: {choices}"
        )
    path = MEASURED_DIR / platform / f"{model}.json"
    return _load(path, f"{platform} profile", measured_models(platform))
