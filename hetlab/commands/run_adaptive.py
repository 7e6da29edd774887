"""``hetlab run MODEL ... --adaptive`` (spec §5, NN-Stretch): re-plan away from a device
that slows down and back when it recovers, and print the switches."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hetlab.devices.bound import BoundPlan
from hetlab.executor.check import check_line
from hetlab.executor.check_verdict import failure


def main_adaptive(args: argparse.Namespace, bound: BoundPlan, feed: dict, problem: Any) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.stretch.adaptive import AdaptiveConfig
    from hetlab.stretch.adaptive_report import adaptive_run

    cfg = AdaptiveConfig(
        threshold=args.threshold, patience=args.patience, probe_every=args.probe_every
    )
    doc = adaptive_run(
        bound.graph,
        bound.plan,
        dict(bound.devices),
        feed,
        args.repeat,
        cfg,
        problem,
        args.interfere,
        args.compare,
        args.check,
        bound.makespan,
        args.adaptive_trace,
    )
    if args.json:
        json.dump(doc, sys.stdout)
        sys.stdout.write("\n")
        return check_status(doc)
    lat = doc["latency_ms"]
    print(f"model      {doc['model']}  ({doc['model_path']})")
    print(
        f"adaptive   median {lat['median']:.3f} ms (p10 {lat['p10']:.3f}, p90 {lat['p90']:.3f}; {args.repeat} runs)"
    )
    if "static_median_ms" in doc:
        print(
            f"static     median {doc['static_median_ms']:.3f} ms (same interference, no switching)"
        )
    for s in doc["adaptive"]["switches"]:
        print(
            f"switch     before run {s['run']}: {s['from']} -> {s['to']} ({s['device']} at {s['slowdown']}x)"
        )
    if (line := check_line(doc)) is not None:
        print(f"check      {line}")
    return check_status(doc)


def check_status(doc: dict) -> int:
    """The exit status of a run: 1, with one line on stderr, where its check failed
    whatever its error (a non-finite reference or result), else 0."""
    if (why := failure(doc)) is None:
        return 0
    print(f"hetlab: check failed: {why}", file=sys.stderr)
    return 1
