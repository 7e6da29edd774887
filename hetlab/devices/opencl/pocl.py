"""What PoCL needs to build hetlab's kernels right, and the size of its thread pool.

PoCL 5 builds a work-group, by default, as loops around its barriers, and that build of the
tiled GEMM (``gemm.cl``) computes wrong results (zeros, or -FLT_MAX from the epilogue's
clamp) whenever the launch has more than one group along its third dimension: split-K and
batched GEMMs, so every Conv that splits K. It does so on any thread count. PoCL's other
method, continuation-based barriers (``cbs``), builds it right, as an unoptimised build
does. So on PoCL 5 and later, programs are built under ``cbs`` unless the user chose a
method; ``-DHETLAB_POCL_CBS`` among the build options keeps those builds apart from the
others in PoCL's and hetlab's program caches. Figures: docs/decisions.md#pocl-5.

PoCL's CPU driver starts one thread per core it sees, and every launch wakes the whole pool:
a launch costs about 40 us with 16 threads and 15 us with 8. So on 4 or more physical cores,
where the CPU groups are halves, PoCL's pool is sized as one group (``size_pool``, before the
platform is enumerated), unless the user sized it (``POCL_CPU_MAX_CU_COUNT``). Figures:
docs/decisions.md#pocls-pool.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from typing import Any

from hetlab.devices import cpu_groups

WORK_GROUP_METHOD = "cbs"
CBS_OPTION = "-DHETLAB_POCL_CBS"
FIRST_AFFECTED = 5  # PoCL's major version
POOL_ENV = "POCL_CPU_MAX_CU_COUNT"


def pocl_major(cl_device: Any) -> int | None:
    """PoCL's major version from the device's platform ("OpenCL 3.0 PoCL 5.0+debian ..."),
    None on any other platform."""
    try:
        version = str(cl_device.platform.version)
    except Exception:  # noqa: BLE001 - a device that cannot say is no PoCL we know
        return None
    m = re.search(r"\bPoCL (\d+)\.", version)
    return int(m.group(1)) if m else None


def build_options(cl_device: Any) -> list[str]:
    """``[CBS_OPTION]`` after choosing ``cbs`` for PoCL's builds in this process, on a PoCL
    that needs it and where ``POCL_WORK_GROUP_METHOD`` is not set already; else ``[]``."""
    major = pocl_major(cl_device)
    if major is None or major < FIRST_AFFECTED:
        return []
    chosen = os.environ.get("POCL_WORK_GROUP_METHOD")
    if chosen and chosen != WORK_GROUP_METHOD:
        return []
    os.environ["POCL_WORK_GROUP_METHOD"] = WORK_GROUP_METHOD  # PoCL reads it at each build
    return [CBS_OPTION]


def size_pool(
    cores: list[int] | None = None, environ: MutableMapping[str, str] = os.environ
) -> int | None:
    """Size PoCL's pool as the first default CPU group of ``cores`` (default: the usable
    cores; ``cpu_groups.default_groups``) where those groups are halves, i.e. of more than
    one physical core each, and where the user has not sized it; the threads set, else
    None. Takes effect only before PoCL starts, i.e. before the platforms are first
    enumerated in this process."""
    if environ.get(POOL_ENV) or environ.get("POCL_MAX_PTHREAD_COUNT"):
        return None
    threads = int(cpu_groups.default_groups(cores)[0]["threads"])
    if threads < 2:  # groups of one core each: PoCL keeps every core
        return None
    environ[POOL_ENV] = str(threads)
    return threads
