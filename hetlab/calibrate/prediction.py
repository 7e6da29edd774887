"""A plan's predicted run time: spec §3's engine over the plan with named terms.

``predict`` times the plan with these terms, each priced by one measurement of the problem
(spec §5, "The prediction"):

- ``compute``: each node's cost on its device (``nodes[].cost``);
- ``transfer``: each cross-device edge's transfer over the links (``comm``), a blocking
  receive on the device that reads it;
- ``boundary``: the calibrated unit-boundary latency of each cross-device edge's device
  pair (the ``boundary`` section, ``calibrate/boundary.py``);
- ``host_io``: the model's inputs come from host memory and its outputs go back there: a
  zero-cost source and sink on the host device, whose edges to and from a remote device (a
  discrete GPU) are transfers over its links; an input goes once to each remote device
  that reads it, to its first reader there;
- ``host_dispatch``: each of the executor's units (``units.build_units``) first takes the host
  for its device's per-unit cost (``boundary`` ``per_unit_ms``), one unit at a time, and
  waits for every unit it depends on; it replaces the boundary latency of the pairs
  calibrated on the same run. A plan that is one unit is charged that device's ``excess_ms``;
- ``concurrency``: a unit that leaves the host while another device runs waits the
  calibrated surcharge (``boundary.concurrent``);
- ``queue_sharing``: a device's queue views (``extra.queues``) share it: their nodes cost
  the device's cost and advance at the shared rate, not at §3's slowed cost;
- ``graph_run``: a device family that runs as one captured graph (its ``extra.queues`` entry
  has ``run_ms`` and the plan keeps it to itself: no model edge to another device) starts
  ``run_ms`` late, is dispatched as that one graph, and its links to the host carry no
  calibrated boundary (measured where the device is fed unit by unit).

The terms are switched on one after another in that order; a term's share is how much the
makespan grows when it is switched on (negative where it prices more cheaply what an
earlier term priced), so the shares sum to the total. The first three are spec §3's
makespan, the subset the schedulers optimise (``SCHEDULED``).

Without ``host_dispatch``, ``queue_sharing`` and ``graph_run`` every task runs at full speed
as soon as its inputs and its device allow, and the plan goes through the schedulers' own
engine (``schedulers.sim.walk``, the one rule ``unit_times``) with the terms' edge costs:
the scheduled terms alone give ``simulate``'s makespan to the last digit. Those three terms
need a shared host, shared rates or a graph's launch, which ``events.EventSim`` adds to the
same rule.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from hetlab.calibrate.events import EventSim
from hetlab.calibrate.tasks import Setting, build_tasks, edge_costs, plain_units, setting
from hetlab.cost.problem import Problem
from hetlab.graph.ir import OpGraph
from hetlab.schedulers.plan import Plan
from hetlab.schedulers.sim import walk

TERMS = (
    "compute",
    "transfer",
    "boundary",
    "host_io",
    "host_dispatch",
    "concurrency",
    "queue_sharing",
    "graph_run",
)
SCHEDULED = TERMS[:3]  # spec §3's makespan
EVENTS = frozenset({"host_dispatch", "queue_sharing", "graph_run"})  # terms beyond §3's rule


@dataclass(frozen=True)
class Prediction:
    """``total_ms`` and each term's share of it (``terms``, in ``TERMS`` order: they sum to
    the total); ``finish``: each model node's finish time with every term; ``overlapped``:
    the units that left the host while another device ran."""

    total_ms: float
    terms: Mapping[str, float]
    finish: Mapping[str, float]
    overlapped: int = 0

    @property
    def makespan_ms(self) -> float:
        """spec §3's makespan: the schedulers' subset of the terms."""
        return self.upto(SCHEDULED[-1])

    def upto(self, term: str) -> float:
        """The prediction with ``term`` and the terms before it switched on."""
        return sum(v for k, v in self.terms.items() if TERMS.index(k) <= TERMS.index(term))

    def applies(self, term: str) -> bool:
        return term in self.terms

    def to_json(self) -> dict[str, Any]:
        return {
            "total_ms": round(self.total_ms, 4),
            "makespan_ms": round(self.makespan_ms, 4),
            "terms": {k: round(v, 4) for k, v in self.terms.items()},
        }


def predict(
    problem: Problem,
    graph: OpGraph,
    plan: Plan,
    *,
    host: str | None = None,
    remote: Collection[str] = (),
    terms: Collection[str] = TERMS,
    surcharge: float | None = None,
    breakdown: bool = True,
) -> Prediction:
    """``plan``'s prediction (see the module doc), with its order, fused groups and
    sequential flag. ``host``: the device standing for host
    memory (``host_io`` only applies with one of the problem's devices); ``remote``: the
    devices that do not share its memory; ``terms``: those to switch on; ``surcharge``:
    the concurrency surcharge to use instead of the problem's (ms). Without ``breakdown``
    only the total is simulated, and ``terms`` holds it whole under the last term on.
    Raises ``HetlabError`` for a plan that does not fit the problem."""
    st = setting(problem, graph, plan, host, remote, surcharge)
    on = [t for t in TERMS if t in terms and st.applies(t)]
    if not breakdown:
        ms, finish, over = simulate(st, frozenset(on))
        return Prediction(ms, {on[-1] if on else "compute": ms}, finish, over)
    shares: dict[str, float] = {}
    before = 0.0
    for i, term in enumerate(on):
        ms, finish, over = simulate(st, frozenset(on[: i + 1]))
        shares[term], before = ms - before, ms
    if not on:
        finish, over = {}, 0
    return Prediction(before, shares, finish, over)


def simulate(st: Setting, on: frozenset[str]) -> tuple[float, dict[str, float], int]:
    """(makespan, each model node's finish, units overlapped) with the terms ``on``."""
    comm = edge_costs(st, on)
    if not on & EVENTS:
        _, fin = walk(st.p, st.dev, plain_units(st, on), st.sequential, comm)
        idx = st.p.index
        return max(fin, default=0.0), {v: fin[idx[v]] for v in st.model_nodes}, 0
    tasks, lanes, share = build_tasks(st, on, comm)
    sim = EventSim(tasks, lanes, share, st.surcharge if "concurrency" in on else 0.0)
    fin = sim.run()
    finish = {v: fin[st.task_of[v]] for v in st.model_nodes}
    return max(fin, default=0.0), finish, sim.overlapped
