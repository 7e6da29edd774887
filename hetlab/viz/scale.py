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
STRIP_MARGIN = 84  # px of right margin a strip and its tick labels need
CHAR_PX = 7.0  # mean width of a title character at 12-13 px, for wrapping
TITLE_TOP = 8  # px from the figure's top to its title
LINE_PX = 17  # px per line of a 13 px title


def colour_strip(
    lo: float,
    hi: float,
    colorscale: str | list,
    title: str,
    ticks: Sequence[float] = (),
    label: Callable[[float], str] = lambda v: f"{v:g}",
    steps: int = STRIP_STEPS,
    room_px: float = 300.0,
) -> tuple[list[dict], list[dict]]:
    """A vertical colour scale for values ``lo``..``hi`` just right of the plot: ``steps``
    rectangles 14 px wide (bottom = ``lo``), a label at both ends and at each of ``ticks``
    not too close to them (as many as ``room_px``, the plot's height, leaves 14 px each),
    and ``title`` above. Returns (shapes, annotations)."""
    if not hi > lo:
        hi = lo + 1.0
    y0, y1 = 0.0, 0.88
    colors = sample_colorscale(colorscale, list(np.linspace(0.0, 1.0, steps)))
    h = (y1 - y0) / steps
    shapes = [
        {
            "type": "rect",
            "xref": "paper",
            "yref": "paper",
            "xsizemode": "pixel",
            "xanchor": 1.0,
            "x0": 8,
            "x1": 22,
            "y0": y0 + k * h,
            "y1": y0 + (k + 1) * h,
            "fillcolor": c,
            "line": {"width": 0},
            "layer": "above",
            "name": "scale",
        }
        for k, c in enumerate(colors)
    ]
    ann = [_paper_text(1.0, y1 + 0.02, title, "left", "bottom", 10, xshift=6)]
    slots = max(2, int(room_px * (y1 - y0) / 14))
    near = max(0.08, 1.0 / slots) * (hi - lo)
    inner = [v for v in ticks if lo + near < v < hi - near]
    inner = inner[:: max(1, -(-len(inner) // max(1, slots - 2)))]
    for v in [lo, *inner, hi]:
        y = y0 + (v - lo) / (hi - lo) * (y1 - y0)
        ann.append(_paper_text(1.0, y, label(v), "left", "middle", 9, xshift=25))
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


def _paper_text(x, y, text, xanchor, yanchor, size, yshift: int = 0, xshift: int = 0) -> dict:
    return {
        "x": x,
        "y": y,
        "xshift": xshift,
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


def wrap_title(
    parts: Sequence[str], width: int | None, sep: str = " · ", reserve_px: int = 0
) -> tuple[str, int]:
    """``parts`` joined by ``sep`` into lines that fit ``width`` px (about ``CHAR_PX`` a
    character; 900 when unknown); a part longer than a line is cut with an ellipsis. The
    first line leaves ``reserve_px`` free at its right (where plotly's toolbar appears).
    Returns the text (lines joined by ``<br>``) and the number of lines."""
    full = max(24, int((width or 900) / CHAR_PX) - 4)
    first = max(16, full - int(reserve_px / CHAR_PX))
    lines: list[str] = []
    cur = ""
    for p in parts:
        room = first if not lines else full
        vis = _visible(p)
        if len(vis) > (room if not cur else full):
            p = _cut(p, room if not cur else full)
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


def title_layout(text: str, lines: int, height: float, size: int = 13) -> dict:
    """A title ``TITLE_TOP`` px under the figure's top, left-aligned. plotly centres a title
    of several lines on its anchor, so the anchor moves down by half the extra lines."""
    top = TITLE_TOP + (lines - 1) * 0.65 * size
    return {
        "text": text,
        "font": {"size": size},
        "x": 0.01,
        "xanchor": "left",
        "yref": "container",
        "y": max(0.0, 1.0 - top / height),
        "yanchor": "top",
    }
