"""A scheduling problem (spec §2): per-device node costs, edges with bytes and comm, links.

Times are in ``units`` (default ms); ``bandwidth`` is in bytes per time unit. ``cost[d]``
of ``None`` means device ``d`` cannot run the node. The ``boundary`` section is the typed
``calibration`` (``cost/calibration.py``), apart from the links; unknown keys are kept in
``extra``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from hetlab.cost.calibration import Calibration, families, latency_matrix, unfold
from hetlab.cost.problem_check import check
from hetlab.cost.problem_parts import Group, Link, PEdge, PNode
from hetlab.cost.shared import KEY as SHARED_KEY
from hetlab.cost.shared import check_sets, occupancy, shared_sets
from hetlab.errors import HetlabError
from hetlab.fileio import atomic_write_json, read_json

INF = math.inf


@dataclass
class Problem:
    name: str
    devices: list[str]
    nodes: list[PNode]
    edges: list[PEdge]
    comm: dict[str, Link] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)
    units: str = "ms"
    extra: dict[str, Any] = field(default_factory=dict)
    calibration: Calibration = field(default_factory=Calibration)

    def __post_init__(self) -> None:
        if "boundary" in self.extra:  # the section given in ``extra``: it is the calibration
            self.calibration = Calibration.of(self.extra.pop("boundary"))

    # --- construction -------------------------------------------------------------
    @classmethod
    def from_json(cls, doc: Any, source: str = "problem") -> Problem:
        """Build and validate a problem from its JSON document."""
        if not isinstance(doc, dict):
            raise HetlabError(f"{source}: a problem must be a JSON object")
        if isinstance(doc.get("boundary"), dict) and doc["boundary"].get("links") != "apart":
            doc = copy.deepcopy(doc)
            unfold(doc)  # written before the section was kept apart from the links
        try:
            nodes = [
                PNode(
                    id=str(n["id"]),
                    cost=dict(n["cost"]),
                    op_type=str(n.get("op_type", "")),
                    extra={k: v for k, v in n.items() if k not in ("id", "cost", "op_type")},
                )
                for n in doc["nodes"]
            ]
            edges = [
                PEdge(
                    src=str(e["src"]),
                    dst=str(e["dst"]),
                    bytes=float(e.get("bytes", 0) or 0),
                    comm=dict(e.get("comm") or {}),
                    extra={k: v for k, v in e.items() if k not in ("src", "dst", "bytes", "comm")},
                )
                for e in doc.get("edges", [])
            ]
            comm = {
                k: Link(float(v.get("latency", 0) or 0), _opt_float(v.get("bandwidth")))
                for k, v in (doc.get("comm") or {}).items()
                if isinstance(v, dict)
            }
            groups = [
                Group([str(x) for x in g["nodes"]], dict(g["cost"])) for g in doc.get("groups", [])
            ]
            devices = [str(d) for d in doc["devices"]]
        except HetlabError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise HetlabError(f"{source}: malformed problem ({type(e).__name__}: {e})") from None
        known = {"name", "units", "devices", "nodes", "edges", "comm", "groups", "boundary"}
        p = cls(
            name=str(doc.get("name", source)),
            devices=devices,
            nodes=nodes,
            edges=edges,
            comm=comm,
            groups=groups,
            units=str(doc.get("units", "ms")),
            extra={k: v for k, v in doc.items() if k not in known},
            calibration=Calibration.of(doc.get("boundary")),
        )
        if SHARED_KEY in p.extra:
            check_sets(p.extra[SHARED_KEY], source)
        p.validate(source)
        return p

    @classmethod
    def load(cls, path: str | Path) -> Problem:
        return cls.from_json(read_json(path, "problem file"), source=str(path))

    def copy(self) -> Problem:
        """An independent copy (through its JSON document), with no views computed yet:
        changing the copy's devices or costs never meets a view of the original's."""
        return Problem.from_json(copy.deepcopy(self.to_json()), source=self.name)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "units": self.units, "devices": self.devices}
        doc["nodes"] = [
            {"id": n.id, **({"op_type": n.op_type} if n.op_type else {}), "cost": n.cost, **n.extra}
            for n in self.nodes
        ]
        doc["edges"] = [
            {
                "src": e.src,
                "dst": e.dst,
                "bytes": e.bytes,
                **({"comm": e.comm} if e.comm else {}),
                **e.extra,
            }
            for e in self.edges
        ]
        doc["comm"] = {
            k: {"latency": v.latency, "bandwidth": v.bandwidth} for k, v in self.comm.items()
        }
        if self.groups:
            doc["groups"] = [{"nodes": g.nodes, "cost": g.cost} for g in self.groups]
        doc.update(self.extra)
        if self.calibration:
            doc["boundary"] = self.calibration.to_doc()
        return doc

    def save(self, path: str | Path) -> Path:
        return atomic_write_json(path, self.to_json())

    def validate(self, source: str = "problem") -> None:
        """Raise ``HetlabError`` for anything spec §6 calls a bad problem (``problem_check``)."""
        check(self, source)

    # --- fast views used by the simulator and schedulers -------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        return {n.id: i for i, n in enumerate(self.nodes)}

    @cached_property
    def dev_index(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.devices)}

    @cached_property
    def cost_matrix(self) -> np.ndarray:
        """``[n_nodes, n_devices]`` compute times, ``inf`` where unsupported."""
        m = np.full((len(self.nodes), len(self.devices)), INF)
        for i, n in enumerate(self.nodes):
            for j, d in enumerate(self.devices):
                c = n.cost.get(d)
                if c is not None:
                    m[i, j] = float(c)
        return m

    @cached_property
    def occupancy(self) -> list[list[int]] | None:
        """Per device index: the devices (itself first) a node computing there keeps from
        computing, by ``shared_cores`` (spec §2, ``cost/shared.py``); None when no two of the
        devices share cores, which leaves §3 as it was."""
        fam = families(self.extra)
        return occupancy(self.devices, shared_sets(self.extra, fam), fam)

    @cached_property
    def preds(self) -> list[list[tuple[int, int]]]:
        """For each node index: ``(pred index, edge index)`` pairs."""
        out: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for k, e in enumerate(self.edges):
            out[self.index[e.dst]].append((self.index[e.src], k))
        return out

    @cached_property
    def succs(self) -> list[list[tuple[int, int]]]:
        out: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for k, e in enumerate(self.edges):
            out[self.index[e.src]].append((self.index[e.dst], k))
        return out

    @property
    def comm_tensor(self) -> np.ndarray:
        """``[n_edges, n_devices, n_devices]`` §3's communication cost of each edge between
        devices: its transfer (``link_tensor``) plus the calibrated boundary latency of the
        device pair (``boundary_matrix``). Recomputed when ``calibration`` is replaced."""
        memo = self.__dict__.get("_comm_memo")
        if memo is None or memo[0] is not self.calibration:
            memo = (self.calibration, self.link_tensor + self.boundary_matrix[None, :, :])
            self.__dict__["_comm_memo"] = memo
        return memo[1]

    @property
    def boundary_matrix(self) -> np.ndarray:
        """``[n_devices, n_devices]`` the calibrated boundary latency from device to device
        (``calibration.latency_matrix``)."""
        return latency_matrix(self.calibration, self.devices, families(self.extra))

    @cached_property
    def link_tensor(self) -> np.ndarray:
        """``[n_edges, n_devices, n_devices]`` transfer time of each edge between devices
        (0 on the diagonal), per spec §2: the edge's own ``comm`` else the link model."""
        nd = len(self.devices)
        out = np.zeros((len(self.edges), nd, nd))
        links = {}
        for a in self.devices:
            for b in self.devices:
                if a != b:
                    links[a, b] = self.comm.get(f"{a}->{b}") or self.comm.get("default") or Link()
        for k, e in enumerate(self.edges):
            for i, a in enumerate(self.devices):
                for j, b in enumerate(self.devices):
                    if i != j:
                        own = e.comm.get(f"{a}->{b}")
                        out[k, i, j] = float(own) if own is not None else links[a, b].time(e.bytes)
        return out

    @cached_property
    def topo_pos(self) -> dict[int, int]:
        """Node index -> its position in ``topo``."""
        return {v: i for i, v in enumerate(self.topo)}

    @cached_property
    def topo(self) -> list[int]:
        """Node indices in topological order (stable); ``ValueError`` on a cycle."""
        indeg = [len(p) for p in self.preds]
        ready = [i for i, d in enumerate(indeg) if d == 0]
        out: list[int] = []
        while ready:
            nxt: list[int] = []
            for v in ready:
                out.append(v)
                for w, _ in self.succs[v]:
                    indeg[w] -= 1
                    if indeg[w] == 0:
                        nxt.append(w)
            ready = nxt
        if len(out) != len(self.nodes):
            raise ValueError("cycle")
        return out

    def comm_cost(self, src: str, dst: str, a: str, b: str) -> float:
        """Transfer time of edge ``src -> dst`` when ``src`` runs on ``a`` and ``dst`` on ``b``."""
        if a == b:
            return 0.0
        k = self.edge_index[(src, dst)]
        return float(self.comm_tensor[k, self.dev_index[a], self.dev_index[b]])

    @cached_property
    def edge_index(self) -> dict[tuple[str, str], int]:
        return {(e.src, e.dst): k for k, e in enumerate(self.edges)}

    def group_cost(self, members: list[str] | tuple[str, ...], device: str) -> float | None:
        """The fused cost of exactly this group on ``device``, or None."""
        g = self.group_index.get(frozenset(members))
        return None if g is None else g.cost.get(device)

    @cached_property
    def group_index(self) -> dict[frozenset[str], Group]:
        """Groups by their member set (the first of equal sets wins)."""
        out: dict[frozenset[str], Group] = {}
        for g in self.groups:
            out.setdefault(frozenset(g.nodes), g)
        return out


def _opt_float(v: Any) -> float | None:
    return None if v is None else float(v)
