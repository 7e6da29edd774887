"""Digests of every algorithm's plan JSON on problems where no two devices share cores.

``python tests/schedulers/plan_digests.py OUT.json [--full | --full=PREFIX]`` writes them for whichever
``hetlab`` is on the path: run with the code before devices could share cores to record
``data/plan_digests.json``; ``test_shared_unchanged.py`` compares the current code against
it. Timings (solve seconds, per-window seconds) and the session's cache flag are left out:
they are the only parts of a plan that are not a function of its input; ``ilp+`` runs
without its local search, whose kicks are bounded by the clock, and the ILPs without their
wall-clock safety net, which a loaded machine may reach.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAGA = Path(__file__).resolve().parent / "data" / "saga"
HOPE = ROOT / "data" / "hope-profiles"
VOLATILE = {"window_s_max", "cached"}
# the quick set: every algorithm on these, and all but the ILPs on the HOPE pair
HOPE_QUICK = ["inception-v3-redmi", "pnasnet-mobile-mi9"]
SLOW = {"ilp", "ilp+", "partitiontuner"}


def _volatile(key: str) -> bool:
    return key in VOLATILE or key.endswith(("_s", "seconds"))


def _clean(x):
    if isinstance(x, dict):
        out = {k: _clean(v) for k, v in x.items() if not _volatile(k)}
        for row in out.get("window_log") or []:
            row[3:4] = []  # the window's seconds
        return out
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def digest(plan_doc: dict) -> str:
    doc = _clean(plan_doc)
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def problems(full: bool | str = False):
    """(name, problem document) of the small test problems, and of HOPE's profiles (``full``:
    all of them, or those whose name starts with it)."""
    for p in sorted(SAGA.glob("*.problem.json")):
        yield p.name.removesuffix(".problem.json"), json.loads(p.read_text())
    prefix = full if isinstance(full, str) else ""
    every = sorted(x.stem for x in HOPE.glob("*.json") if x.stem.startswith(prefix))
    names = every if full else HOPE_QUICK
    for n in names:
        yield n, json.loads((HOPE / f"{n}.json").read_text())


def algos(problem) -> list[str]:
    from hetlab.schedulers import algorithms

    names = [a for a in algorithms() if a != "single:DEVICE"]
    return names + [f"single:{d}" for d in problem.devices]


def digests(full: bool | str = False, out_path: Path | None = None) -> dict[str, str]:
    from hetlab.cost.problem import Problem
    from hetlab.errors import HetlabError
    from hetlab.schedulers import schedule

    out = {}
    for name, doc in problems(full):
        problem = Problem.from_json(doc, source=name)
        hope = name in HOPE_QUICK or not name[:2].isdigit()
        for algo in algos(problem):
            if hope and algo in SLOW and not full:
                continue
            kw = {"search": False} if algo == "ilp+" else {}  # its search runs on the clock
            if algo in ("ilp", "ilp+"):  # no wall-clock safety net: the node budget alone
                kw["time_limit"] = 86400.0
            try:
                out[f"{name}/{algo}"] = digest(schedule(problem, algo, **kw).to_json())
            except HetlabError as e:
                out[f"{name}/{algo}"] = f"error: {e}"
        if out_path is not None:  # what is done so far, for a long run
            out_path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    return out


if __name__ == "__main__":
    chosen = next((a.removeprefix("--full=") for a in sys.argv if a.startswith("--full=")), "")
    digests(chosen or "--full" in sys.argv, Path(sys.argv[1]))
