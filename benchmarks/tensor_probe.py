"""A probe of the tensor-core path: zoo models on ``cuda0`` at each precision, through
``hetlab.run`` with ``check`` (medians of ``--repeat`` runs, ``max_rel_err`` against
onnxruntime in float32): the quick check of the library GEMM on one device, beside the
whole table of ``precision.py``.

    python -m benchmarks.tensor_probe --models googlenet,resnet50 --repeat 50 --out probe.json
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from typing import Any

import hetlab
from hetlab.devices import platform_devices
from hetlab.errors import HetlabError
from hetlab.zoo import path as zoo_path


def at_precision(dev: Any, precision: str) -> Any:
    """``dev`` at ``precision``: ``Device.with_precision`` where the checkout has it, else a
    copy of the device object with its ``precision`` set."""
    if hasattr(dev, "with_precision"):
        return dev.with_precision(precision)
    view = copy.copy(dev)
    view.precision = precision
    return view


def row(graph: Any, dev: Any, precision: str, repeat: int) -> dict[str, Any]:
    try:
        rep = hetlab.run(
            graph, "cuda0", {"cuda0": at_precision(dev, precision)}, repeat=repeat, check=True
        )
    except (HetlabError, RuntimeError, ValueError) as e:
        return {"precision": precision, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    return {
        "precision": precision,
        "median_ms": rep.latency_ms["median"],
        "max_rel_err": rep.max_rel_err,
        "check": {k: v for k, v in rep.extra.items() if "tol" in k or "check" in k},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="googlenet,resnet50")
    ap.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    devs = {d.name: d for d in platform_devices()}
    if "cuda0" not in devs:
        print("no cuda0 here", file=sys.stderr)
        return 1
    dev = devs["cuda0"]
    rows = []
    for name in args.models.split(","):
        graph = hetlab.load(str(zoo_path(name)))
        for p in args.precisions.split(","):
            r = {"model": name, **row(graph, dev, p, args.repeat)}
            print(json.dumps(r), flush=True)
            rows.append(r)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"info": dev.info(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
