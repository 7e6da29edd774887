"""PoCL 5 and later build hetlab's kernels under continuation-based barriers (``pocl.py``)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from hetlab.devices import cpu_groups
from hetlab.devices.opencl import pocl


def _device(version: str) -> SimpleNamespace:
    return SimpleNamespace(platform=SimpleNamespace(version=version))


@pytest.mark.parametrize(
    ("version", "major"),
    [
        ("OpenCL 3.0 PoCL 5.0+debian  Linux, None+Asserts, RELOC, LLVM 16.0.6", 5),
        ("OpenCL 3.0 PoCL 3.0-rc2  Linux, Release, RELOC, LLVM 14", 3),
        ("OpenCL 3.0 CUDA 13.0.84", None),
    ],
)
def test_the_pocl_version_is_read_from_the_platform(version, major):
    assert pocl.pocl_major(_device(version)) == major


def test_pocl_5_builds_under_cbs_unless_the_user_chose_a_method(monkeypatch):
    monkeypatch.setenv("POCL_WORK_GROUP_METHOD", "")  # restored as it was after the test
    monkeypatch.delenv("POCL_WORK_GROUP_METHOD")
    assert pocl.build_options(_device("OpenCL 3.0 PoCL 3.0-rc2")) == []
    assert pocl.build_options(_device("OpenCL 3.0 NVIDIA CUDA")) == []
    assert "POCL_WORK_GROUP_METHOD" not in os.environ
    assert pocl.build_options(_device("OpenCL 3.0 PoCL 5.0+debian")) == [pocl.CBS_OPTION]
    assert os.environ["POCL_WORK_GROUP_METHOD"] == "cbs"
    monkeypatch.setenv("POCL_WORK_GROUP_METHOD", "loopvec")
    assert pocl.build_options(_device("OpenCL 3.0 PoCL 6.0")) == []
    assert os.environ["POCL_WORK_GROUP_METHOD"] == "loopvec"


def _one_thread_per_core(monkeypatch):
    """Each logical id its own physical core (sysfs says nothing for these fakes)."""
    monkeypatch.setattr(cpu_groups, "physical_cores", lambda cores: [[c] for c in cores])


def test_pocl_s_pool_is_one_cpu_group_on_four_or_more_cores(monkeypatch):
    _one_thread_per_core(monkeypatch)
    env: dict[str, str] = {}
    assert pocl.size_pool(list(range(16)), env) == 8
    assert env == {pocl.POOL_ENV: "8"}
    assert pocl.size_pool(list(range(5)), {}) == 3  # the first half, as cpu_groups splits


def test_pocl_keeps_every_core_below_four_and_a_pool_the_user_sized(monkeypatch):
    _one_thread_per_core(monkeypatch)
    env: dict[str, str] = {}
    assert pocl.size_pool([0, 1], env) is None and env == {}  # groups of one core each
    env = {pocl.POOL_ENV: "16"}
    assert pocl.size_pool(list(range(16)), env) is None and env[pocl.POOL_ENV] == "16"
