"""One device's pass over the units to measure, in rounds.

Contention on a shared machine drifts over seconds. Rather than take all of one op's samples
at one moment, the pass visits every unit ``rounds`` times and takes a share of its samples
each time (the first visit prepares it and runs the warm-up); the statistics pool them. A unit
is stored in the cache after its last round, so Ctrl-C keeps every unit finished so far.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hetlab.devices.base import Device
from hetlab.errors import HetlabError
from hetlab.graph.ir import OpGraph
from hetlab.profiling.measure import Budget, make_runner, plan_repeats, summarize
from hetlab.profiling.tensor_values import Values

Item = tuple[str, str, list[str]]  # (cache section, signature, node ids)
# sections that set the scale of a device's costs (``in_context.py``): on a device that
# ``writes_inputs`` (OpenCL) timed with their inputs written before each run, as the executor
# runs a unit
WRITTEN = ("windows", "whole")


def written(d: Device, sec: str) -> bool:
    """Whether ``sec``'s units are timed on ``d`` with their inputs written first."""
    return sec in WRITTEN and d.capabilities().writes_inputs


def measure_device(
    d: Device,
    store: Any,
    items: Sequence[Item],
    graph: OpGraph,
    values: Values,
    budget: Budget,
    rounds: int,
    tick: Callable[..., None],
) -> dict[tuple[str, str], Any]:
    """Statistics (or ``{"error": message}`` when the unit failed) per ``(section,
    signature)``; cached ones are taken from ``store``. ``tick(message, fresh)`` is called once per unit and round."""
    out: dict[tuple[str, str], Any] = {}
    todo: list[Item] = []
    for sec, s, nodes in items:
        hit = store.get(sec, f"{s}|written" if written(d, sec) else s)
        if hit is None or "median" not in hit:  # a failure is tried again: it may be fixed
            todo.append((sec, s, nodes))
            continue
        out[sec, s] = hit
        for _ in range(rounds):
            tick(f"{_label(d, graph, nodes)} (cached)")
    state: dict[tuple[str, str], dict[str, Any]] = {}
    for r in range(rounds):
        for sec, s, nodes in todo:
            st = state.setdefault((sec, s), {"samples": []})
            if "error" not in st:
                try:
                    if r == 0:
                        unit = d.prepare(graph, nodes)
                        st["unit"] = unit  # a timer may hold only raw pointers into it
                        st["run"], st["timer"] = make_runner(
                            d, unit, values.get(unit.inputs), written(d, sec)
                        )
                        warm = [st["run"]() for _ in range(max(1, budget.warmup))]
                        st["n"] = plan_repeats(warm, budget)
                    share = st["n"] * (r + 1) // rounds - st["n"] * r // rounds
                    st["samples"].extend(
                        st["run"]() * 1e3 for _ in range(max(share, 1 if r == 0 else 0))
                    )
                except (KeyboardInterrupt, HetlabError):
                    raise
                except Exception as e:  # noqa: BLE001 - a device failing an op it claimed: cannot run it
                    msg = (
                        str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                    )
                    st.clear()
                    st["error"] = msg
            if r == rounds - 1:
                res = (
                    {"error": st["error"]}
                    if "error" in st
                    else {**summarize(st["samples"]), "timer": st["timer"]}
                )
                store.put(sec, f"{s}|written" if written(d, sec) else s, res)
                out[sec, s] = res
                state.pop((sec, s), None)
            tick(_label(d, graph, nodes), r == rounds - 1)
    return out


def _label(d: Device, graph: OpGraph, nodes: list[str]) -> str:
    return f"{d.name}: {graph.node(nodes[0]).op_type}" + (
        "" if len(nodes) == 1 else f" +{len(nodes) - 1}"
    )
