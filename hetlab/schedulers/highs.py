"""HiGHS made without its banner.

HiGHS prints a two-line banner on file descriptor 1, through C's buffer, when the process
makes its first solver, before any option can silence it. On stdout it breaks a plan or
report written there as JSON; in a notebook ipykernel shows it under whichever cell ran
last. So every place that makes a HiGHS solver (the ILP windows, the DAG's layering) first
calls ``without_banner``, which makes the process's first solver with stdout and stderr on
the null device, once.

HiGHS keeps one thread pool per process, sized by the ``threads`` option of the first solver
that runs; a later solver asking for another size is refused ("the scheduler has already
been initialized") and returns no solution. So every solver here runs on ``THREADS``, and
an ILP solve refused after a user's own solver sized the pool runs again on a fresh one
(``reset_thread_pool``).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

THREADS = 1  # every HiGHS solver of the process: one thread, so seeded solves repeat


@functools.cache
def without_banner() -> None:
    """Make the process's first HiGHS solver where its banner goes nowhere (a no-op
    without highspy, and after the first call)."""
    try:
        # lazy: highspy is optional (the ILP falls back to CBC without it) and slow to import
        import highspy
    except ImportError:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        highspy.Highs()
        ctypes.CDLL(None).fflush(None)  # the banner leaves C's buffer while it goes nowhere
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def reset_thread_pool() -> None:
    """Let the next HiGHS solver size the process's thread pool again (the one before was
    sized by a solver that asked for another number of threads)."""
    # lazy: highspy is optional and slow to import
    import highspy

    highspy.Highs.resetGlobalScheduler(True)
