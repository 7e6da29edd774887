"""Sequential single-mapping baselines, all ``sequential=True`` in topological order.

- ``opseq``: each op on its fastest device (PartitionTuner's OpSeq, Yu et al., ETRI Journal
  45(2), 2023, §2 and §4.2.1: profiling-based mapping, sequential execution).
- ``typeseq``: Conv/Gemm/MatMul-type ops on the accelerator, everything else on the first
  device (PartitionTuner's TypeSeq, §2: TVM's static type-based mapping, sequential). The
  accelerator is the device with the least total time on those ops.
- ``single:DEVICE``: everything on one device (PartitionTuner's "Baseline", HOPE's CPU-only /
  GPU-only versions).

Wherever the chosen device cannot run an op, the op falls back to the first device, in
``problem.devices`` order, that can. Times in the problem's units.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from hetlab.cost.problem import Problem
from hetlab.errors import HetlabError
from hetlab.schedulers.base import register
from hetlab.schedulers.plan import Plan

# Conv (and its variants: Conv2D, DepthwiseConv2dNative, separable_conv2d, QLinearConv,
# ConvTranspose), Gemm and MatMul (MatMulInteger, BatchMatMul, FusedMatMul)
HEAVY_OP = re.compile(r"conv(?!ert)|gemm|matmul|depthwise", re.IGNORECASE)


def _fallback(problem: Problem, want: np.ndarray) -> np.ndarray:
    """``want`` (a device index per node) where supported, else the first supporting device."""
    ok = np.isfinite(problem.cost_matrix)
    first = ok.argmax(axis=1)
    return np.where(ok[np.arange(len(want)), want], want, first)


def _sequential(problem: Problem, algo: str, dev: np.ndarray, extra: dict | None = None) -> Plan:
    """``algo``'s plan: node ``v`` on device ``dev[v]``, every node in topological order."""
    ids = [n.id for n in problem.nodes]
    return Plan.of(
        {ids[v]: problem.devices[int(dev[v])] for v in range(len(ids))},
        [ids[v] for v in problem.topo],
        sequential=True,
        algo=algo,
        extra=extra,
    )


@register("opseq", "OpSeq: each op on its fastest device, sequential", sequential=True)
def opseq(problem: Problem, progress: Any = None) -> Plan:
    """Each node on the device of its least cost (first such device on ties)."""
    return _sequential(problem, "opseq", problem.cost_matrix.argmin(axis=1))


def is_heavy(op_type: str) -> bool:
    """Whether ``typeseq`` sends an op of this type to the accelerator."""
    return bool(HEAVY_OP.search(op_type or ""))


@register("typeseq", "TypeSeq: Conv/Gemm/MatMul on the accelerator, sequential", sequential=True)
def typeseq(problem: Problem, progress: Any = None) -> Plan:
    """Heavy ops on the accelerator (least total time on them), the rest on the first device."""
    cost = problem.cost_matrix
    n, nd = cost.shape
    heavy = np.array([is_heavy(x.op_type) for x in problem.nodes], dtype=bool)
    totals = []
    for d in range(nd):
        dev = _fallback(problem, np.full(n, d))
        totals.append(float(cost[np.arange(n), dev][heavy].sum()))
    accel = int(np.argmin(totals))
    dev = _fallback(problem, np.where(heavy, accel, 0))
    return _sequential(
        problem,
        "typeseq",
        dev,
        {"accelerator": problem.devices[accel], "heavy_ops": int(heavy.sum())},
    )


@register("single", "Single device (single:DEVICE); unsupported ops fall back", sequential=True)
def single(problem: Problem, device: str | None = None, progress: Any = None) -> Plan:
    """Every node on ``device`` where it can run, else on the first device that can."""
    if device is None or device not in problem.dev_index:
        what = "needs a device" if device is None else f"got unknown device {device!r}"
        raise HetlabError(
            f"single {what}: use single:DEVICE with one of {', '.join(problem.devices)}"
        )
    d = problem.dev_index[device]
    dev = _fallback(problem, np.full(len(problem.nodes), d))
    return _sequential(problem, "single", dev, {"fallback_ops": int((dev != d).sum())})
