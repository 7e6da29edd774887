"""Helpers shared by the stretch tests (a fixed cost model, no measuring)."""

from __future__ import annotations

from hetlab.stretch.transform import CostModel

DEVICES = ["cpu0", "cpu1"]


def cost_model() -> CostModel:
    return CostModel({"cpu0": 2e7, "cpu1": 2e7}, {"cpu0": 0.02, "cpu1": 0.02})
