"""``hetlab schedule``: plans on disk, summary line, --list, and bad input (spec §6, issue 3 #6)."""

from __future__ import annotations

import json

import pytest

from hetlab.cli import main
from hetlab.schedulers import Plan
from hetlab.schedulers.bounds import validate_plan
from tests.schedulers.helpers import golden, golden_doc


def write(tmp_path, doc, name="problem.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def test_schedule_writes_valid_plan(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert (
        main(
            [
                "schedule",
                write(tmp_path, golden_doc()),
                "--algo",
                "ilp",
                "--groups",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    plan = Plan.load(out)
    validate_plan(golden(), plan)
    assert plan.makespan == pytest.approx(12.5)
    err = capsys.readouterr().err
    assert "makespan 12.5" in err and "lower bound" in err and "gap" in err


def test_list_json(capsys):
    assert main(["schedule", "--list", "--json"]) == 0
    items = {a["name"]: a for a in json.loads(capsys.readouterr().out)}
    assert {"ilp", "greedy"} <= set(items)
    assert {p["name"] for p in items["ilp"]["params"]} >= {"epsilon", "nt", "time_limit", "groups"}


def _cyclic():
    d = golden_doc()
    d["edges"].append({"src": "v8", "dst": "v1"})
    return d


def _edit(fn):
    d = golden_doc()
    fn(d)
    return d


BAD = {
    "cyclic": (_cyclic(), ["--algo", "ilp"], "cycle"),
    "unknown-node": (
        _edit(lambda d: d["edges"].append({"src": "v1", "dst": "zz"})),
        ["--algo", "ilp"],
        "unknown node",
    ),
    "no-devices": (_edit(lambda d: d.update(devices=[])), ["--algo", "greedy"], "no devices"),
    "negative-cost": (
        _edit(lambda d: d["nodes"][0]["cost"].update(cpu=-1)),
        ["--algo", "ilp"],
        "non-negative",
    ),
    "text-cost": (
        _edit(lambda d: d["nodes"][0]["cost"].update(cpu="fast")),
        ["--algo", "ilp"],
        "number",
    ),
    "no-device-runs": (
        _edit(lambda d: d["nodes"][1]["cost"].update(cpu=None)),
        ["--algo", "ilp"],
        "no device",
    ),
    "unknown-algo": (golden_doc(), ["--algo", "magic"], "unknown algorithm"),
    "nt-range": (golden_doc(), ["--algo", "ilp", "--nt", "0"], "out of range"),
    "eps-range": (golden_doc(), ["--algo", "ilp", "--epsilon", "1.5"], "out of range"),
    "param-for-other-algo": (golden_doc(), ["--algo", "greedy", "--nt", "5"], "unknown parameter"),
    "not-json": ("this is { not json", ["--algo", "ilp"], "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_one_line_exit_2_no_file(case, tmp_path, capsys):
    doc, args, words = BAD[case]
    out = tmp_path / "plan.json"
    rc = main(["schedule", write(tmp_path, doc), *args, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("hetlab: error:")
    assert words.lower() in err.lower()
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["problem.json"]  # no temp file either


def test_model_without_profile_is_bad_input(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert main(["schedule", "squeezenet", "--algo", "ilp", "--out", str(out)]) == 2
    assert "--profile" in capsys.readouterr().err
    assert not out.exists()


def test_model_with_profile_loads_profile(tmp_path):
    out = tmp_path / "plan.json"
    prof = write(tmp_path, golden_doc(), "prof.json")
    assert (
        main(
            [
                "schedule",
                "squeezenet",
                "--profile",
                prof,
                "--algo",
                "greedy",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    validate_plan(golden(), Plan.load(out))


def test_devices_restricts_the_schedule_to_some_of_the_problem_s_devices(tmp_path, capsys):
    doc = golden_doc()
    keep = doc["devices"][:1]
    out = tmp_path / "plan.json"
    argv = ["schedule", write(tmp_path, doc), "--algo", "heft", "--devices", ",".join(keep)]
    assert main([*argv, "--out", str(out)]) == 0
    assert set(Plan.load(out).device_of.values()) == set(keep)
    assert main([*argv[:-1], "nowhere", "--out", str(tmp_path / "x.json")]) == 2
    assert "no device 'nowhere'" in capsys.readouterr().err
