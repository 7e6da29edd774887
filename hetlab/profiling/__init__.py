"""The profiler: a model measured on devices, as a Problem (spec §2).

A layer between the devices and the executor: it measures through the device interface
(``hetlab.devices.base``) and writes the cost package's ``Problem``. ``profile`` is the
profiler's measurements alone; ``hetlab.profile`` (``hetlab.calibrate``) calibrates its
Problem on the executor after it, in the same cache (``profile_cache``). ``ProfileOptions`` holds every option and its default, ``Job`` is what one
profile measures (``plan_job``), ``cpu_model`` names the host's CPU as a profile records it.
"""

from __future__ import annotations

from hetlab.lazy import lazy_names

__all__ = [
    "FLOOR_MS",
    "Job",
    "ProfileOptions",
    "Progress",
    "cpu_model",
    "options_of",
    "profile",
    "profile_cache",
]

# imported on first use: the profiler and its helpers load numpy and the device interface
_LAZY = {
    "profile": "hetlab.profiling.profiler",
    "FLOOR_MS": "hetlab.profiling.assemble",
    "Job": "hetlab.profiling.job",
    "ProfileOptions": "hetlab.profiling.options",
    "Progress": "hetlab.profiling.options",
    "options_of": "hetlab.profiling.options",
    "profile_cache": "hetlab.profiling.job",
    "cpu_model": "hetlab.profiling.platform_info",
}


__getattr__ = lazy_names(__name__, _LAZY)
