"""What a device is, as the executor, the profiler and the calibrations need to know it.

Each backend declares its ``Capabilities`` (``Device.capabilities()``); the layers above read
these fields and never ask which kind a device is, so a new backend is one declaration, not
a branch in every layer (tinygrad's runtime: a backend says what it is).
"""

from __future__ import annotations

from dataclasses import dataclass

AHEAD_OF_TIME = "ahead_of_time"  # units enqueued ahead, chained by events (OpenCL)
GRAPH = "graph"  # units captured once and replayed as one graph (CUDA)


@dataclass(frozen=True)
class Capabilities:
    """A device's declared abilities; the defaults describe a plain host device.

    - ``accelerator``: runs hetlab's kernels in its own memory rather than onnxruntime on the
      host's cores: never the inline device of a run nor the fallback of a failed unit.
    - ``runner``: the queue runner (``runner.py``) that runs all the units of one device and
      its queue views together, one thread per device: ``AHEAD_OF_TIME`` (enqueued ahead and chained by
      events), ``GRAPH`` (captured into one graph), or None (one unit at a time).
    - ``node_times``: the device times each node when ``run`` is given ``node_times=True``,
      which the executor passes only when a run asks for node timelines.
    - ``writes_inputs``: ``write(buffer, array)`` overwrites a device buffer in place: the
      executor keeps one buffer per received tensor across runs, and the profiler times a
      unit after writing its inputs, as the executor runs it.
    - ``unified_memory``: whether the device's buffers are host memory (None: not declared);
      False makes it a remote device in the run report's predictions.
    - ``covers``: the CPU groups a whole-CPU device is the alternative to (a plan uses it or
      them, never both).
    - ``share_key``: the run report's key for the fraction of the model that devices
      declaring it run (``opencl_share``); None: not counted.
    - ``precisions``: the arithmetic precisions (``precision.py``) the device can run
      convolutions and matrix products at; ``fp32`` always.
    """

    accelerator: bool = False
    runner: str | None = None
    node_times: bool = False
    writes_inputs: bool = False
    unified_memory: bool | None = None
    covers: tuple[str, ...] = ()
    share_key: str | None = None
    precisions: tuple[str, ...] = ("fp32",)

    def __post_init__(self) -> None:
        if self.runner not in (None, AHEAD_OF_TIME, GRAPH):
            raise ValueError(f"unknown queue runner {self.runner!r}")
