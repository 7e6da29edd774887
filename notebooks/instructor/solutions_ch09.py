"""Model answers to the exercises of chapter 9, for instructors (never imported by students)."""

from __future__ import annotations

from typing import Any

SOLUTIONS: dict[str, Any] = {
    "ch09.cells": {"per_problem": {"greedy": 3, "ilp": 2 * 3 * 1, "heft": 1}, "total": 3 * 10},
    "ch09.workers": {"cpus": 1.5, "workers": 1},
}
