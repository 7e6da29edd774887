"""Calibrator: the link fit recovers a known latency/bandwidth; stats and rank helpers."""

from __future__ import annotations

import numpy as np
from cost_helpers import LinkDevice

from hetlab.cost.stats import fit_link, robust_stats, spearman
from hetlab.graph.ir import Tensor
from hetlab.profiling import calibrator as cal


def test_fit_recovers_synthetic_link():
    src = LinkDevice("src")
    dst = LinkDevice("dst", latency_ms=0.3, bw_bytes_per_ms=2e6)  # 0.3 ms + 2 GB/s
    sizes = [1 << 10, 1 << 14, 1 << 18, 1 << 20]  # <= 0.8 ms each: seldom preempted on a busy box
    fit = cal.calibrate_link(src, dst, sizes)
    assert abs(fit["latency"] - 0.3) < 0.1
    assert abs(fit["bandwidth"] - 2e6) / 2e6 < 0.25
    assert fit["r2"] > 0.98 and fit["max_rel_err"] < 0.3
    assert len(fit["points"]) == len(sizes)
    # one edge's tensors together: two latencies plus their bytes
    ms = cal.measure_shape(src, dst, [Tensor("a", (1, 256, 8, 8)), Tensor("b", (1, 1024), "int64")])
    expect = 2 * 0.3 + (256 * 64 * 4 + 1024 * 8) / 2e6
    assert abs(ms - expect) / expect < 0.3


def test_fit_is_nonnegative_and_exact_on_a_line():
    s = np.array([1e3, 1e4, 1e5, 1e6])
    f = fit_link(s, 0.05 + s / 4e6)
    assert abs(f["latency"] - 0.05) < 1e-6 and abs(f["bandwidth"] - 4e6) / 4e6 < 1e-6
    assert f["r2"] > 0.999999 and f["max_rel_err"] < 1e-6
    flat = fit_link(s, [0.01, 0.01, 0.01, 0.01])  # shared memory: no bandwidth term
    assert flat["bandwidth"] is None and abs(flat["latency"] - 0.01) < 1e-9
    neg = fit_link(s, [1.0, 0.8, 0.5, 0.1])  # falling times: the slope is clamped at 0
    assert neg["latency"] >= 0 and neg["bandwidth"] is None


def test_robust_stats_rejects_spikes_and_spearman():
    st = robust_stats([1.0, 1.1, 0.9, 1.05, 0.95, 50.0])
    assert st["rejected"] == 1 and st["n"] == 5 and abs(st["median"] - 1.0) < 1e-9
    assert st["p10"] <= st["median"] <= st["p90"] <= 1.1
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert abs(spearman([1, 2, 2, 3], [1, 2, 3, 4]) - 0.9486833) < 1e-6
