"""HiGHS prints a two-line banner on its process's first solver, before any option can silence
it. ipykernel shows what the process writes on its file descriptors in the notebook, under
whichever cell ran last, so the workbench makes that first solver with both descriptors on
the null device, once, before it lays out a DAG or solves a plan."""

from __future__ import annotations

import ctypes
import functools
import os
import sys


@functools.cache
def swallow_highs_banner() -> None:
    """Make the process's first HiGHS solver with stdout and stderr on the null device."""
    try:
        # lazy: highspy is optional (the ILP falls back to CBC without it)
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
