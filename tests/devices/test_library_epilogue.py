"""Which epilogues go into the library GEMM's own call (``ops/library_epilogue.py``): a
ReLU, and a bias as the plane it adds to each output; everything else stays a launch of
its own. The fused call itself runs on CUDA (``test_tensor_cores.py`` with
``HETLAB_TEST_CUDA=1``)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hetlab.devices.kernels.ops.library_epilogue import FMAX, in_call, no_activation

NONE = (1.0, -FMAX, FMAX)
RELU = (0.0, -FMAX, FMAX)


def epilogue(has_bias=0, sm=0, sn=0, alpha=1.0, beta=1.0, act=NONE):
    return [None, sm, sn, alpha, beta, has_bias, *act]


def product(M=3, N=4, bias=None, batches=1, bias_at=0):
    return SimpleNamespace(M=M, N=N, offs=[(0, 0, 0, bias_at)] * batches, bias_host=bias)


@pytest.mark.parametrize("act", [RELU, (1.0, 0.0, FMAX)])
def test_relu_and_clip_at_zero_are_a_relu(act):
    assert in_call(product(), epilogue(act=act), None) == (True, None)


def test_nothing_to_apply_is_not_a_fused_call():
    assert in_call(product(), epilogue(), None) is None
    assert no_activation(NONE) and not no_activation(RELU)


@pytest.mark.parametrize(
    "why",
    [
        {"act": (0.01, -FMAX, FMAX)},  # LeakyRelu
        {"act": (1.0, 0.0, 6.0)},  # Clip at 6
        {"alpha": 2.0},
    ],
)
def test_what_the_library_cannot_apply_stays_a_launch(why):
    assert in_call(product(bias=np.ones(3)), epilogue(has_bias=1, sm=1, **why), None) is None


def test_a_residual_several_batches_or_an_unknown_bias_stay_a_launch():
    e = epilogue(has_bias=1, sm=1, act=RELU)
    assert in_call(product(bias=np.ones(3)), e, ("R", 0)) is None
    assert in_call(product(bias=np.ones(3), batches=2), e, None) is None
    assert in_call(product(bias=None), e, None) is None


def test_the_plane_is_the_bias_broadcast_by_its_strides_and_scaled_by_beta():
    bias = np.arange(10, dtype=np.float32)
    relu, plane = in_call(product(bias=bias, bias_at=2), epilogue(1, 1, 0, beta=0.5), None)
    assert not relu
    np.testing.assert_array_equal(plane, 0.5 * np.repeat(bias[2:5, None], 4, axis=1))
    relu, plane = in_call(product(bias=bias), epilogue(1, 0, 1, act=RELU), None)
    assert relu and plane.shape == (3, 4) and plane.dtype == np.float32
    np.testing.assert_array_equal(plane, np.tile(bias[:4], (3, 1)))
