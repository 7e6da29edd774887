"""The event simulation behind every prediction of a run (``prediction.predict``).

Tasks (a node, or a fused group) run on lanes (a device or queue, each in the plan's order;
one lane for a sequential plan), a task once its lane is free and every task it waits for
has finished. A task passes through up to three phases:

- ``host``: a task that starts one of the executor's units first takes the host for its
  dispatch; the host serves one unit at a time, the earliest ready first (Python dispatch and
  thread hand-offs hold the GIL). A unit that leaves the host while another lane is running
  then waits ``surcharge`` more;
- ``wait``: its blocking receives (and that surcharge), at full speed;
- ``work``: its compute. A task of a shared family (a device and its queue views) advances at
  rate 1 / (1 + (k - 1)(s - 1)/(q - 1)) while k of the family's tasks are in ``work``
  (``share[family] = (s, q)``); any other task at rate 1.

With no dispatch, no surcharge and no family this is spec §3's rule, which ``prediction``
leaves to ``schedulers.sim.walk``: it runs this simulation only where one of them is on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hetlab.errors import HetlabError

EPS = 1e-12


@dataclass
class Task:
    lane: str
    work: float  # compute at full speed (ms)
    waits: list[int] = field(default_factory=list)  # tasks whose outputs it needs
    recv: float = 0.0  # blocking receives (ms)
    host: float | None = None  # dispatch on the host when it starts a unit (ms), else None
    family: str | None = None  # the shared family its work runs in, if any
    not_before: float = 0.0  # the earliest it may start (a graph's launch)
    name: str = ""


@dataclass
class _Lane:
    tasks: list[int]
    head: int = 0
    task: int | None = None  # the task it runs now
    phase: str = ""  # "want" (the host), "host", "wait" or "work"
    left: float = 0.0
    since: float = 0.0  # when it asked for the host


class EventSim:
    """``run()`` -> each task's finish time (see the module doc)."""

    def __init__(
        self,
        tasks: Sequence[Task],
        lanes: Mapping[str, Sequence[int]],
        share: Mapping[str, tuple[float, int]],
        surcharge: float = 0.0,
    ):
        self.tasks, self.share, self.surcharge = tasks, share, surcharge
        self.lanes = {k: _Lane(list(v)) for k, v in lanes.items()}
        self.finish = [-1.0] * len(tasks)
        self.host_busy = False
        self.now = 0.0
        self.left = len(tasks)
        self.overlapped = 0  # units that left the host while another lane ran

    def run(self) -> list[float]:
        while self.left:
            self._start()
            active = [ln for ln in self.lanes.values() if ln.phase in ("host", "wait", "work")]
            gates = [self._gate(ln) for ln in self.lanes.values() if ln.task is None]
            later = min((g for g in gates if g > self.now + EPS), default=None)
            if not active:
                if later is None:
                    raise HetlabError(f"plan order deadlocks at {self._stuck()!r}")
                self.now = later
                continue
            rates = self._rates(active)
            dt = min(ln.left / rates[id(ln)] for ln in active)
            if later is not None:
                dt = min(dt, later - self.now)
            self.now += dt
            for ln in active:
                ln.left -= dt * rates[id(ln)]
            self._advance(active)
        return self.finish

    def _gate(self, ln: _Lane) -> float:
        """When the lane's next task may start as far as its ``not_before`` goes (inf: none)."""
        return self.tasks[ln.tasks[ln.head]].not_before if ln.head < len(ln.tasks) else 1e300

    def _stuck(self) -> str:
        heads = [ln.tasks[ln.head] for ln in self.lanes.values() if ln.head < len(ln.tasks)]
        return self.tasks[heads[0]].name if heads else "?"

    def _rates(self, active: list[_Lane]) -> dict[int, float]:
        busy: dict[str, int] = {}
        for ln in active:
            f = self.tasks[ln.task].family if ln.phase == "work" else None  # type: ignore[index]
            if f is not None:
                busy[f] = busy.get(f, 0) + 1
        out = {}
        for ln in active:
            f = self.tasks[ln.task].family if ln.phase == "work" else None  # type: ignore[index]
            if f is None or f not in self.share:
                out[id(ln)] = 1.0
                continue
            s, q = self.share[f]
            out[id(ln)] = 1.0 / (1.0 + (busy[f] - 1) * (s - 1.0) / max(1, q - 1))
        return out

    def _advance(self, active: list[_Lane]) -> None:
        """Move every lane whose phase ran out to its next phase (finishes before the
        host's hand-overs, so a unit leaving the host sees who still runs)."""
        for ln in active:
            while ln.phase in ("wait", "work") and ln.left <= EPS:
                if ln.phase == "wait":
                    ln.phase, ln.left = "work", self.tasks[ln.task].work  # type: ignore[index]
                else:
                    self.finish[ln.task] = self.now  # type: ignore[index]
                    ln.task, ln.phase = None, ""
                    self.left -= 1
        for name, ln in self.lanes.items():
            if ln.phase == "host" and ln.left <= EPS:
                self.host_busy = False
                t = self.tasks[ln.task]  # type: ignore[index]
                beside = any(
                    o.phase in ("wait", "work") for k, o in self.lanes.items() if k != name
                )
                self.overlapped += beside
                ln.phase, ln.left = "wait", t.recv + (self.surcharge if beside else 0.0)
                self._advance([ln])

    def _start(self) -> None:
        moved = True
        while moved:
            moved = False
            for ln in self.lanes.values():
                if ln.task is not None or ln.head >= len(ln.tasks):
                    continue
                i = ln.tasks[ln.head]
                t = self.tasks[i]
                if t.not_before > self.now + EPS or any(self.finish[w] < 0 for w in t.waits):
                    continue
                ln.head += 1
                ln.task, ln.since = i, self.now
                if t.host is not None:
                    ln.phase = "want"
                else:
                    ln.phase, ln.left = "wait", t.recv
                    self._advance([ln])
                moved = True
            moved = self._grant() or moved

    def _grant(self) -> bool:
        """Give a free host to the unit that asked first (the earlier task on a tie)."""
        if self.host_busy:
            return False
        asking = [ln for ln in self.lanes.values() if ln.phase == "want"]
        if not asking:
            return False
        ln = min(asking, key=lambda x: (x.since, x.task))
        ln.phase, ln.left = "host", self.tasks[ln.task].host  # type: ignore[index]
        self.host_busy = True
        if ln.left <= EPS:  # a free dispatch leaves the host at once
            self._advance([ln])
        return True
