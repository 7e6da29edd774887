"""The HOPE Fig. 4-shaped figure: grouped bars per model, measured latency normalized to the
single-device baseline (GPU-only where there is a GPU), one bar per algorithm, p10-p90 as
error bars. HTML always (plotly.js from its CDN); PNG when kaleido and a browser can render."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ORDER = [
    "CPU-only",
    "GPU-only",
    "OpenCL-CPU-only",
    "OpenCL-only",
    "MOSAIC",
    "StarPU-dmdar",
    "HEFT",
    "OverSeer",
    "PartitionTuner",
    "HOPE:GS",
    "HOPE:LP",
]


def figure(rows: Sequence[dict[str, Any]]) -> Any:
    """A plotly Figure from table rows (``table.read_csv``)."""
    import plotly.graph_objects as go

    ok = [
        r
        for r in rows
        if isinstance(r.get("normalized"), float) and not math.isnan(r["normalized"])
    ]
    models = list(dict.fromkeys(r["model"] for r in ok))
    labels = sorted(
        {r["algorithm"] for r in ok}, key=lambda a: (ORDER.index(a) if a in ORDER else 99, a)
    )
    base = sorted({r["norm_to"] for r in ok})
    fig = go.Figure()
    for lab in labels:
        by = {r["model"]: r for r in ok if r["algorithm"] == lab}
        ys, lo, hi = [], [], []
        for m in models:
            r = by.get(m)
            if r is None:
                ys.append(None), lo.append(0), hi.append(0)
                continue
            scale = r["normalized"] / r["measured_median_ms"] if r["measured_median_ms"] else 0
            ys.append(r["normalized"])
            lo.append(max(0.0, (r["measured_median_ms"] - r["measured_p10_ms"]) * scale))
            hi.append(max(0.0, (r["measured_p90_ms"] - r["measured_median_ms"]) * scale))
        fig.add_bar(
            name=lab,
            x=models,
            y=ys,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": hi,
                "arrayminus": lo,
                "thickness": 1,
            },
        )
    plat = sorted({r["platform"] for r in ok})
    vals = [r["normalized"] for r in ok if r["normalized"] > 0]
    spread = max(vals) / min(vals) if vals else 1.0
    fig.update_layout(
        barmode="group",
        template="plotly_white",
        width=max(700, 110 * len(models) + 200),
        height=440,
        title=f"Normalized inference latency (measured median / {', '.join(base)})<br><sup>{', '.join(plat)}</sup>",
        yaxis_title=f"latency / {', '.join(base)}" + (" (log)" if spread > 20 else ""),
        yaxis_type="log" if spread > 20 else "linear",
        legend={"orientation": "h", "y": -0.18},
    )
    fig.add_hline(y=1.0, line_dash="dot", line_color="gray")
    return fig


def write_figure(
    rows: Sequence[dict[str, Any]], out_dir: str | Path, stem: str = "fig4"
) -> list[str]:
    """Write ``stem.html`` (and ``stem.png`` when kaleido renders); the paths written.
    Raises ImportError without plotly."""
    from hetlab.fileio import atomic_write_bytes

    fig = figure(rows)
    out = Path(out_dir)
    html = out / f"{stem}.html"
    atomic_write_bytes(html, fig.to_html(include_plotlyjs="cdn", full_html=True).encode())
    files = [str(html)]
    try:
        png = fig.to_image(format="png", scale=2)
        atomic_write_bytes(out / f"{stem}.png", png)
        files.append(str(out / f"{stem}.png"))
    except Exception as e:  # noqa: BLE001 - no kaleido / no Chromium: HTML only
        print(f"PNG skipped ({type(e).__name__}: {str(e)[:120]})", flush=True)
    return files
