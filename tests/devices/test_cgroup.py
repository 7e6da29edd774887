"""cgroup limits (``hetlab.devices.cgroup``) from fake cgroup trees, and their use in sizing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetlab.devices import cgroup, cpu_groups

GIB = 1 << 30


def tree(tmp_path: Path, files: dict[str, str], proc: str) -> tuple[Path, Path]:
    """A fake ``/sys/fs/cgroup`` with ``files`` and a fake ``/proc/self/cgroup``."""
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    (tmp_path / "proc").write_text(proc)
    return root, tmp_path / "proc"


def test_v2_quota_and_memory_at_the_namespace_root(tmp_path):
    root, proc = tree(tmp_path, {"cpu.max": "250000 100000", "memory.max": str(3 * GIB)}, "0::/\n")
    lim = cgroup.limits(root, proc)
    assert lim == cgroup.Limits(cpus=2.5, memory=3 * GIB)
    assert cgroup.cpu_count(16, lim) == 2 and cgroup.cpu_count(1, lim) == 1


def test_v2_unlimited_is_none(tmp_path):
    root, proc = tree(tmp_path, {"cpu.max": "max 100000", "memory.max": "max"}, "0::/\n")
    assert cgroup.limits(root, proc) == cgroup.Limits()
    assert cgroup.cpu_count(16, cgroup.Limits()) == 16


def test_v2_the_smallest_limit_on_the_path_wins(tmp_path):
    files = {
        "cpu.max": "max 100000",
        "kubepods/cpu.max": "400000 100000",
        "kubepods/pod1/cpu.max": "150000 100000",
        "kubepods/memory.max": str(2 * GIB),
        "kubepods/pod1/memory.max": "max",
    }
    root, proc = tree(tmp_path, files, "0::/kubepods/pod1\n")
    assert cgroup.limits(root, proc) == cgroup.Limits(cpus=1.5, memory=2 * GIB)
    assert cgroup.cpu_count(8, cgroup.limits(root, proc)) == 1


def test_v1_quota_period_and_memory(tmp_path):
    files = {
        "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000",
        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000",
        "memory/docker/abc/memory.limit_in_bytes": str(GIB),
        "memory/memory.limit_in_bytes": "9223372036854771712",  # v1's "no limit"
    }
    proc = "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n2:cpuset:/\n0::/\n"
    root, proc_file = tree(tmp_path, files, proc)
    assert cgroup.limits(root, proc_file) == cgroup.Limits(cpus=3.0, memory=GIB)


def test_v1_no_quota_and_unreadable_files(tmp_path):
    files = {
        "cpu/cpu.cfs_quota_us": "-1",
        "cpu/cpu.cfs_period_us": "100000",
        "memory/memory.limit_in_bytes": "9223372036854771712",
        "cpu.max": "garbage",
    }
    root, proc = tree(tmp_path, files, "1:cpu:/\n4:memory:/gone\n0::/\n")
    assert cgroup.limits(root, proc) == cgroup.Limits()
    assert cgroup.limits(tmp_path / "none", tmp_path / "none") == cgroup.Limits()


def test_memory_is_the_smaller_of_machine_and_cgroup():
    free = cgroup.memory_bytes(cgroup.Limits())
    assert free is None or free > 0
    if free:
        assert cgroup.memory_bytes(cgroup.Limits(memory=free // 2)) == free // 2
        assert cgroup.memory_bytes(cgroup.Limits(memory=free * 2)) == free


@pytest.mark.parametrize(("quota", "groups"), [(None, [8, 8]), (2.0, [1, 1]), (5.5, [3, 2])])
def test_cpu_groups_are_sized_from_the_quota(monkeypatch, quota, groups):
    cores = list(range(100, 116))  # ids without sysfs topology: one physical core each
    monkeypatch.setattr(cpu_groups, "available_cores", lambda: cores)
    monkeypatch.setattr(cgroup, "limits", lambda *a, **k: cgroup.Limits(cpus=quota))
    got = cpu_groups.default_groups()
    assert [len(g["cores"]) for g in got] == groups
    assert {c for g in got for c in g["cores"]} <= set(cores[: sum(groups)])
