"""A model that needs a shape it was not given: one line naming the input, its declared
dimensions and an example ``--shape`` that fixes them all."""

from __future__ import annotations

import pytest

from hetlab.errors import HetlabError
from hetlab.graph.shapes import parse_shape_args, resolve_input_shapes


@pytest.mark.parametrize(
    ("decl", "example"),
    [
        (["batch", 3, "h", "w"], "1x3x640x640"),
        (["N", "M1", "M2", 3], "1x640x640x3"),
        (["batch", "seq"], "1x128"),
        ([None, 4, None], "1x4x128"),
    ],
)
def test_the_error_shows_a_shape_that_resolves_the_input(decl, example):
    with pytest.raises(HetlabError) as e:
        resolve_input_shapes({"images": decl})
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("input 'images' has symbolic dims [")
    assert msg.endswith(f"e.g. --shape images={example}")
    for d in decl:
        assert (repr(d) if isinstance(d, str) else str(d or "'?'")) in msg
    fixed = resolve_input_shapes({"images": decl}, parse_shape_args([f"images={example}"]))
    assert "x".join(map(str, fixed["images"])) == example


def test_the_example_reuses_a_size_another_input_fixed():
    with pytest.raises(HetlabError, match=r"--shape mask=2x128$"):
        resolve_input_shapes({"ids": ["b", "seq"], "mask": ["b", "len"]}, {"ids": (2, 77)})
