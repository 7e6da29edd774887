"""OpenCL ops over their attribute space against onnxruntime: Resize, ConvTranspose,
HardSigmoid, Sigmoid and Tanh. One small case per combination. A combination onnxruntime runs is
either computed within tolerance or refused by ``why_not`` with a reason, never computed
differently."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import helper

from tests.devices.opencl_case import make_model, reference, rnd, run_case, to_graph
from tests.devices.opencl_case import rel_err as _rel_err

pytest.importorskip("pyopencl")


def _ort_runs(model, inputs, outputs) -> bool:
    try:
        reference(model, inputs, outputs)
    except Exception:  # noqa: BLE001 - onnxruntime's own error types
        return False
    return True


def agree_or_refuse(dev, node, inputs, inits=None, opset=19, tol=1e-5) -> str | None:
    """Run ``node`` on ``dev`` and compare with onnxruntime, or return the refusal reason.
    Skips combinations onnxruntime itself does not run."""
    inits = inits or {}
    model = make_model([node], inputs, inits, list(node.output), opset)
    if not _ort_runs(model, inputs, list(node.output)):
        pytest.skip("onnxruntime does not run this combination")
    graph = to_graph(model, inputs, opset)
    n = graph.nodes[0]
    why = dev.why_not(n, graph)
    if why is not None:
        assert not dev.supports(n, graph) and why.strip()
        return why
    ref = reference(model, inputs, list(node.output))[0]
    unit = dev.prepare(graph, [n.id])
    res = dev.run(unit, {k: inputs[k] for k in unit.inputs})
    out = dev.copy_out(res.outputs[node.output[0]])
    assert out.shape == ref.shape
    err = _rel_err(out, ref)
    assert err <= tol, (err, node)
    return None


# --- Resize -----------------------------------------------------------------------------
MODES = [("nearest", nm) for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")]
MODES += [("linear", None), ("cubic", None)]
CTMS = [
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
]
SCALES = {
    "up2x3": [1, 1, 2, 3],
    "up1.5x2.5": [1, 1, 1.5, 2.5],
    "down0.5x0.75": [1, 1, 0.5, 0.75],
    "mixed0.6x1.7": [1, 1, 0.6, 1.7],
}
SIZES = {"sizes_up": [1, 2, 11, 7], "sizes_down": [1, 2, 3, 2]}
ROI = np.array([0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7], dtype=np.float32)


def _resize(mode, nm, ctm, scales=None, sizes=None, **extra):
    kw = {"mode": mode, "coordinate_transformation_mode": ctm, **extra}
    if nm:
        kw["nearest_mode"] = nm
    inits = {}
    roi = ""
    if ctm == "tf_crop_and_resize":
        inits["roi"], roi = ROI, "roi"
    if scales is not None:
        inits["s"] = np.array(scales, dtype=np.float32)
        ins = ["x", roi, "s"]
    else:
        inits["z"] = np.array(sizes, dtype=np.int64)
        ins = ["x", roi, "", "z"]
    return helper.make_node("Resize", ins, ["y"], **kw), inits


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("mode,nm", MODES, ids=[f"{m}-{n}" if n else m for m, n in MODES])
@pytest.mark.parametrize("how", list(SCALES) + list(SIZES))
def test_resize_attribute_space(dev, mode, nm, ctm, how):
    if how in SCALES:
        node, inits = _resize(mode, nm, ctm, scales=SCALES[how])
    else:
        node, inits = _resize(mode, nm, ctm, sizes=SIZES[how])
    x = {"x": rnd(1, 2, 6, 5, lo=-2, hi=2)}
    why = agree_or_refuse(dev, node, x, inits, tol=1e-6 if mode == "nearest" else 1e-5)
    if mode == "cubic":
        assert why is not None and "cubic" in why


@pytest.mark.parametrize("ctm", [c for c in CTMS if c not in ("tf_crop_and_resize",)])
@pytest.mark.parametrize("nm", [m[1] for m in MODES if m[0] == "nearest"])
def test_resize_nearest_rounding_boundaries(dev, ctm, nm):
    """Output sizes whose source coordinates land on or next to exact halves and integers."""
    x = {"x": rnd(1, 1, 6, 5, lo=-2, hi=2)}
    for h, w in [(2, 3), (4, 10), (7, 11), (9, 15), (13, 3)]:
        for how in ("sizes", "scales"):
            if how == "sizes":
                node, inits = _resize("nearest", nm, ctm, sizes=[1, 1, h, w])
            else:
                node, inits = _resize("nearest", nm, ctm, scales=[1, 1, h / 6 + 0.01, w / 5 - 0.01])
            agree_or_refuse(dev, node, x, inits, tol=0.0)


@pytest.mark.parametrize("sizes", [[1, 2, 3, 4], [1, 2, 11, 9]], ids=["down", "up"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_antialias(dev, mode, sizes):
    node, inits = _resize(mode, None, "half_pixel", sizes=sizes, antialias=1)
    why = agree_or_refuse(dev, node, {"x": rnd(1, 2, 6, 5)}, inits)
    if mode == "linear" and sizes[2] < 6:
        assert why is not None and "antialias" in why


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_axes_and_keep_aspect_ratio_policy(dev, policy, mode):
    node = helper.make_node(
        "Resize",
        ["x", "", "", "z"],
        ["y"],
        mode=mode,
        axes=[2, 3],
        keep_aspect_ratio_policy=policy,
    )
    why = agree_or_refuse(dev, node, {"x": rnd(1, 2, 6, 5)}, {"z": np.array([9, 4], np.int64)})
    assert why is None, why


def test_resize_extrapolation_and_exclude_outside(dev):
    node, inits = _resize(
        "linear", None, "tf_crop_and_resize", scales=[1, 1, 1.7, 2.2], extrapolation_value=-3.0
    )
    agree_or_refuse(dev, node, {"x": rnd(1, 2, 6, 5)}, inits)


@pytest.mark.parametrize("opset", [10, 11, 13])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 0.75], [1, 1, 1.5, 2.5]])
def test_resize_older_opsets(dev, opset, scales):
    if opset == 10:
        node = helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest")
    else:
        node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")
        if opset == 11:
            node.input[1] = "roi"
    inits = {"s": np.array(scales, dtype=np.float32)}
    if opset == 11:
        inits["roi"] = np.zeros(0, dtype=np.float32)
    agree_or_refuse(dev, node, {"x": rnd(1, 2, 6, 5)}, inits, opset=opset, tol=1e-6)


def test_upsample_nearest_and_linear(dev):
    for mode in ("nearest", "linear"):
        node = helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
        inits = {"s": np.array([1, 1, 2, 3], dtype=np.float32)}
        agree_or_refuse(dev, node, {"x": rnd(1, 2, 4, 5)}, inits, opset=9)


# --- ConvTranspose ----------------------------------------------------------------------
CT_CASES = [
    {},
    {"strides": [2, 2]},
    {"strides": [2, 2], "output_padding": [1, 1]},
    {"strides": [3, 2], "output_padding": [2, 0], "pads": [1, 0, 0, 1]},
    {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"strides": [2, 2], "pads": [0, 1, 2, 0]},
    {"dilations": [2, 2]},
    {"dilations": [2, 1], "strides": [2, 2], "output_padding": [1, 0]},
    {"group": 2},
    {"group": 2, "strides": [2, 2], "dilations": [1, 2], "pads": [1, 0, 1, 1]},
    {"group": 4, "strides": [2, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
    {"auto_pad": "SAME_UPPER", "strides": [3, 2], "dilations": [1, 2]},
    {"auto_pad": "VALID", "strides": [2, 2]},
    {"output_shape": [10, 12], "strides": [2, 2]},
    {"output_shape": [11, 12], "strides": [2, 3]},
    {"output_shape": [10, 12], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
]


@pytest.mark.parametrize("kw", CT_CASES, ids=[str(c) for c in CT_CASES])
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_attribute_space(dev, kw, bias):
    g = kw.get("group", 1)
    cin, cout_g = 4, 3
    inits = {"w": rnd(cin, cout_g, 3, 2, seed=1)}
    ins = ["x", "w"]
    if bias:
        inits["b"] = rnd(cout_g * g, seed=2)
        ins.append("b")
    node = helper.make_node("ConvTranspose", ins, ["y"], **kw)
    why = agree_or_refuse(dev, node, {"x": rnd(1, cin, 5, 6)}, inits)
    assert why is None, why


@pytest.mark.parametrize(
    "kw", [{}, {"strides": [2], "output_padding": [1]}, {"group": 2, "dilations": [2]}]
)
def test_conv_transpose_1d(dev, kw):
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], **kw)
    why = agree_or_refuse(dev, node, {"x": rnd(1, 4, 7)}, {"w": rnd(4, 3, 3, seed=1)})
    assert why is None, why


def test_conv_transpose_explicit_kernel_shape_and_batch(dev):
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3, 2], strides=[2, 2])
    why = agree_or_refuse(dev, node, {"x": rnd(2, 4, 3, 4)}, {"w": rnd(4, 2, 3, 2, seed=1)})
    assert why is None, why


# --- HardSigmoid, Sigmoid ---------------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [{}, {"alpha": 1 / 6}, {"alpha": 0.1666667, "beta": 0.5}, {"alpha": -0.3, "beta": 0.2}],
    ids=str,
)
def test_hardsigmoid_alpha_beta(dev, kw):
    node = helper.make_node("HardSigmoid", ["x"], ["y"], **kw)
    why = agree_or_refuse(dev, node, {"x": rnd(2, 3, 8, 8, lo=-8, hi=8)}, opset=17, tol=1e-6)
    assert why is None, why


@pytest.mark.parametrize("lo,hi", [(-30, -8), (-8, 8), (8, 30)])
def test_sigmoid_tails(dev, lo, hi):
    x = np.linspace(lo, hi, 4096, dtype=np.float32).reshape(1, 4, 32, 32)
    node = helper.make_node("Sigmoid", ["x"], ["y"])
    why = agree_or_refuse(dev, node, {"x": x}, opset=17, tol=1e-6)
    assert why is None, why


@pytest.mark.parametrize("lo,hi", [(-12, -2), (-2, 2), (2, 12)])
def test_tanh_is_onnxruntimes_bit_for_bit(dev, lo, hi):
    """Tanh computes MLAS's approximation, as onnxruntime's CPU does: an ulp of difference
    turns into whole steps where a DynamicQuantizeLinear follows (tashkeel's attention).
    4099 values: the CPU kernel's eight-lane blocks and its scalar tail."""
    x = np.linspace(lo, hi, 4099, dtype=np.float32).reshape(1, 4099)
    run_case(dev, [helper.make_node("Tanh", ["x"], ["y"])], {"x": x}, exact=True)


def test_every_combination_is_named():
    """The parametrisation covers the whole Resize attribute grid (a guard on edits)."""
    grid = list(itertools.product(MODES, CTMS, list(SCALES) + list(SIZES)))
    assert len(grid) == 6 * 7 * 6
