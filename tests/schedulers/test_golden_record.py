"""Every algorithm's plan and the calibrated predictions are, to the last digit, what
``golden_record.py`` recorded (``data/golden_record.json``): the timing model's code may move,
its numbers may not. The test takes the record's quick part; ``golden_record.py --check``
all of it."""

from __future__ import annotations

import json

import pytest

from tests.schedulers import golden_record

RECORDED = json.loads(golden_record.RECORD.read_text())


@pytest.mark.parametrize("name", golden_record.QUICK)
def test_plans_are_as_recorded(name):
    assert golden_record.plans(name) == RECORDED["plans"][name]


@pytest.mark.parametrize("profile", [x[0] for x in golden_record.PREDICTED])
def test_predictions_are_as_recorded(profile):
    want = {k: v for k, v in RECORDED["predictions"].items() if k.startswith(f"{profile}/")}
    assert want and golden_record.predictions(profile) == want
