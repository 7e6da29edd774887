from __future__ import annotations

import json
import os

import pytest

from hetlab.cli import main as cli_main
from hetlab.devices import cgroup, cpu_groups
from hetlab.devices import platform as pf
from hetlab.errors import HetlabError

CORES = sorted(os.sched_getaffinity(0))


@pytest.fixture(autouse=True)
def _no_cgroup_quota(monkeypatch):
    """These tests size groups over the visible cores; test_cgroup.py covers the quota."""
    monkeypatch.setattr(cgroup, "limits", lambda *a, **k: cgroup.Limits())


def test_default_groups_follow_the_core_count():
    assert [g["cores"] for g in cpu_groups.default_groups([0, 1])] == [[0], [1]]
    assert [g["name"] for g in cpu_groups.default_groups([0, 1])] == ["cpu0", "cpu1"]
    g16 = cpu_groups.default_groups(
        list(range(100, 116))
    )  # ids without sysfs topology: one core each
    assert [len(g["cores"]) for g in g16] == [8, 8] and [g["threads"] for g in g16] == [8, 8]
    assert [len(g["cores"]) for g in cpu_groups.default_groups(list(range(100, 105)))] == [3, 2]
    assert sorted(c for g in cpu_groups.default_groups(CORES) for c in g["cores"]) == CORES


def test_default_devices_are_cpu_groups_first():
    devs = pf.devices()
    assert devs and devs[0].kind == "onnxruntime-cpu"
    cpu = [d for d in devs if d.kind == "onnxruntime-cpu"]
    assert sorted(c for d in cpu for c in d.cores) == CORES


