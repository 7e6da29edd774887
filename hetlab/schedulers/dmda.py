"""StarPU's ``dmda`` and ``dmdar`` policies (Augonnet, Thibault, Namyst & Wacrenier, "StarPU: a
unified platform for task scheduling on heterogeneous multicore architectures", CCPE 23(2),
2011; policy names as in the StarPU handbook, "Task Scheduling Policies"). HOPE (§6) compares
against ``dmdar``.

Both are replayed as a discrete-event run of the StarPU runtime on the problem's costs:

- a node is *pushed* when its last predecessor finishes (ready order; ties in topological
  order). ``dmda`` ("deque model data aware") puts it in the queue of the device minimising its
  expected termination = max(now, the device's expected end) + transfer of its inputs + compute,
  and advances that device's expected end;
- a device that becomes idle takes the next node of its queue: in push order for ``dmda``; for
  ``dmdar`` ("... ready") the ones whose inputs already all live on that device come first
  (fewest inputs to fetch, then push order).

Devices that share cores (spec §3) are one resource here too: a device takes a node only
while none that shares its cores runs, and a push advances their expected ends with its own.
Transfers are blocking receives as in spec §3, so the start order replayed here, given to the
simulator as the plan's order, gives the same times. Times are in the problem's units.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.cost.shared import occupy
from hetlab.schedulers.base import register
from hetlab.schedulers.incremental import Timeline
from hetlab.schedulers.plan import Plan


def starpu_replay(problem: Problem, reorder: bool) -> Plan:
    """Replay StarPU's push/pop cycle; ``reorder`` selects dmdar's data-local-first pop."""
    tl = Timeline(problem)
    pos = {v: i for i, v in enumerate(problem.topo)}
    nd = len(problem.devices)
    exp_end = np.zeros(nd)
    queues: list[list[tuple[int, int, int]]] = [[] for _ in range(nd)]  # (key, seq, node)
    idle = [True] * nd
    running: list[tuple[float, int, int]] = []  # (finish, seq, node)
    waiting = [len(p) for p in problem.preds]
    seq = 0
    occ = problem.occupancy  # devices sharing cores run one at a time (spec §3)

    def push(batch: list[int], now: float) -> None:
        nonlocal seq
        for v in sorted(batch, key=pos.__getitem__):
            recv = tl.recv(v)
            term = np.maximum(exp_end, now) + recv + tl.cost[v]
            d = int(np.argmin(term))
            occupy(exp_end, d, term[d], occ)
            remote = sum(1 for u, _ in problem.preds[v] if tl.dev[u] != d) if reorder else 0
            tl.dev[v] = d  # decided at push time; timing comes at pop
            heapq.heappush(queues[d], (remote, seq, v))
            seq += 1

    push([v for v in problem.topo if waiting[v] == 0], 0.0)
    now = 0.0
    while True:
        for d in range(nd):
            if queues[d] and (idle[d] if occ is None else all(idle[c] for c in occ[d])):
                _, _, v = heapq.heappop(queues[d])
                f = now + float(tl.recv(v)[d] + tl.cost[v, d])
                tl.finish[v] = f
                tl.order.append(v)
                idle[d] = False
                heapq.heappush(running, (f, len(tl.order), v))
        if not running:
            break
        now = running[0][0]
        done: list[int] = []
        while running and running[0][0] <= now:
            _, _, v = heapq.heappop(running)
            idle[tl.dev[v]] = True
            for s, _ in problem.succs[v]:
                waiting[s] -= 1
                if waiting[s] == 0:
                    done.append(s)
        push(done, now)
    return tl.plan("dmdar" if reorder else "dmda")


@register("dmda", "StarPU dmda (min expected termination incl. transfers)")
def dmda(problem: Problem, progress: Any = None) -> Plan:
    """Each ready node to the device of least expected termination; FIFO queues."""
    return starpu_replay(problem, reorder=False)


@register("dmdar", "StarPU dmdar (dmda, data-local ready tasks first)")
def dmdar(problem: Problem, progress: Any = None) -> Plan:
    """``dmda`` placement; each device runs the queued nodes with local inputs first."""
    return starpu_replay(problem, reorder=True)
