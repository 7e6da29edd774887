"""The profiler's measuring stages: each device's units, the links between devices, and the
executor's calibrations on the finished problem (see ``profiler.py`` for the order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hetlab.errors import HetlabError
from hetlab.profiling import calibrator as cal
from hetlab.profiling.device_pass import measure_device
from hetlab.profiling.measure import probe_overhead

if TYPE_CHECKING:
    from hetlab.profiling.job import Job

Stats = dict[tuple[str, str], dict[str, Any] | None]  # (device, signature) -> statistics


@dataclass
class Measured:
    """Everything the measuring stages found, by (device, signature) or link."""

    ops: Stats = field(default_factory=dict)
    groups: Stats = field(default_factory=dict)
    windows: Stats = field(default_factory=dict)
    whole: Stats = field(default_factory=dict)
    overhead: dict[str, float] = field(default_factory=dict)
    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    shape_ms: dict[tuple[str, str], float] = field(default_factory=dict)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)  # isolated ops that failed


def measure_devices(job: Job, meas: Measured) -> None:
    """Per device: its per-call overhead, then its isolated ops, groups, context windows and
    whole model (or span), in one pass of ``job.opts.rounds`` rounds (``device_pass``)."""
    topo_pos = {v: i for i, v in enumerate(job.graph.topo_order())}
    for d in job.devs:
        store = job.cache.device(d.fingerprint())
        d.bind_thread()
        ov = store.get("overhead", "probe-slope")
        if ov is None:
            ov = probe_overhead(d, job.budget)
            store.put("overhead", "probe-slope", ov)
        meas.overhead[d.name] = float(ov)
        job.tick(f"{d.name}: per-call overhead {ov:.4f} ms")
        ok = lambda v, d=d: job.supports(d.name, v)
        items = [("ops", s, [v]) for s, v in job.reps.items() if ok(v)]
        items += [("groups", s, c) for s, c in job.greps.items() if all(map(ok, c))]
        items += [("windows", job.wsig[k], w) for k, w in enumerate(job.wins) if all(map(ok, w))]
        # in topological order, each window right after its members: a window and the ops
        # it rescales are measured under the same load
        items.sort(
            key=lambda it: (
                topo_pos[it[2][-1]] if it[0] == "windows" else topo_pos[it[2][0]],
                it[0] == "windows",
            )
        )
        if d.name in job.whole_key:
            unit = job.spans.get(d.name, job.everything())
            items.append(("whole", job.whole_key[d.name], unit))
        res = measure_device(
            d, store, items, job.graph, job.values, job.budget, job.opts.rounds, job.tick
        )
        for (sec, s), st in res.items():
            getattr(meas, sec)[d.name, s] = st if st and "median" in st else None
            if sec == "ops" and st and "error" in st:
                meas.errors[d.name, s] = st["error"]
        store.flush()


def measure_links(job: Job, meas: Measured) -> None:
    """Per ordered device pair: the link's latency/bandwidth fit, and each distinct edge
    shape's transfer time (a shape that fails keeps the fit's estimate)."""
    for a, b in job.pairs:
        store = job.cache.link(a.fingerprint(), b.fingerprint(), cal.settings())
        key = f"{a.name}->{b.name}"
        fit = store.get("fit", "link")
        if fit is None:
            fit = cal.calibrate_link(a, b, tick=lambda m: job.tick(m, True))
            store.put("fit", "link", fit)
        else:
            for _ in cal.DEFAULT_SIZES:
                job.tick(f"link {key} (cached)")
        meas.links[key] = fit
        for sk, tens in job.shapes.items():
            ms = store.get("shapes", sk)
            if ms is None:
                ms = _shape_ms(a, b, tens)
                store.put("shapes", sk, ms)
                job.tick(f"{key} {sk}", True)
            else:
                job.tick(f"{key} {sk} (cached)")
            if isinstance(ms, (int, float)):
                meas.shape_ms[key, sk] = float(ms)
        store.flush()


def _shape_ms(a: Any, b: Any, tens: list[Any]) -> Any:
    try:
        return cal.measure_shape(a, b, tens)
    except (KeyboardInterrupt, HetlabError):
        raise
    except Exception as e:  # noqa: BLE001 - the link model covers this shape
        msg = str(e).strip()
        return {"error": msg.splitlines()[0][:200] if msg else type(e).__name__}
