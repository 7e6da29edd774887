"""Spec §1 on real third-party files: an independent re-derivation of vertices, edges and
upward ranks straight from the protobuf (networkx), compared with ``hetlab.graph.load``."""

from __future__ import annotations

import networkx as nx
import onnx
import pytest

from tests.thirdparty.conftest import MODELS, corpus_params, graph_of, model_path


def reference_dag(path: str) -> nx.DiGraph:
    g = onnx.load(path, load_external_data=False).graph
    names = [n.name for n in g.node]
    dag = nx.DiGraph()
    producer = {}
    for i, n in enumerate(g.node):
        if n.op_type == "Constant":
            continue
        vid = n.name if n.name and names.count(n.name) == 1 else f"{n.op_type}_{i}"
        reads = {t for t in n.input if t}  # "" is an optional input left out, no tensor

        def walk(sub: onnx.GraphProto, reads: set[str] = reads) -> None:
            for m in sub.node:
                reads.update(t for t in m.input if t)
                for a in m.attribute:
                    for s in [a.g] if a.type == a.GRAPH else list(a.graphs):
                        walk(s)

        for a in n.attribute:
            for s in [a.g] if a.type == a.GRAPH else list(a.graphs):
                walk(s)
        dag.add_node(vid, reads=reads)
        for o in n.output:
            if o:  # "" is an optional output not asked for
                producer[o] = vid
    for v, d in list(dag.nodes(data=True)):
        for t in d["reads"]:
            if t in producer and producer[t] != v:
                dag.add_edge(producer[t], v)
    return dag


@pytest.mark.parametrize("fold", [True, False], ids=["folded", "as-given"])
@pytest.mark.parametrize("name", corpus_params())
def test_vertices_edges_levels_match_spec(name, fold):
    """Spec §1 holds on the file that runs: the model as given, or folded (whose nodes carry
    the ids of the model as given as their names)."""
    path = model_path(name)
    g = graph_of(MODELS[name], fold)
    assert (g.model_path != path) == g.fold["folded"]
    ref = reference_dag(g.model_path)
    assert [n.id for n in g.nodes] == list(ref.nodes)
    assert {(e.src, e.dst) for e in g.edges} == set(ref.edges)
    up = {}
    for v in nx.topological_sort(ref):
        up[v] = 1 + max((up[u] for u in ref.predecessors(v)), default=0)
    assert {n.id: n.level for n in g.nodes} == up
    empty = {t for t, v in g.tensors.items() if v.shape is not None and 0 in v.shape}
    assert all(e.bytes > 0 or set(e.tensors) <= empty for e in g.edges), (
        "every edge has a real byte size (0 only for empty tensors)"
    )
    assert all(g.tensors[t].shape is not None for n in g.nodes for t in n.outputs if t)


def test_control_flow_edges_in_silero():
    g = graph_of(MODELS["silero_vad"])
    ifs = [n for n in g.nodes if n.op_type == "If"]
    assert ifs and all(n.outer_inputs for n in ifs), "the If body reads outer tensors"


@pytest.mark.parametrize("name", corpus_params())
def test_folded_vertices_stand_for_every_original_one(name):
    """Every vertex of the model as given is in the origin of exactly one folded vertex (or
    dropped: nothing reads what it computed); a vertex that stayed stands for itself."""
    g = graph_of(MODELS[name])
    before = list(reference_dag(model_path(name)).nodes)
    assert g.fold["nodes_before"] == len(before)
    credited = [v for n in g.nodes for v in n.origin] + g.fold.get("dropped", [])
    assert sorted(credited) == sorted(before)
    assert all(n.id in n.origin for n in g.nodes if n.id in set(before))
