"""HOPE's level (eq. 8), counted in one place for the graph, the partition and the figures."""

from __future__ import annotations

import pytest

from hetlab.errors import HetlabError
from hetlab.graph.levels import hope_levels, index_levels

#  0 -> 1 -> 3, 0 -> 2 -> 3, 4 alone
EDGES = [(0, 1), (0, 2), (1, 3), (2, 3)]


def test_levels_count_vertices_on_the_longest_path_from_an_input():
    assert index_levels(5, EDGES) == [1, 2, 2, 3, 1]
    assert index_levels(5, list(reversed(EDGES))) == [1, 2, 2, 3, 1]


def test_levels_of_a_subgraph_ignore_predecessors_outside_it():
    preds = {0: [], 1: [0], 2: [0], 3: [1, 2]}
    assert hope_levels([1, 2, 3], preds.__getitem__) == {1: 1, 2: 1, 3: 2}


def test_a_cycle_has_no_levels():
    with pytest.raises(HetlabError, match="cycle"):
        index_levels(2, [(0, 1), (1, 0)])
