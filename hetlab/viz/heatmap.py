"""``heatmap_figure``: profiled cost per op (or per op type, or per name scope) and device,
on a log colour scale (a strip drawn in shapes, ``viz.scale``), as costs or as speed-up ratios
against a reference device; a grouped heatmap says so under its title."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from hetlab.errors import HetlabError
from hetlab.viz.common import FONT, fmt_ms
from hetlab.viz.layout import dag_layout
from hetlab.viz.scale import STRIP_MARGIN, colour_strip, title_layout
from hetlab.viz.scopes import scope_of

GROUP_ABOVE = 150  # ops; above this the columns are op types unless ``group`` says otherwise
SORTS = ("rank", "name", "op", "cost", "ratio")


def _columns(lay, group: str | None) -> list[tuple[str, list[int]]]:
    """(label, member op indices) of each column, members in upward-rank order."""
    order = sorted(range(len(lay.ids)), key=lambda i: (lay.level[i], i))
    if group is None:
        return [(lay.ids[i], [i]) for i in order]
    if group not in ("op", "scope"):
        raise HetlabError(f"unknown grouping {group!r}: use op, scope or none")
    cols: dict[str, list[int]] = {}
    for i in order:
        key = lay.op_types[i] if group == "op" else scope_of(lay.ids[i], 1)
        cols.setdefault(key, []).append(i)
    return list(cols.items())


def _sums(cm: np.ndarray, cols: list[tuple[str, list[int]]]) -> tuple[np.ndarray, np.ndarray]:
    """[device, column] total cost over the members that can run there, and how many can't."""
    ok = np.isfinite(cm)
    tot = np.array([np.where(ok[m], cm[m], 0.0).sum(axis=0) for _, m in cols]).T
    bad = np.array([(~ok[m]).sum(axis=0) for _, m in cols]).T
    return tot.reshape(cm.shape[1], -1), bad.reshape(cm.shape[1], -1)


def ratios(cm: np.ndarray, cols: list[tuple[str, list[int]]], d: int, ref: int) -> np.ndarray:
    """Per column: the cost on device ``d`` over the cost on ``ref``, both summed over the
    members that both can run (NaN where there are none, or a sum is 0)."""
    both = np.isfinite(cm[:, d]) & np.isfinite(cm[:, ref])
    out = np.full(len(cols), np.nan)
    for c, (_, m) in enumerate(cols):
        k = [i for i in m if both[i]]
        a, b = cm[k, d].sum(), cm[k, ref].sum()
        if k and a > 0 and b > 0:
            out[c] = a / b
    return out


