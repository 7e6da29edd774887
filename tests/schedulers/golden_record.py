"""The golden record of the timing model: what every scheduler plans and what a calibrated
prediction says, to the last digit.

``python tests/schedulers/golden_record.py`` writes ``data/golden_record.json`` for whichever
``hetlab`` is on the path, and ``--check`` compares the current code with all of it;
``test_golden_record.py`` compares the ``QUICK`` part (a few seconds).
Plans: every registered algorithm but the ILPs (minutes each there) on each HOPE profile
and each calibrated profile the repository ships (these have devices sharing cores): a digest
of the device per node, the order and the fused groups, and the makespan's ``repr``; every
algorithm, the ILPs included, on the small test problems is ``test_shared_unchanged.py``'s. Predictions: ``prediction.predict`` of a few plans on the calibrated profiles under
``data/profiles``, every term's share, the total and each node's finish as ``repr``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOPE = ROOT / "data" / "hope-profiles"
PROFILES = ROOT / "data" / "profiles"
RECORD = Path(__file__).resolve().parent / "data" / "golden_record.json"
SLOW = {"ilp", "ilp+", "partitiontuner"}
# (profile, model, host, remote devices)
PREDICTED = [
    ("h100-16core/googlenet", "googlenet", "cpu0", ()),
    ("h200-16core/googlenet", "googlenet", "cpu0", ("cuda0",)),
    ("h200-16core/googlenet-streams", "googlenet", None, ()),
    ("xeon-2core-pocl/squeezenet", "squeezenet", "cpu0", ()),
]
PREDICT_ALGOS = ["heft", "greedy", "dmda", "peft"]
# the test's share: two HOPE profiles besides ``plan_digests.HOPE_QUICK`` (whose plans
# ``test_shared_unchanged.py`` holds), and the shipped profiles of two models
QUICK = [
    "hope/inception-v4-mi9",
    "hope/nasnet-mobile-vivo_z3",
    "profiles/h200-16core/googlenet",
    "profiles/h200-16core/googlenet-streams",
    "profiles/xeon-2core-pocl/googlenet",
    "profiles/xeon-2core-pocl/squeezenet",
]


def _digest(x) -> str:
    return hashlib.sha256(json.dumps(x, sort_keys=True).encode()).hexdigest()[:16]


def problem_files() -> dict[str, Path]:
    """Name -> file of every problem the plans are recorded on."""
    out = {f"hope/{p.stem}": p for p in sorted(HOPE.glob("*.json"))}
    out.update({f"profiles/{p.parent.name}/{p.stem}": p for p in sorted(PROFILES.glob("*/*.json"))})
    return out


def plans(name: str) -> dict[str, list]:
    """``algo`` -> [digest of (device per node, order, fused), repr of makespan] on ``name``."""
    from hetlab.cost.problem import Problem
    from hetlab.errors import HetlabError
    from hetlab.schedulers import algorithms, schedule

    problem = Problem.load(problem_files()[name])
    names = [a for a in algorithms() if a != "single:DEVICE" and a not in SLOW]
    out: dict[str, list] = {}
    for algo in [*names, *(f"single:{d}" for d in problem.devices)]:
        try:
            plan = schedule(problem, algo)
        except HetlabError as e:
            out[algo] = [f"error: {e}", ""]
            continue
        placed = [plan.device_of, plan.order, plan.fused, plan.sequential]
        out[algo] = [_digest(placed), repr(plan.makespan)]
    return out


def predictions(only: str | None = None) -> dict[str, dict]:
    """``profile/algo`` -> the prediction's terms, total and finish digest, as ``repr``;
    ``only``: that profile's alone."""
    from hetlab.calibrate.prediction import predict
    from hetlab.cost.problem import Problem
    from hetlab.graph import load
    from hetlab.schedulers import schedule

    out: dict[str, dict] = {}
    for prof, model, host, remote in PREDICTED:
        if only is not None and prof != only:
            continue
        problem = Problem.load(PROFILES / f"{prof}.json")
        graph = load(model)
        for algo in PREDICT_ALGOS:
            plan = schedule(problem, algo)
            got = predict(problem, graph, plan, host=host, remote=set(remote))
            out[f"{prof}/{algo}"] = {
                "terms": {k: repr(v) for k, v in got.terms.items()},
                "total": repr(got.total_ms),
                "finish": _digest({k: repr(v) for k, v in got.finish.items()}),
                "overlapped": got.overlapped,
                "json": got.to_json(),
            }
    return out


def record() -> dict:
    return {"plans": {n: plans(n) for n in problem_files()}, "predictions": predictions()}


if __name__ == "__main__":
    if "--check" in sys.argv:
        before, now = json.loads(RECORD.read_text()), record()
        bad = [n for n in before["plans"] if before["plans"][n] != now["plans"][n]]
        bad += [
            k for k in before["predictions"] if before["predictions"][k] != now["predictions"][k]
        ]
        print("changed:", bad or "nothing")
        sys.exit(1 if bad else 0)
    RECORD.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
