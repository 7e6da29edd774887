"""The operator DAG of a model (spec §1): plain data that can ``lint()`` itself.

Sizes are in bytes, ``flops`` counts floating-point operations (a multiply-add is 2).
Nothing here imports onnx; ``hetlab.graph.onnx_io`` builds an ``OpGraph`` from a file.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from hetlab.errors import HetlabError
from hetlab.graph.levels import hope_levels

DTYPE_BYTES = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "float64": 8,
    "int64": 8,
    "int32": 4,
    "int16": 2,
    "int8": 1,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "bool": 1,
    "string": 8,
    "complex64": 8,
    "complex128": 16,
}


@dataclass
class Tensor:
    """A value of the model: ``shape`` is a tuple of ints once fixed, ``dtype`` a numpy name;
    ``dynamic``: the shape is that of one recorded run, and other input values may change it
    (``graph/dynamic.py``)."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str = "float32"
    dynamic: bool = False

    @property
    def nbytes(self) -> int:
        if self.shape is None:
            return 0
        n = 1
        for d in self.shape:
            n *= int(d)
        return n * DTYPE_BYTES.get(self.dtype, 4)


@dataclass
class Node:
    """One vertex: an ONNX node of the main graph (``Constant`` nodes are folded away).

    ``inputs``/``outputs`` are tensor names ('' for an omitted optional input);
    ``outer_inputs`` are outer-graph tensors read by control-flow bodies; ``attrs`` holds
    plain Python values (numpy arrays for tensor attributes; subgraph bodies are not kept);
    ``origin`` are the ids of the vertices of the model before folding that this one stands
    for (itself, and what folding replaced by constants it reads; empty: itself only);
    ``level`` is HOPE's level (eq. 8, the key ``uprank`` of the graph's JSON).
    """

    id: str
    op_type: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    domain: str = ""
    index: int = 0
    outer_inputs: list[str] = field(default_factory=list)
    level: int = 1
    flops: int = 0
    out_bytes: int = 0
    origin: list[str] = field(default_factory=list)


@dataclass
class Edge:
    """``src -> dst``: the tensors of ``src`` that ``dst`` reads, and their total bytes."""

    src: str
    dst: str
    bytes: int
    tensors: list[str]


