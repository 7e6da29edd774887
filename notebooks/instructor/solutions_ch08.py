"""Model answers to the exercises of chapter 8, for instructors (never imported by students)."""

from __future__ import annotations

from typing import Any

SOLUTIONS: dict[str, Any] = {
    "ch08.balance": {
        "flops": {"cpu": 160 * 30 / 80, "gpu": 160 * 50 / 80},
        "branch_ms": {"cpu": 60 / 30, "gpu": 100 / 50},
        "stretched_ms": 2.0 + 0.2 + 0.3,
        "eq4": 0.2 + 0.3 <= 0.1 * 160 / 50,
    },
}
