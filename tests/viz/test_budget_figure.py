"""``budget_figure``: speed against error, the budget a vertical line, the choice ringed."""

from __future__ import annotations

import pytest

from hetlab.errors import HetlabError
from hetlab.viz import budget_figure
from hetlab.viz.budget import ZERO_ERR

ROWS = [
    {"precision": "fp32", "candidate": "single:g", "measured": 2.0, "max_rel_err": 0.0},
    {"precision": "g=tf32", "candidate": "single:g", "measured": 1.0, "max_rel_err": 3e-3},
    {"precision": "g=tf32", "candidate": "heft", "measured": None, "max_rel_err": None}
    | {"error": "boom"},
]


def test_points_within_the_budget_are_filled_and_the_chosen_one_ringed():
    fig = budget_figure(ROWS, 1e-3, chosen="fp32 single:g")
    by = {t.name: t for t in fig.data}
    assert list(by["fp32"].x) == [ZERO_ERR] and list(by["fp32"].marker.symbol) == ["circle"]
    assert list(by["g=tf32"].marker.symbol) == ["circle-open"]  # over the budget
    assert list(by["chosen: fp32 single:g"].y) == [2.0]
    (line,) = fig.layout.shapes
    assert line.x0 == 1e-3 and "1 failed or unchecked" in fig.layout.title.text
    assert fig.layout.xaxis.type == "log"


def test_no_choice_no_ring_and_a_budget_is_positive():
    assert len(budget_figure(ROWS, 1e-7).data) == 2
    with pytest.raises(HetlabError):
        budget_figure(ROWS, 0)
