"""Robust timing statistics, the non-negative link fit and rank correlation (pure numpy).

Samples and results are in whatever unit the caller passes (the profiler uses ms).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MAD_K = 5.0  # reject samples further than MAD_K robust standard deviations from the median


def robust_stats(samples: Sequence[float], k: float = MAD_K) -> dict[str, float | int]:
    """Median, p10, p90 of ``samples`` after rejecting outliers by the median absolute
    deviation (|x - median| > k * 1.4826 * MAD); ``n`` kept and ``rejected`` counts."""
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("no samples")
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med))) * 1.4826
    keep = x if mad == 0 else x[np.abs(x - med) <= k * mad]
    if keep.size == 0:
        keep = x
    return {
        "median": float(np.median(keep)),
        "p10": float(np.percentile(keep, 10)),
        "p90": float(np.percentile(keep, 90)),
        "n": int(keep.size),
        "rejected": int(x.size - keep.size),
    }


def fit_link(sizes: Sequence[float], times: Sequence[float]) -> dict[str, float | None]:
    """Fit ``time = latency + bytes / bandwidth`` with latency >= 0 and 1/bandwidth >= 0,
    minimizing the *relative* squared error (so small transfers count as much as large ones).

    Returns ``latency``, ``bandwidth`` (None when the slope is zero), ``r2`` (on the times)
    and ``max_rel_err`` over the points."""
    s = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    if s.size == 0 or s.size != t.size:
        raise ValueError("need as many sizes as times, at least one")
    w = 1.0 / np.maximum(t, 1e-12)
    lat, slope = _nnls2(s, t, w)
    pred = lat + slope * s
    ss_res = float(np.sum((t - pred) ** 2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)
    rel = np.abs(pred - t) / np.maximum(t, 1e-12)
    return {
        "latency": float(lat),
        "bandwidth": (1.0 / slope) if slope > 0 else None,
        "r2": float(r2),
        "max_rel_err": float(rel.max()),
    }


def _nnls2(s: np.ndarray, t: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted least squares of ``t ~ a + b s`` with ``a, b >= 0`` (enumerate the active sets)."""
    W = w**2
    cands: list[tuple[float, float]] = []
    A = np.stack([np.ones_like(s), s], axis=1) * w[:, None]
    sol, *_ = np.linalg.lstsq(A, t * w, rcond=None)
    if sol[0] >= 0 and sol[1] >= 0:
        cands.append((float(sol[0]), float(sol[1])))
    cands.append((float(np.sum(W * t) / np.sum(W)), 0.0))  # slope 0
    den = float(np.sum(W * s * s))
    cands.append((0.0, max(0.0, float(np.sum(W * s * t)) / den) if den > 0 else 0.0))  # latency 0

    def err(c: tuple[float, float]) -> float:
        return float(np.sum(W * (t - c[0] - c[1] * s) ** 2))

    return min(cands, key=err)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    ra, rb = _ranks(np.asarray(a, float)), _ranks(np.asarray(b, float))
    if ra.std() == 0 or rb.std() == 0:
        return 1.0 if np.array_equal(ra, rb) else 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[order] = np.arange(len(x), dtype=float)
    for v in np.unique(x):  # average ranks of ties
        m = x == v
        if m.sum() > 1:
            r[m] = r[m].mean()
    return r
