"""The workbench's background lanes: order, supersession, cancellation, stale results."""

from __future__ import annotations

import threading
import time

from hetlab.widgets.tasks import Cancelled, Lanes


def _lanes():
    idle = []
    return Lanes(threading.RLock(), on_idle=lambda: idle.append(True)), idle


def test_a_queue_lane_runs_every_task_in_order_off_the_calling_thread():
    lanes, idle = _lanes()
    seen, threads = [], []
    for i in range(3):
        lanes.submit(
            "model", lambda t, i=i: threads.append(threading.current_thread()) or i, seen.append
        )
    assert lanes.wait(10)
    assert seen == [0, 1, 2] and threading.current_thread() not in threads and idle


def test_a_newer_request_supersedes_the_running_and_pending_ones():
    lanes, _ = _lanes()
    started, done, failed = threading.Event(), [], []

    def slow(task):
        started.set()
        for i in range(200):
            task.progress(i, 200, "step")
            time.sleep(0.01)
        return "slow"

    lanes.submit("solve", slow, done.append, failed.append, supersede=True)
    started.wait(5)
    lanes.submit("solve", lambda t: "middle", done.append, failed.append, supersede=True)
    lanes.submit("solve", lambda t: "newest", done.append, failed.append, supersede=True)
    assert lanes.wait(10)
    assert done == ["newest"]  # the middle one never ran; the slow one stopped
    assert [type(e) for e in failed] == [Cancelled]  # a dropped pending task says nothing


def test_cancel_stops_at_the_next_progress_and_drops_a_late_result():
    lanes, _ = _lanes()
    started, done, failed = threading.Event(), [], []

    def no_progress(task):
        started.set()
        time.sleep(0.2)  # cannot be interrupted: its result arrives after Cancel
        return "late"

    lanes.submit("run", no_progress, done.append, failed.append)
    started.wait(5)
    assert lanes.busy("run") and lanes.cancel() == 1
    assert lanes.wait(10)
    assert done == [] and isinstance(failed[0], Cancelled) and not lanes.busy()


def test_progress_reports_are_throttled_but_the_last_step_always_shows():
    lanes, _ = _lanes()
    shown = []

    def work(task):
        for i in range(1, 1001):
            task.progress(i, 1000, f"step {i}")

    lanes.submit("model", work, lambda r: None, on_progress=lambda d, n, m: shown.append(d))
    assert lanes.wait(10)
    assert shown[-1] == 1000 and len(shown) < 50
