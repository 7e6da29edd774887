"""The host's CPU topology from sysfs: logical CPUs grouped by physical core. Below the
platform (its default CPU groups) and the onnxruntime device (its pool's affinity), which
both read it."""

from __future__ import annotations

from pathlib import Path


def physical_cores(cores: list[int]) -> list[list[int]]:
    """``cores`` grouped by physical core (hyperthread siblings together, from sysfs),
    in order of their first logical id; one per logical id where sysfs says nothing."""
    key: dict[int, tuple[str, str]] = {}
    for c in cores:
        base = Path(f"/sys/devices/system/cpu/cpu{c}/topology")
        try:
            key[c] = (
                (base / "physical_package_id").read_text().strip(),
                (base / "core_id").read_text().strip(),
            )
        except OSError:
            key[c] = ("cpu", str(c))
    phys: dict[tuple[str, str], list[int]] = {}
    for c in sorted(cores):
        phys.setdefault(key[c], []).append(c)
    return sorted(phys.values(), key=lambda g: g[0])
