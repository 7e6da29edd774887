"""``hetlab devices [--json] [--platform FILE] [--queues DEVICE=N] [--whole-cpu NAME]`` (spec
§5): the devices of this machine; and the platform flags every command that finds devices
takes."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hetlab.commands.options import add_platform_args, platform_options


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the spec §5 JSON list")
    add_platform_args(p)


def describe(info: dict[str, Any]) -> str:
    """One human line for a device's ``info()``."""
    if info.get("kind") == "onnxruntime-cpu":
        cores = info.get("cores", [])
        return f"{info.get('threads')} thread(s) on core(s) {_ranges(cores)}"
    if info.get("kind") == "opencl":
        parts = [
            info.get("device"),
            f"platform {info.get('platform')}" if info.get("platform") else None,
            f"driver {info.get('driver_version') or info.get('driver')}"
            if info.get("driver_version") or info.get("driver")
            else None,
            f"{info.get('compute_units')} compute units" if info.get("compute_units") else None,
            f"driven from core(s) {_ranges(info['host_cores'])}"
            if info.get("host_cores")
            else None,
        ]
        return ", ".join(str(x) for x in parts if x)
    return ", ".join(f"{k}={v}" for k, v in info.items() if k not in ("name", "kind"))


def _ranges(cores: list[int]) -> str:
    out, i = [], 0
    cs = sorted(cores)
    while i < len(cs):
        j = i
        while j + 1 < len(cs) and cs[j + 1] == cs[j] + 1:
            j += 1
        out.append(str(cs[i]) if i == j else f"{cs[i]}-{cs[j]}")
        i = j + 1
    return ",".join(out)


def main(args: argparse.Namespace) -> int:
    # lazy: building the command-line parser imports this module; the run needs these
    from hetlab.devices.choice import platform_devices
    from hetlab.devices.cuda.runtime import why_no_cuda

    infos = [
        {**d.info(), "precisions": list(d.capabilities().precisions)}
        for d in platform_devices(**platform_options(args))
    ]
    if args.json:
        print(json.dumps(infos, indent=1, default=str))
        return 0
    w = max(len(i["name"]) for i in infos)
    k = max(len(i["kind"]) for i in infos)
    for i in infos:
        more = f"; precisions {', '.join(i['precisions'])}" if len(i["precisions"]) > 1 else ""
        print(f"{i['name']:<{w}}  {i['kind']:<{k}}  {describe(i)}{more}")
    why = None if any(i["kind"] == "cuda" for i in infos) else why_no_cuda()
    if why:
        print(f"note: {why}", file=sys.stderr)
    return 0