def test_toml_platform_names_groups(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(f'[[cpu]]\nname = "big"\ncores = [{CORES[0]}]\nthreads = 2\n')
    devs = pf.devices(f)
    assert devs[0].name == "big" and devs[0].cores == [CORES[0]] and devs[0].threads == 2
    assert pf.get("big", f) is devs[0]
    with pytest.raises(HetlabError, match="unknown device 'cpu9'"):
        pf.get("cpu9", f)


def test_json_platform(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(
        json.dumps(
            {
                "cpu": [{"name": "a", "cores": CORES[:1]}],
                "opencl": {"include": []},
                "cuda": {"include": []},
            }
        )
    )
    assert [d.name for d in pf.devices(f)] == ["a"]


@pytest.mark.parametrize(
    "text,msg",
    [
        ("[[cpu]]\nname = 'x'\ncores = [4096]\n", "do not exist here"),
        ("[[cpu]]\nname = 'x'\ncores = []\n", "non-empty list of core ids"),
        ("[[cpu]]\nname = 'x'\ncores = 'all'\n", "non-empty list of core ids"),
        ("[[cpu]\nname = 'x'", "not valid TOML"),
        ("cpu = 3\n", "non-empty list of groups"),
        (
            f"[[cpu]]\nname='a'\ncores=[{CORES[0]}]\n[[cpu]]\nname='a'\ncores=[{CORES[-1]}]\n",
            "duplicate device name",
        ),
        (
            f"[[cpu]]\nname='a'\ncores=[{CORES[0]}]\n[[cpu]]\nname='b'\ncores=[{CORES[0]}]\n",
            "already in group",
        ),
        ("[[cpu]]\nname = 'bad name'\ncores = [0]\n", "bad name"),
        ("[opencl]\ninclude = 'cl0'\n", "opencl.include"),
    ],
)
def test_bad_platform_files_are_one_line_errors(tmp_path, text, msg):
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(HetlabError, match=msg) as e:
        pf.devices(f)
    assert "\n" not in str(e.value)


def test_missing_and_malformed_json_files(tmp_path):
    with pytest.raises(HetlabError, match="not found"):
        pf.devices(tmp_path / "nope.toml")
    f = tmp_path / "p.json"
    f.write_text("{cpu: [")
    with pytest.raises(HetlabError, match="not valid JSON"):
        pf.devices(f)


class _CL:
    kind = "opencl"

    def __init__(self, name):
        self.name = name


def test_opencl_include_exclude_and_rename(tmp_path, monkeypatch):
    monkeypatch.setattr(pf, "opencl_devices", lambda: [_CL("cl0"), _CL("cl1")])
    f = tmp_path / "p.toml"
    f.write_text('[opencl]\ninclude = ["cl1"]\nnames = {cl1 = "gpu"}\n')
    devs = pf.devices(f)
    assert [d.name for d in devs if d.kind == "opencl"] == ["gpu"]
    g = tmp_path / "q.toml"
    g.write_text('[opencl]\nexclude = ["cl0"]\n')
    assert [d.name for d in pf.devices(g) if d.kind == "opencl"] == ["cl1"]


def test_opencl_backend_absent_means_no_opencl_devices(monkeypatch):
    real = pf.importlib.import_module

    def fake_import(name, *a, **k):
        if name.startswith(("hetlab.devices.opencl", "hetlab.devices.cuda")):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(pf.importlib, "import_module", fake_import)
    assert pf.opencl_devices() == []
    assert pf._discovered("cuda") == []


def test_cli_devices_json_and_bad_platform(tmp_path, capsys):
    assert cli_main(["devices", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    cpu = [d for d in doc if d["kind"] == "onnxruntime-cpu"]
    assert cpu and all({"name", "threads", "cores"} <= set(d) for d in cpu)
    assert all("fp32" in d["precisions"] for d in doc)  # what each device declares
    assert cli_main(["devices"]) == 0
    assert "onnxruntime-cpu" in capsys.readouterr().out
    f = tmp_path / "p.toml"
    f.write_text("[[cpu]]\nname = 'x'\ncores = [4096]\n")
    assert cli_main(["devices", "--platform", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "4096" in err


def test_a_file_without_cpu_or_opencl_is_refused(tmp_path):
    from hetlab.devices.platform_file import read_platform
    from hetlab.errors import HetlabError

    p = tmp_path / "problem.json"
    p.write_text('{"name": "x", "devices": ["a"], "nodes": []}')
    with pytest.raises(HetlabError, match="is this a platform file"):
        read_platform(p)


class _FakeGpu:
    kind = "opencl"

    def __init__(self, name: str, kind: str = "GPU") -> None:
        self.name, self.type, self.host_cores = name, kind, None

    def info(self) -> dict:
        return {"name": self.name, "type": self.type}


def test_each_gpu_gets_a_core_for_its_driving_thread(monkeypatch):
    cores = list(range(100, 116))  # ids without sysfs topology: one physical core each
    monkeypatch.setattr(cpu_groups, "available_cores", lambda: cores)
    monkeypatch.setattr(pf, "opencl_devices", lambda: [_FakeGpu("cl0"), _FakeGpu("cl1", "CPU")])
    devs = pf.devices({"opencl": {}})
    cpu = [d for d in devs if d.kind == "onnxruntime-cpu"]
    assert [d.cores for d in cpu] == [cores[:8], cores[8:15]]
    assert (
        devs[-2].host_cores == [115] and devs[-1].host_cores is None
    )  # PoCL-like CPU device: none
    # below 4 cores nothing is reserved; a platform file's own groups are kept as written
    monkeypatch.setattr(cpu_groups, "available_cores", lambda: [100, 101])
    assert [d.cores for d in pf.devices({"opencl": {}}) if d.kind == "onnxruntime-cpu"] == [
        [100],
        [101],
    ]
    doc = {
        "cpu": [{"name": "a", "cores": [CORES[0]]}],
        "opencl": {"host_cores": {"cl0": [CORES[-1]]}},
    }
    monkeypatch.setattr(cpu_groups, "available_cores", lambda: CORES)
    devs = pf.devices(doc)
    assert devs[0].cores == [CORES[0]] and devs[1].host_cores == [CORES[-1]]
    with pytest.raises(HetlabError, match="host_cores"):
        pf.devices({"opencl": {"host_cores": {"cl0": [99999]}}})


def test_one_driver_per_gpu_keeps_cuda_where_it_drives_the_gpu():
    class Dev:
        def __init__(self, name, kind, hw):
            self.name, self.kind, self._hw = name, kind, hw

        def hardware_id(self):
            return self._hw

    devs = [
        Dev("cpu0", "onnxruntime-cpu", None),
        Dev("cl0", "opencl", "pci:0000:1a"),
        Dev("cl0.q1", "opencl", "pci:0000:1a"),
        Dev("cl1", "opencl", None),  # PoCL: no PCI address
        Dev("cl2", "opencl", "pci:0000:2b"),  # a GPU that CUDA does not drive
        Dev("cuda0", "cuda", "pci:0000:1a"),
    ]
    kept = [d.name for d in pf.one_driver_per_gpu(devs)]
    assert kept == ["cpu0", "cl1", "cl2", "cuda0"]
    assert [d.name for d in pf.one_driver_per_gpu(devs[:5])] == [d.name for d in devs[:5]]
