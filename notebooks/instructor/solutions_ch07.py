"""Model answers to the exercises of chapter 7, for instructors (never imported by students)."""

from __future__ import annotations

from typing import Any

SOLUTIONS: dict[str, Any] = {
    "ch07.normalized": {
        "single": {"cpu": 2 + 4 + 3 + 1 + 3 + 1, "gpu": 3 + 1 + 2 + 4 + 3 + 2},
        "normalized": {"cpu": 14 / 15, "gpu": 1.0, "mixed": 11 / 15},
        "gain": 14 / 11 - 1,
    },
}
