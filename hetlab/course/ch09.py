"""Chapter 9 exercises: how many cells a sweep has, and how many Dask workers a container
should start."""

from __future__ import annotations

from typing import Any

from hetlab.course.exercise import Exercise, Step, Table, register
from hetlab.course.wrong import how_far
from hetlab.devices.cgroup import Limits
from hetlab.sweep import cells, worker_sizing

# the exercise's sweep: three problems, three algorithms, this grid
PROBLEMS = ("redmi", "vivo_z3", "lenovo_k5")
ALGOS = ("greedy", "ilp", "heft")
GRID = {"nt": [6, 12], "epsilon": [0.1, 0.2, 0.4], "k": [2, 3, 4], "time_limit": [0.2]}
# the exercise's container: 8 visible cores, cpu.max and memory.max as below
VISIBLE = 8
CPU_MAX = "150000 100000"
MEMORY_MAX = 3 << 30


def expected_cells() -> dict[str, Any]:
    """Cells per problem for each algorithm, and in all (from the sweep's own rule)."""

    docs = {p: {"name": p} for p in PROBLEMS}
    per: dict[str, int] = {}
    for c in cells(docs, list(ALGOS), GRID):
        if c["problem"] == PROBLEMS[0]:
            per[c["algo"]] = per.get(c["algo"], 0) + 1
    return {"per_problem": per, "total": sum(per.values()) * len(PROBLEMS)}


def expected_workers() -> dict[str, Any]:
    quota, period = (int(x) for x in CPU_MAX.split())
    lim = Limits(cpus=quota / period, memory=MEMORY_MAX)
    n, _ = worker_sizing(None, lim, visible=VISIBLE)
    return {"cpus": quota / period, "workers": n}


def _cells_exercise() -> Exercise:
    def per_problem(answer: Any) -> str | None:
        got = answer["per_problem"]
        want = expected_cells()["per_problem"]
        wrong = Table(want, order=list(ALGOS)).first_wrong(got)
        if wrong is None:
            return None
        return f"{wrong}: {got.get(wrong)} cells is {how_far(got.get(wrong), want[wrong])}"

    def total(answer: Any) -> str | None:
        want = expected_cells()["total"]
        got = int(answer["total"])
        return None if got == want else f"{got} is {how_far(got, want)}"

    return Exercise(
        key="ch09.cells",
        title="the cells of a sweep",
        hints=(
            (
                "A cell is one problem, one algorithm and one value of each grid parameter "
                "that the algorithm takes; parameters it does not take do not multiply its cells."
            ),
            (
                "`[p.name for p in algorithm('ilp').params]` lists what an algorithm takes. "
                "Its cells per problem multiply the numbers of grid values of those parameters."
            ),
        ),
        steps=(
            Step("the cells per problem", per_problem),
            Step("the total", total),
        ),
        skeleton=(
            "answer = {\n"
            '    "per_problem": {"greedy": ..., "ilp": ..., "heft": ...},\n'
            '    "total": ...,  # over the three problems\n'
            "}"
        ),
        done="`hetlab.sweep.cells(problems, algos, grid)` lists them.",
    )


def _workers_exercise() -> Exercise:
    def cpus(answer: Any) -> str | None:
        want = expected_workers()["cpus"]
        got = float(answer["cpus"])
        return None if abs(got - want) < 1e-9 else f"{got} CPUs is {how_far(got, want)}"

    def workers(answer: Any) -> str | None:
        want = expected_workers()["workers"]
        got = int(answer["workers"])
        if got == want:
            return None
        if got == VISIBLE:
            return "that is one per visible core; the quota grants fewer"
        return f"{got} workers is {how_far(got, want)} for what the quota and memory allow"

    return Exercise(
        key="ch09.workers",
        title="Dask workers in a container",
        hints=(
            (
                'cpu.max holds "QUOTA PERIOD" in µs: the container may use QUOTA µs of CPU '
                "time every PERIOD µs, that is QUOTA / PERIOD CPUs."
            ),
            (
                "One single-threaded worker per whole CPU granted (rounded down, at least 1), "
                "and no more workers than the memory gives 1 GiB each."
            ),
        ),
        steps=(Step("the CPUs granted", cpus), Step("the workers", workers)),
        skeleton='answer = {"cpus": ..., "workers": ...}',
        done="hetlab.sweep.worker_sizing() does this from the container's own cgroup files.",
    )


register(_cells_exercise())
register(_workers_exercise())