def _sort(cols, lay, tot, bad, sort: str, ratio: np.ndarray | None) -> list[int]:
    if sort not in SORTS:
        raise HetlabError(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
    k = list(range(len(cols)))
    if sort == "name":
        return sorted(k, key=lambda c: cols[c][0])
    if sort == "op":
        return sorted(k, key=lambda c: (lay.op_types[cols[c][1][0]], c))
    if sort == "cost":
        best = np.where(bad == 0, tot, np.inf).min(axis=0)
        best = np.where(np.isfinite(best), best, tot.max(axis=0))
        return sorted(k, key=lambda c: -best[c])
    if sort == "ratio" and ratio is not None:
        return sorted(k, key=lambda c: (np.nan_to_num(ratio[c], nan=np.inf), c))
    return k


def _decades(lo: float, hi: float) -> list[float]:
    a, b = int(np.floor(lo)), int(np.ceil(hi))
    return [float(e) for e in range(a, b + 1)] if b > a else [lo]


def heatmap_figure(
    problem,
    height: int | None = None,
    *,
    view: str = "cost",
    reference: str | None = None,
    group: str | None = "auto",
    sort: str = "rank",
) -> go.Figure:
    """Columns: ops (or op types / name scopes), rows: devices, colour on a log10 scale.

    ``view="cost"``: total profiled cost. ``view="ratio"``: cost on each device over the cost
    on ``reference`` (default the first device); blue is faster than the reference. ``group``:
    ``"op"`` (op type), ``"scope"`` (name scope), ``None`` (one column per op) or ``"auto"``
    (op types above 150 ops); a line under the title says when columns are groups. ``sort``:
    rank, name, op, cost (most expensive first) or ratio (the cost on the first other device
    over the reference's, smallest first).
    A device that cannot run an op leaves an x ('n/a' in the hover); in a group, the x says
    how many of its ops cannot run there.
    """
    lay = dag_layout(problem)
    devs = list(problem.devices)
    if group == "auto":
        group = "op" if len(lay.ids) > GROUP_ABOVE else None
    cols = _columns(lay, group)
    cm = problem.cost_matrix
    tot, bad = _sums(cm, cols)
    n = np.array([len(m) for _, m in cols])
    can = bad < n  # at least one member runs there
    reference = reference or devs[0]
    if reference not in devs:
        raise HetlabError(f"no device {reference!r}: choose one of {', '.join(devs)}")
    j = devs.index(reference)
    first = next((i for i in range(len(devs)) if i != j), j)
    if view == "ratio":
        rows = [d for d in devs if d != reference] or devs
        keep = [devs.index(d) for d in rows]
        ratio = np.array([ratios(cm, cols, i, j) for i in keep])
        ok = np.isfinite(ratio)
        zlog = np.log10(np.where(ok, ratio, 1.0))
    elif view == "cost":
        rows, keep = devs, list(range(len(devs)))
        pos = tot[can & (tot > 0)]
        floor = float(pos.min()) if pos.size else 1e-3
        ok = can
        zlog = np.log10(np.maximum(np.where(ok, tot, floor), floor))
    else:
        raise HetlabError(f"unknown view {view!r}: use cost or ratio")
    by = ratios(cm, cols, first, j) if first != j else None
    order = _sort(cols, lay, tot, bad, sort, by)
    fig = _draw(lay, cols, order, rows, keep, tot, bad, zlog, ok, view, reference, group, height)
    fig.add_traces(_marks(lay, cols, order, rows, keep, np.isfinite(cm)))
    return fig


def _draw(lay, cols, order, rows, keep, tot, bad, zlog, ok, view, ref, group, height):
    label = [cols[c][0] for c in order]
    size = [len(cols[c][1]) for c in order]
    kinds = [
        f"{lay.op_types[cols[c][1][0]]}" if group is None else f"{size[k]} ops"
        for k, c in enumerate(order)
    ]
    # unsupported cells are gaps: None (JSON null), never NaN (invalid JSON in widget messages)
    z = [[float(zlog[r, c]) if ok[r, c] else None for c in order] for r in range(len(rows))]
    text = []
    for r, d in enumerate(rows):
        line = []
        for k, c in enumerate(order):
            cost = fmt_ms(tot[keep[r], c]) if bad[keep[r], c] < size[k] else "n/a: cannot run"
            t = f"<b>{label[k]}</b> ({kinds[k]})<br>{d}: {cost}"
            if view == "ratio" and ok[r, c]:
                t += f"<br>×{10 ** zlog[r, c]:.3g} the cost on {ref}"
            line.append(t)
        text.append(line)
    xs = list(range(len(order)))
    lo, hi = _range(z, view)
    unit = (lambda e: f"×{10**e:.3g}") if view == "ratio" else (lambda e: fmt_ms(10**e))
    scale = "RdBu_r" if view == "ratio" else "Viridis"
    heat = go.Heatmap(
        z=z,
        x=xs,
        y=rows,
        text=text,
        # a cell's op (of a column per op), what a click selects
        customdata=[[label[k] if group is None else None for k in range(len(order))]] * len(rows),
        hovertemplate="%{text}<extra></extra>",
        hoverongaps=True,
        colorscale=scale,
        zmin=lo,
        zmax=hi,
        showscale=False,
        name=view,
    )
    fig = go.Figure([heat])
    key = f"÷ {ref}" if view == "ratio" else "ms (log)"
    h = height or 170 + 40 * len(rows)
    top = 60 if group else 40
    shapes, ann = colour_strip(lo, hi, scale, key, _decades(lo, hi), unit, room_px=h - top - 40)
    title = "profiled cost per op and device" if view == "cost" else f"cost over the cost on {ref}"
    title += " (log colour; x = cannot run)"
    if group:
        ann.append(_group_note(len(lay.ids), len(order), group))
    fig.update_layout(
        title=title_layout(title, 1, h),
        height=h,
        font=FONT,
        plot_bgcolor="#d9d9d9",
        margin={"l": 10, "r": STRIP_MARGIN, "t": top, "b": 40},
        xaxis=dict(showgrid=False, zeroline=False, **_ticks(xs, label, kinds, group)),
        yaxis={"showgrid": False},
        shapes=shapes,
        annotations=ann,
    )
    return fig


def _range(z: list[list[float | None]], view: str) -> tuple[float, float]:
    """The colour range of the log values ``z``: their span, symmetric about ×1 (0) for the
    ratio view, as the diverging scale is."""
    span = [v for row in z for v in row if v is not None] or [0.0]
    lo, hi = min(span), max(span)
    if view == "ratio":
        hi = max(abs(lo), abs(hi), 1e-3)
        lo = -hi
    return lo, hi


def _group_note(n: int, cols: int, group: str) -> dict:
    """The line under the title that says the columns are groups, and how to ungroup."""
    by = "op type" if group == "op" else "name scope"
    text = (
        f"<b>grouped</b>: {n} ops in {cols} columns by {by}, each the sum of its ops "
        "(group=None: one column per op)"
    )
    return {
        "x": 0.0,
        "y": 1.0,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "left",
        "yanchor": "bottom",
        "yshift": 2,
        "showarrow": False,
        "text": text,
        "font": {"size": 11, "color": "#9a6700"},
        "name": "grouping",
    }


def _ticks(xs, label, what, group) -> dict:
    if len(xs) > 60:
        return {"title": f"{len(xs)} columns (hover for names)"}
    text = what if group is None else label
    return {
        "tickmode": "array",
        "tickvals": xs,
        "ticktext": text,
        "tickangle": -60,
        "tickfont": {"size": 9},
    }


def _marks(lay, cols, order, rows, keep, okm: np.ndarray) -> list[go.Scatter]:
    """An x on every cell where some op cannot run, its hover naming those ops."""
    xs, ys, text, ops = [], [], [], []
    for r, d in enumerate(rows):
        for k, c in enumerate(order):
            label, members = cols[c]
            out = [lay.ids[i] for i in members if not okm[i, keep[r]]]
            if not out:
                continue
            xs.append(k)
            ys.append(d)
            ops.append(label if len(members) == 1 else None)
            if len(members) == 1:
                text.append(f"<b>{label}</b> ({lay.op_types[members[0]]})<br>{d}: n/a: cannot run")
                continue
            names = ", ".join(out[:4]) + (f" and {len(out) - 4} more" if len(out) > 4 else "")
            text.append(
                f"<b>{label}</b><br>{d}: n/a: {len(out)} of {len(members)} cannot run: {names}"
            )
    if not xs:
        return []
    return [
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            marker={"symbol": "x-thin", "size": 8, "line": {"width": 1.5, "color": "#444"}},
            text=text,
            customdata=ops,
            hovertemplate="%{text}<extra></extra>",
            name="n/a",
            showlegend=False,
        )
    ]
