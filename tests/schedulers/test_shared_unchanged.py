"""With no devices sharing cores, every algorithm's plan is byte for byte what it was before
spec §3 knew about shared cores: ``data/plan_digests.json`` holds the digests that code gave
(``plan_digests.py``, run on the commit before), on the test problems and two HOPE profiles."""

from __future__ import annotations

import json
from pathlib import Path

from tests.schedulers.plan_digests import digests

RECORDED = Path(__file__).resolve().parent / "data" / "plan_digests.json"


def test_plans_without_shared_cores_are_unchanged():
    before = json.loads(RECORDED.read_text())
    now = digests()
    assert sorted(now) == sorted(before)
    changed = [k for k in before if now[k] != before[k]]
    assert not changed, f"plans changed: {changed[:5]}"
