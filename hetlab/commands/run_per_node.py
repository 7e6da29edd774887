"""``hetlab run MODEL --device NAME --check --per-node [TOL]`` (spec §5): each node on the
device alone, fed onnxruntime's values of its inputs, and the nodes whose outputs differ."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hetlab.executor.check import reference


def main_per_node(args: argparse.Namespace, graph: Any, devs: list, feed: dict) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.executor.divergence import format_scan, scan

    dev = next(d for d in devs if d.name == args.device)
    found = scan(graph, dev, feed, rtol=args.per_node)
    found.spread = reference(graph, feed).spread
    if args.json:
        json.dump({"model": graph.name, **found.to_json()}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(format_scan(found, graph))
    return 0
