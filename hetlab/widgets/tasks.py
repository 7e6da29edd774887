"""Background work for the workbench: lanes of tasks run off the kernel thread.

The kernel thread only starts tasks and returns, so the widget stays responsive while a
model loads, a profile is measured or a plan is solved. Each lane runs its tasks one after
the other on a worker thread:

- a *queue* lane (``supersede=False``) runs every task in order (load, then profile);
- a *latest-wins* lane (``supersede=True``) keeps only the newest pending task and cancels
  the running one (a newer slider move makes an older solve useless).

A cancelled task stops at its next ``progress`` call, which raises ``Cancelled``; its result,
if it still finishes, is dropped. ``done``/``failed`` callbacks run on the worker thread while
holding ``lock``, the lock every widget update of the workbench takes, so that updates from
the worker and from the kernel thread never interleave (ipykernel sends comm messages from any
thread through its IOPub thread).
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hetlab.errors import HetlabError


class Cancelled(HetlabError):
    """A background task stopped by Cancel or by a newer request."""


@dataclass
class Task:
    """One unit of background work; ``work(task)`` calls ``task.progress`` to report and to
    notice cancellation."""

    lane: str
    work: Callable[[Task], Any]
    done: Callable[[Any], None]
    failed: Callable[[BaseException], None] | None = None
    on_progress: Callable[[int, int, str], None] | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    _last_report: float = 0.0

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled(f"{self.lane}: cancelled")

    def progress(self, done: int, total: int, message: str = "") -> None:
        """The profiler's and the schedulers' progress callback: reports at most ten times a
        second (and always the last step), and raises ``Cancelled`` once cancelled."""
        self.check()
        if self.on_progress is None:
            return
        now = time.monotonic()
        if now - self._last_report >= 0.1 or done >= total:
            self._last_report = now
            self.on_progress(done, total, message)


class Lanes:
    """Named lanes of background tasks sharing one UI ``lock``. ``on_idle`` is called, holding
    ``lock``, when the last task of every lane has finished (callers that submit while holding
    ``lock`` see it strictly before or after their submission)."""

    def __init__(self, lock: threading.RLock, on_idle: Callable[[], None] | None = None) -> None:
        self.lock = lock
        self.on_idle = on_idle
        self._cv = threading.Condition()
        self._pending: dict[str, list[Task]] = {}
        self._running: dict[str, Task | None] = {}
        self._workers: dict[str, threading.Thread] = {}
        self._active = 0  # tasks submitted and not yet finished (callbacks included)

    def submit(
        self,
        lane: str,
        work: Callable[[Task], Any],
        done: Callable[[Any], None],
        failed: Callable[[BaseException], None] | None = None,
        on_progress: Callable[[int, int, str], None] | None = None,
        supersede: bool = False,
    ) -> Task:
        """Queue ``work`` on ``lane`` and return at once."""
        task = Task(lane, work, done, failed, on_progress)
        with self._cv:
            queue = self._pending.setdefault(lane, [])
            if supersede:
                self._drop(queue)
                running = self._running.get(lane)
                if running is not None:
                    running.cancelled.set()
            queue.append(task)
            self._active += 1
            if lane not in self._workers:
                t = threading.Thread(target=self._drain, args=(lane,), daemon=True)
                t.name = f"hetlab-widget-{lane}"
                self._workers[lane] = t
                t.start()
        return task

    def cancel(self, lane: str | None = None) -> int:
        """Cancel the running and pending tasks of ``lane`` (every lane when None); returns
        how many tasks were told to stop."""
        n = 0
        with self._cv:
            for name in [lane] if lane else list(self._pending):
                running = self._running.get(name)
                if running is not None and not running.cancelled.is_set():
                    running.cancelled.set()
                    n += 1
                n += self._drop(self._pending.get(name, []))
            self._cv.notify_all()
        return n

    def busy(self, lane: str | None = None) -> bool:
        with self._cv:
            if lane is None:
                return self._active > 0
            return bool(self._pending.get(lane)) or self._running.get(lane) is not None

    def wait(self, timeout: float | None = 60.0) -> bool:
        """Block until every lane is idle (tests and scripts); False on timeout."""
        with self._cv:
            return self._cv.wait_for(lambda: self._active == 0, timeout)

    def _drop(self, queue: list[Task]) -> int:
        """Cancel and forget pending tasks (they never run: no callback); holds ``_cv``."""
        for t in queue:
            t.cancelled.set()
        n = len(queue)
        queue.clear()
        self._active -= n
        return n

    def _drain(self, lane: str) -> None:
        while True:
            with self._cv:
                queue = self._pending.get(lane, [])
                if not queue:
                    self._running[lane] = None
                    del self._workers[lane]
                    return
                task = queue.pop(0)
                self._running[lane] = task
            try:
                self._run(task)
            except Exception:  # noqa: BLE001  a bug in a widget update: shown, the lane goes on
                traceback.print_exc()
            finally:
                with self._cv:
                    self._running[lane] = None
                self._finished()

    def _finished(self) -> None:
        with self.lock:
            with self._cv:
                last = self._active == 1
            if last and self.on_idle is not None:
                try:
                    self.on_idle()
                except Exception:  # noqa: BLE001  as above
                    traceback.print_exc()
            with self._cv:
                self._active -= 1
                self._cv.notify_all()

    def _run(self, task: Task) -> None:
        try:
            task.check()
            result = task.work(task)
            task.check()  # a result that arrives after Cancel is stale: dropped
        except BaseException as e:  # noqa: BLE001  reported in the widget, never lost on a thread
            if task.failed is not None:
                with self.lock:
                    task.failed(e)
            return
        with self.lock:
            task.done(result)
