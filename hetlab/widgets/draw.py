"""The workbench's layout and figures: each function reads the workbench's state and redraws
one part in place (figures from ``hetlab.viz``). Callers hold the workbench's UI lock."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as W

from hetlab.cost.whatif import is_what_if
from hetlab.errors import HetlabError
from hetlab.viz import dag_figure, gantt_figure, heatmap_figure, moved_ops
from hetlab.widgets.controls import section
from hetlab.widgets.params import SYMBOLS
from hetlab.widgets.plans import info_html

GANTT_WIDTH = 470  # px: two side by side fit a 1000 px notebook column
WHAT_IF = "what-if"


def layout(wb: Any) -> list[W.Widget]:
    c, bx = wb.c, {name: slot.box for name, slot in wb.slots.items()}
    half = W.Layout(width=f"{GANTT_WIDTH + 10}px")  # the info line wraps under its Gantt
    return [
        W.HTML("<h3 style='margin:4px 0'>hetlab workbench</h3>"),
        section("1 · model"),
        W.HBox([c.model_picker, c.shape_text, c.load_button]),
        c.model_status,
        section("2 · devices and profile"),
        W.HBox(
            [
                c.device_select,
                W.VBox(
                    [
                        W.HBox([c.queue_count, c.precision_select]),
                        c.profile_button,
                        W.HBox([c.progress, c.cancel_button]),
                        c.progress_text,
                    ]
                ),
            ]
        ),
        c.profile_status,
        section("3 · operator DAG"),
        W.HBox(
            [c.color_select, c.dag_search, c.dag_collapse, c.heat_group],
            layout=W.Layout(flex_flow="row wrap"),
        ),
        bx["dag_fig"],
        bx["heat_fig"],
        section("ops: details of one, and the costliest"),
        wb.nodes,
        section("4 · what-if platform (scales the profile: no measurement)"),
        wb.whatif,
        c.whatif_banner,
        section("5 · schedule"),
        W.HBox([c.ilp_select, c.ilp_params]),
        W.HBox([c.algo_select, c.compared_params]),
        c.solve_status,
        c.params_status,
        W.HBox([c.diff_toggle, wb.critical_toggle]),
        W.HBox(
            [
                W.VBox([bx["ilp_fig"], c.ilp_info], layout=half),
                W.VBox([bx["greedy_fig"], c.compared_info], layout=half),
            ]
        ),
        *_recommend_rows(c, bx),
        section("6 · run for real, or replay"),
        W.HBox(
            [c.run_choice, c.run_where, c.repeat, c.run_button, c.trace_button],
            layout=W.Layout(flex_flow="row wrap"),
        ),
        c.run_status,
        bx["run_fig"],
        section("7 · files"),
        _files_row(c),
        c.file_status,
    ]


def _recommend_rows(c: Any, bx: dict[str, W.Widget]) -> list[W.Widget]:
    """Recommend and the error budget, the recommended plan's Gantt and the candidates'
    speed against error."""
    return [
        W.HBox([c.recommend_button, c.recommend_info]),
        W.HBox([c.budget_button, c.budget_slider]),
        bx["rec_fig"],
        bx["budget_fig"],
    ]


def _files_row(c: Any) -> W.HBox:
    files = [c.path_text, c.save_profile_button, c.load_profile_button, c.shipped_select]
    files += [c.save_plans_button, c.load_plans_button]
    return W.HBox(files, layout=W.Layout(flex_flow="row wrap"))


def error_text(e: BaseException) -> str:
    return str(e) if isinstance(e, HetlabError) else f"{type(e).__name__}: {e}"


def whatif_prefix(wb: Any) -> str:
    shown = wb.state.problem is not None and (is_what_if(wb.state.problem) or wb.whatif.active())
    return f"<b>{WHAT_IF}</b> · " if shown else ""


def slot_algo(wb: Any, slot: str) -> str:
    return (wb.ilp_select if slot == "ilp_plan" else wb.algo_select).value


def slot_figure(wb: Any, slot: str) -> tuple[Any, str]:
    """The figure slot of plan ``slot`` and the name of its algorithm."""
    if slot == "ilp_plan":
        return wb.slots["ilp_fig"], wb.ilp_select.value
    return wb.slots["greedy_fig"], wb.algo_select.value


def dag(wb: Any) -> None:
    obj = wb.state.graph if wb.state.graph is not None else wb.state.problem
    if obj is None:
        wb.slots["dag_fig"].message("load a model or a profile to see its operator DAG")
        return
    color: Any = wb.color_select.value
    if color.startswith("plan:"):
        plan = wb.state.plan("ilp_plan") if color == "plan: ILP" else wb.state.plan("greedy_plan")
        color = plan if plan is not None else "level"
    try:
        found = wb.dag_search.value.strip() or None
        fig = dag_figure(
            obj,
            color=color,
            problem=wb.state.problem,
            highlight=found,
            collapse=wb.dag_collapse.value,
        )
        fig.update_layout(title_text=whatif_prefix(wb) + (fig.layout.title.text or ""))
        wb.slots["dag_fig"].show(fig)
    except HetlabError as e:
        wb._say("model", str(e), "error")


def problem(wb: Any) -> None:
    """The colour choices, the heatmap, the what-if banner and the DAG of a new problem."""
    p = wb.state.problem
    opts = ["op", "level"] + (["best"] + [f"cost:{d}" for d in p.devices] if p else [])
    opts += ["plan: ILP", "plan: compared"] if p is not None else []
    cur = wb.color_select.value
    wb.color_select.options = opts
    wb.color_select.value = cur if cur in opts else "op"
    if p is None:
        wb.slots["heat_fig"].message("no profile yet: press Profile, or load a saved profile")
    else:
        fig = heatmap_figure(p, group=wb.heat_group.value)
        fig.update_layout(title_text=whatif_prefix(wb) + (fig.layout.title.text or ""))
        wb.slots["heat_fig"].show(fig)
    if p is not None and wb.whatif.active():
        wb.whatif_banner.value = (
            "<div style='background:#fff3cd;padding:4px 8px;border-left:4px solid #9a6700'>"
            f"<b>WHAT-IF</b>: {escape(wb.whatif.describe())}. The costs, plans and replays "
            "below are computed from the scaled profile, not measured.</div>"
        )
    else:
        wb.whatif_banner.value = ""
    dag(wb)


def _title(wb: Any, plan: Any, name: str) -> str:
    args = ", ".join(
        f"{sym}={plan.params[key]}"
        for key, sym in SYMBOLS.items()
        if plan.params.get(key) is not None
    )
    return whatif_prefix(wb) + (f"{name} ({args})" if args else name)


def gantt_height(fig: Any) -> int:
    """A Gantt's own height: ``viz.gantt`` sizes it to its rows and title, and places the
    title and legend for that height."""
    return int(fig.layout.height or 220)


def critical_checkbox() -> W.Checkbox:
    """Whether the Gantts mark the critical path (``viz.gantt``'s ``critical``)."""
    return W.Checkbox(
        value=True,
        description="underline the critical path",
        indent=False,
        layout=W.Layout(width="auto"),
    )


def gantts(wb: Any, only: str | None = None) -> None:
    """Both plans' Gantts on one ms range, with each plan's info line below it; with
    ``only`` (a slot), the other Gantt just follows the shared range (a cached plan redraws
    one figure, not two)."""
    slots = [
        (
            "ilp_plan",
            wb.slots["ilp_fig"],
            wb.state.plan("ilp_plan"),
            wb.ilp_select.value,
            wb.ilp_info,
        ),
        (
            "greedy_plan",
            wb.slots["greedy_fig"],
            wb.state.plan("greedy_plan"),
            wb.algo_select.value,
            wb.compared_info,
        ),
    ]
    end = max((p.makespan for _, _, p, _, _ in slots if p is not None), default=0.0)
    span = [0, end * 1.02 or 1]
    units = wb.state.problem.units if wb.state.problem is not None else "ms"
    for slot, fig, plan, name, info in slots:
        if plan is None:
            info.value = ""
            continue
        if only is not None and slot != only:
            fig.set_range(span)
            continue
        info.value = info_html(plan, units)
        g = gantt_figure(
            plan,
            wb.state.problem,
            title=_title(wb, plan, name),
            moved=_moved(wb, slot),
            width=GANTT_WIDTH,
            critical=None if wb.critical_toggle.value else False,
        )
        g.update_layout(title_font_size=12, xaxis_range=span)
        fig.show(g)


def _moved(wb: Any, slot: str) -> dict[str, tuple[str, str]] | None:
    """With the diff box ticked and both plans in, the ops ``slot``'s plan places elsewhere
    than the other plan: node -> (the other plan's device, this plan's)."""
    a, b = wb.state.plan("ilp_plan"), wb.state.plan("greedy_plan")
    if not wb.diff_toggle.value or a is None or b is None:
        return None
    other, here = (b, a) if slot == "ilp_plan" else (a, b)
    try:
        return moved_ops(other, here)
    except HetlabError:  # plans of two problems (one is still being solved)
        return None
