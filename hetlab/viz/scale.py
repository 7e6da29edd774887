"""Scales and legends drawn from layout shapes and annotations, and titles that fit.

A trace's own colour bar is not used: plotly's FigureWidget draws nothing for a trace that has
one (JupyterLab 4 + Chromium), so every figure draws its scale itself, as a strip of
rectangles in the right margin with tick labels beside it. Shapes and annotations draw the
same in a static figure, a notebook and a FigureWidget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from plotly.colors import sample_colorscale

STRIP_STEPS = 24  # rectangles in a colour strip
STRIP_MARGIN = 78  # px of right margin a strip and its tick labels need
CHAR_PX = 7.0  # mean width of a title character at 12-13 px, for wrapping


def colour_strip(
    lo: float,
    hi: float,
    colorscale: str | list,
    title: str,
    ticks: Sequence[float] = (),
    label: Callable[[float], str] = lambda v: f"{v:g}",
    steps: int = STRIP_STEPS,
) -> tuple[list[dict], list[dict]]:
    """A vertical colour scale for values ``lo``..``hi`` in the right margin: ``steps``
    rectangles (paper coordinates, bottom = ``lo``), a label at both ends and at each of
    ``ticks`` not too close to them, and ``title`` above. Returns (shapes, annotations)."""
    if not hi > lo:
        hi = lo + 1.0
    x0, x1, y0, y1 = 1.012, 1.04, 0.05, 0.9
    colors = sample_colorscale(colorscale, list(np.linspace(0.0, 1.0, steps)))
    h = (y1 - y0) / steps
    shapes = [
        {
            "type": "rect",
            "xref": "paper",
            "yref": "paper",
            "x0": x0,
            "x1": x1,
            "y0": y0 + k * h,
            "y1": y0 + (k + 1) * h,
            "fillcolor": c,
            "line": {"width": 0},
            "layer": "above",
            "name": "scale",
        }
        for k, c in enumerate(colors)
    ]
    ann = [_paper_text(x0, y1 + 0.02, title, "left", "bottom", 10)]
    near = 0.08 * (hi - lo)
    inner = [v for v in ticks if lo + near < v < hi - near]
    for v in [lo, *inner, hi]:
        if lo - 1e-9 <= v <= hi + 1e-9:
            y = y0 + (v - lo) / (hi - lo) * (y1 - y0)
            ann.append(_paper_text(x1 + 0.004, y, label(v), "left", "middle", 9))
    return shapes, ann


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values inside ``lo``..``hi``, about ``count`` of them."""
    if not hi > lo:
        return [lo]
    step = (hi - lo) / max(1, count - 1)
    mag = 10 ** np.floor(np.log10(step))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= step), default=step)
    first = np.ceil(lo / step) * step
    return [float(v) for v in np.arange(first, hi + step * 1e-6, step)]


def swatches(items: Sequence[tuple[str, str]], limit: int = 12) -> str:
    """A one-line legend of coloured squares, ``items`` = (label, colour); beyond ``limit``
    items, a count of the rest."""
    out = [f"<span style='color:{c}'>■</span> {label}" for label, c in items[:limit]]
    if len(items) > limit:
        out.append(f"+{len(items) - limit} more (hover)")
    return "  ".join(out)


def swatch_annotation(items: Sequence[tuple[str, str]], limit: int = 12) -> dict:
    """The swatch legend as an annotation under the title, above the plot."""
    return _paper_text(0.0, 1.0, swatches(items, limit), "left", "bottom", 10, yshift=2)


def _paper_text(x, y, text, xanchor, yanchor, size, yshift: int = 0) -> dict:
    return {
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "text": text,
        "showarrow": False,
        "xanchor": xanchor,
        "yanchor": yanchor,
        "yshift": yshift,
        "font": {"size": size},
        "align": "left",
        "name": "legend",
    }


def wrap_title(parts: Sequence[str], width: int | None, sep: str = " · ") -> tuple[str, int]:
    """``parts`` joined by ``sep`` into lines that fit ``width`` px (about ``CHAR_PX`` a
    character; 900 when unknown); a part longer than a line is cut with an ellipsis.
    Returns the text (lines joined by ``<br>``) and the number of lines."""
    room = max(24, int((width or 900) / CHAR_PX) - 4)
    lines: list[str] = []
    cur = ""
    for p in parts:
        vis = _visible(p)
        if len(vis) > room:
            p = _cut(p, room)
        if cur and len(_visible(cur)) + len(sep) + len(_visible(p)) > room:
            lines.append(cur)
            cur = p
        else:
            cur = f"{cur}{sep}{p}" if cur else p
    if cur:
        lines.append(cur)
    return "<br>".join(lines), max(1, len(lines))


def _visible(s: str) -> str:
    """``s`` without HTML tags (what a title shows)."""
    out, inside = [], False
    for ch in s:
        if ch == "<":
            inside = True
        elif ch == ">":
            inside = False
        elif not inside:
            out.append(ch)
    return "".join(out)


def _cut(s: str, room: int) -> str:
    vis = _visible(s)
    return vis[: room - 1] + "…" if len(vis) > room else s