@dataclass
class OpGraph:
    """A model as an operator DAG. ``tensors`` has the fixed shape of every value;
    ``consts`` names initializers (and folded Constant outputs); ``inputs``/``outputs``
    are the model's graph inputs and outputs; ``model_path`` is the ONNX file on disk that
    runs, ``source_path`` the one given before folding (``fold``: ``enabled``, ``folded``,
    ``nodes_before``, and where folded ``folder`` and ``dropped``, the vertices nothing
    reads any more)."""

    name: str
    nodes: list[Node]
    edges: list[Edge]
    tensors: dict[str, Tensor] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    consts: set[str] = field(default_factory=set)
    model_path: str | None = None
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    source_path: str | None = None
    fold: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index: dict[str, int] = {n.id: i for i, n in enumerate(self.nodes)}

    # --- lookup -------------------------------------------------------------------
    def node(self, node_id: str) -> Node:
        try:
            return self.nodes[self._index[node_id]]
        except KeyError:
            raise HetlabError(f"unknown node id {node_id!r} in model {self.name!r}") from None

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._index

    def __len__(self) -> int:
        return len(self.nodes)

    def preds(self, node_id: str) -> list[str]:
        return self._adj()[0].get(node_id, [])

    def succs(self, node_id: str) -> list[str]:
        return self._adj()[1].get(node_id, [])

    def _adj(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        cache = getattr(self, "_adj_cache", None)
        if cache is None or cache[0] != len(self.edges):
            p: dict[str, list[str]] = defaultdict(list)
            s: dict[str, list[str]] = defaultdict(list)
            for e in self.edges:
                p[e.dst].append(e.src)
                s[e.src].append(e.dst)
            cache = (len(self.edges), (dict(p), dict(s)))
            self._adj_cache = cache
        return cache[1]

    def data_dependent(self, node: Node) -> list[str]:
        """The tensors ``node`` reads or writes whose shapes are data-dependent."""
        names = [*node.inputs, *node.outer_inputs, *node.outputs]
        return [t for t in dict.fromkeys(names) if t in self.tensors and self.tensors[t].dynamic]

    def producer(self) -> dict[str, str]:
        """Tensor name -> id of the node that writes it."""
        return {t: n.id for n in self.nodes for t in n.outputs if t}

    # --- structure ------------------------------------------------------------------
    def topo_order(self) -> list[str]:
        """Node ids in a topological order (Kahn, stable in model order); raises on a cycle.
        Kept per node and edge count, as ``_adj`` is: a profile builds one unit per node,
        and each unit asks for the order."""
        key = (len(self.nodes), len(self.edges))
        cache = getattr(self, "_topo_cache", None)
        if cache is None or cache[0] != key:
            cache = (key, self._kahn())
            self._topo_cache = cache
        return list(cache[1])

    def _kahn(self) -> list[str]:
        indeg = {n.id: 0 for n in self.nodes}
        for e in self.edges:
            indeg[e.dst] += 1
        ready = [n.id for n in self.nodes if indeg[n.id] == 0]
        out: list[str] = []
        i = 0
        while i < len(ready):
            v = ready[i]
            i += 1
            out.append(v)
            for w in self.succs(v):
                indeg[w] -= 1
                if indeg[w] == 0:
                    ready.append(w)
        if len(out) != len(self.nodes):
            stuck = sorted(v for v, d in indeg.items() if d > 0)[:5]
            raise HetlabError(f"graph {self.name!r} has a cycle through {', '.join(stuck)}")
        return out

    def compute_levels(self) -> None:
        """Each node's ``level``: HOPE's eq. 8 (``graph/levels.py``)."""
        for v, lv in hope_levels(self.topo_order(), self.preds).items():
            self.node(v).level = lv

    def levels(self) -> dict[int, list[str]]:
        """Node ids grouped by level."""
        out: dict[int, list[str]] = defaultdict(list)
        for n in self.nodes:
            out[n.level].append(n.id)
        return dict(sorted(out.items()))

    def lint(self) -> None:
        """Check ids are unique, every edge joins known nodes once per ordered pair, there
        are no self-loops and no cycle. Raises ``HetlabError`` naming the first fault."""
        if len(self._index) != len(self.nodes):
            dup = [k for k, c in Counter(n.id for n in self.nodes).items() if c > 1]
            raise HetlabError(f"duplicate node ids: {', '.join(dup[:5])}")
        seen: set[tuple[str, str]] = set()
        for e in self.edges:
            for end in (e.src, e.dst):
                if end not in self._index:
                    raise HetlabError(f"dangling edge {e.src} -> {e.dst}: no node {end!r}")
            if e.src == e.dst:
                raise HetlabError(f"self-loop on node {e.src!r}")
            if (e.src, e.dst) in seen:
                raise HetlabError(f"duplicate edge {e.src} -> {e.dst}")
            if e.bytes < 0:
                raise HetlabError(f"edge {e.src} -> {e.dst} has negative bytes")
            seen.add((e.src, e.dst))
        self.topo_order()

    # --- summaries and JSON ------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        lv = self.levels()
        widest = max(lv.items(), key=lambda kv: len(kv[1])) if lv else (0, [])
        return {
            "model": self.name,
            "vertices": len(self.nodes),
            "edges": len(self.edges),
            "depth": max(lv, default=0),
            "widest_level": {"uprank": widest[0], "width": len(widest[1])},
            "ops": dict(Counter(n.op_type for n in self.nodes).most_common()),
            "flops": sum(n.flops for n in self.nodes),
            "inputs": {k: list(v) for k, v in self.input_shapes.items()},
            "fold": self.fold_summary(),
        }

    def fold_summary(self) -> dict[str, Any]:
        """``enabled``, ``folded`` and ``vertices_before`` (the vertices before folding)."""
        f = self.fold
        return {
            "enabled": bool(f.get("enabled")),
            "folded": bool(f.get("folded")),
            "vertices_before": int(f.get("nodes_before", len(self.nodes))),
            **({"note": f["note"]} if f.get("note") else {}),
        }

    def to_json(self) -> dict[str, Any]:
        """The document of ``hetlab graph --json`` (spec §1), with extra keys for shapes."""
        return {
            "model": self.name,
            "model_path": self.model_path,
            "source_path": self.source_path or self.model_path,
            "fold": dict(self.fold),
            "inputs": {k: list(v) for k, v in self.input_shapes.items()},
            "nodes": [
                {
                    "id": n.id,
                    "op_type": n.op_type,
                    "uprank": n.level,  # the spec's key for the level
                    "flops": n.flops,
                    "out_bytes": n.out_bytes,
                    "inputs": n.inputs,
                    "outputs": n.outputs,
                    "shapes": [_shape(self.tensors.get(t)) for t in n.outputs],
                    **_dynamic(self.tensors, n.outputs),
                    "origin": n.origin or [n.id],
                }
                for n in self.nodes
            ],
            "edges": [
                {"src": e.src, "dst": e.dst, "bytes": e.bytes, "tensors": e.tensors}
                for e in self.edges
            ],
        }


def _dynamic(tensors: dict[str, Tensor], outputs: list[str]) -> dict[str, list[bool]]:
    """``{"dynamic": [...]}`` beside ``shapes`` where an output's shape is data-dependent."""
    flags = [bool(t in tensors and tensors[t].dynamic) for t in outputs]
    return {"dynamic": flags} if any(flags) else {}


def _shape(t: Tensor | None) -> list[int] | None:
    return None if t is None or t.shape is None else list(t.shape)
