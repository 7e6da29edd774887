"""A data-dependent model profiles with the input values the user gives (``--input``)."""

from __future__ import annotations

from tests.thirdparty.conftest import MODELS, model_path


def test_silero_profiles_with_its_sample_rate():
    from hetlab.calibrate import profile
    from hetlab.graph.onnx_io import load

    m = MODELS["silero_vad"]
    g, values = load(model_path("silero_vad"), m.shapes, m.inputs()), m.inputs()
    p = profile(
        g, ["cpu0"], repeat=3, warmup=1, rounds=1, context=0, comm=False, cache=False, inputs=values
    )
    by = {n.op_type: n.cost["cpu0"] for n in p.nodes}
    assert (
        by["If"] is not None and by["If"] > 0
    )  # random sr took the 8 kHz branch on a 512 window and failed
