"""Precision as a setting of devices: ``Device.with_precision`` and the user's choice
(``precision_choice``), on a fake device that declares tf32 and on PoCL, which declares fp32
only."""

from __future__ import annotations

import pytest

from hetlab.devices import at_precision, parse_precision, select
from hetlab.devices.precision_choice import precision_note, precisions_of
from hetlab.errors import HetlabError
from tests.precision_fakes import Tf32Device
from tests.profiling.cost_helpers import OrtTestDevice


def test_parse_one_precision_or_one_per_device():
    assert parse_precision("tf32") == "tf32"
    assert parse_precision(None) is None and parse_precision("") is None
    assert parse_precision(["cuda0=tf32", "cl0=fp32"]) == {"cuda0": "tf32", "cl0": "fp32"}
    assert parse_precision({"cuda0": "fp16"}) == {"cuda0": "fp16"}
    for bad, pattern in (("fp8", "unknown precision 'fp8'"), ("cuda0=", "unknown precision")):
        with pytest.raises(HetlabError, match=pattern):
            parse_precision(bad)
    with pytest.raises(HetlabError, match="DEVICE=PRECISION"):
        parse_precision("tf32,fp16")


def test_with_precision_is_a_copy_sharing_its_root_and_views_follow():
    dev = Tf32Device("gpu")
    view = dev.queue_view(1)
    fast = dev.with_precision("tf32")
    assert fast is not dev and fast.precision == "tf32" and dev.precision == "fp32"
    assert fast.name == "gpu" and dev.with_precision("tf32") is fast  # one object per precision
    fast_view = view.with_precision("tf32")
    assert fast_view.root is fast and view.root is dev  # roots stay shared
    assert fast.with_precision("fp32") is dev and dev.with_precision("fp32") is dev
    assert fast.fingerprint() != dev.fingerprint()  # a profile cache key per precision
    assert "precision" not in dev.fingerprint()  # fp32 keys are those of before


def test_a_device_refuses_a_precision_it_does_not_declare_in_one_line():
    with pytest.raises(HetlabError, match="cpu cannot run at tf32: it declares fp32 only"):
        OrtTestDevice("cpu").with_precision("tf32")


def test_one_precision_for_all_leaves_the_others_at_fp32_and_says_so():
    gpu, cpu = Tf32Device("gpu"), OrtTestDevice("cpu")
    view = gpu.queue_view(1)
    out = at_precision([cpu, gpu, view], "tf32")
    assert [d.precision for d in out] == ["fp32", "tf32", "tf32"]
    assert out[0] is cpu and out[2].root is out[1]
    assert precision_note([cpu, gpu, view], "tf32") == "cpu does not declare tf32: fp32 there"
    assert precision_note([cpu, gpu], {"gpu": "tf32"}) is None
    assert precisions_of(out) == {"gpu": "tf32", "gpu.q1": "tf32"}


def test_per_device_precision_covers_the_views_and_refuses_unknown_names():
    gpu, cpu = Tf32Device("gpu"), OrtTestDevice("cpu")
    out = at_precision([cpu, gpu, gpu.queue_view(1)], "gpu=tf32,cpu=fp32")
    assert [d.precision for d in out] == ["fp32", "tf32", "tf32"]
    with pytest.raises(HetlabError, match="--precision names 'nope'"):
        at_precision([cpu], {"nope": "tf32"})
    with pytest.raises(HetlabError, match="cpu cannot run at tf32"):
        at_precision([cpu, gpu], "cpu=tf32")


def test_pocl_and_the_cpu_groups_refuse_tf32_in_one_line():
    have = [d.name for d in select("cpu0")]
    assert have == ["cpu0"]
    with pytest.raises(HetlabError, match="cpu0 cannot run at tf32: it declares fp32 only"):
        select("cpu0", precision="cpu0=tf32")
    with pytest.raises(HetlabError, match="--precision tf32: no device here declares it"):
        select("cpu0", precision="tf32")  # asked of all and declared by none: not silent
    try:
        select("cl0")
    except HetlabError:
        pytest.skip("no cl0 here")
    with pytest.raises(HetlabError, match="cl0 cannot run at fp16"):
        select("cl0", precision="cl0=fp16")
