"""Model answers to the exercises of chapter 6, for instructors (never imported by students)."""

from __future__ import annotations

from typing import Any

SOLUTIONS: dict[str, Any] = {
    "ch06.critical": {
        "start": {"A": 0.0, "B": 2.0, "C": 2.0, "D": 5.0, "E": 5.0, "F": 9.0},
        "critical": ["A", "C", "E", "F"],
    },
}
