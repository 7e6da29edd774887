"""Turn a list of graph nodes into a prebuilt OpenCL launch plan (the unit's handle).

``UnitBuilder`` first plans fusions (``fusion.py``), then lets each op's ``build`` add
launches through the context methods below. Intermediate tensors get one buffer each,
allocated once per unit; kernel arguments are set once here, so a run only rebinds the
buffers of the unit's inputs and enqueues.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hetlab.devices.kernels import precompute
from hetlab.devices.kernels.bounds import Checks
from hetlab.devices.kernels.chains import plan_chains
from hetlab.devices.kernels.device import KernelDevice
from hetlab.devices.kernels.fusion import plan_concat, plan_fusion, plan_prologue
from hetlab.devices.kernels.launches import Launch, LaunchPlan, Ref
from hetlab.devices.kernels.ops import op_for, why_not
from hetlab.devices.kernels.ops.activation import act_params
from hetlab.devices.kernels.ops.common import const_weights
from hetlab.devices.kernels.ops.fused import build_chain
from hetlab.devices.kernels.ops.operand_strides import plan_operand_views
from hetlab.devices.kernels.views import make_view, view_buffer
from hetlab.devices.kernels.widen import (
    apply_widen,
    chain_half,
    convert_in,
    convert_out,
    half_names,
    written,
)
from hetlab.devices.unit import Unit
from hetlab.errors import HetlabError
from hetlab.graph.ir import Node, OpGraph

# tensor dtypes held in buffers of their own type (integer, bool, quantized and float16
# tensors); every other tensor a kernel reads or writes is float32
TYPED = ("uint8", "int8", "int32", "int64", "bool", "float16")

NO_ACT = (
    np.float32(1.0),
    np.float32(-np.finfo(np.float32).max),
    np.float32(np.finfo(np.float32).max),
)


class UnitBuilder:
    """Build context handed to every op's ``build(node, ctx)``."""

    def __init__(self, device: KernelDevice, graph: OpGraph, node_ids: list[str]) -> None:
        self.device, self.graph = device, graph
        order = {v: i for i, v in enumerate(graph.topo_order())}
        self.node_ids = sorted(dict.fromkeys(node_ids), key=lambda v: order[v])
        self.nodes = [graph.node(v) for v in self.node_ids]
        for n in self.nodes:
            reason = why_not(n, graph)
            if reason:
                raise HetlabError(f"{self.device.name} cannot run node {n.id}: {reason}")
        self.weights = const_weights(graph)
        self.precomputed: dict[str, np.ndarray] = {}
        if device.cpu_kernels:  # nodes of constants computed now, as constants of the unit
            precompute.apply(self)
        self.launches: list[Launch] = []
        self.alias: dict[str, str] = {}
        self.views: dict[str, tuple[Any, int]] = {}  # view -> root (or buffer), offset: views.py
        self.fused: dict[str, str] = {}
        self.final: dict[str, str] = {}
        self.act_of: dict[str, Node] = {}
        self.bn_of: dict[str, Node] = {}
        self.bias_of: dict[str, np.ndarray] = {}
        self.resid_of: dict[str, str] = {}
        self.pre_relu: dict[str, str] = {}
        self.keep: list[Any] = []
        self._uploads: dict[tuple, Any] = {}
        self.files: dict[int, str] = {}  # id(kernel) -> its kernel file, for error messages
        self._plan_outputs()
        self._widen()
        plan_fusion(self)
        plan_prologue(self)
        plan_chains(self)
        plan_concat(self)
        plan_operand_views(self)

    # --- planning -------------------------------------------------------------------
    def _plan_outputs(self) -> None:
        inside = set(self.node_ids)
        self.consumers: dict[str, list[str]] = {}
        for n in self.graph.nodes:
            for t in dict.fromkeys(n.inputs + n.outer_inputs):
                if t:
                    self.consumers.setdefault(t, []).append(n.id)
        self.producer = {t: n for n in self.nodes for t in n.outputs if t}
        self.produced = list(self.producer)
        self.position = {v: i for i, v in enumerate(self.node_ids)}
        gout = set(self.graph.outputs)
        self.outputs = [
            t
            for t in self.produced
            if t in gout or any(c not in inside for c in self.consumers.get(t, []))
        ]
        self.outputs += [  # precomputed constants read outside the unit
            t
            for t in self.precomputed
            if t in gout or any(c not in inside for c in self.consumers.get(t, []))
        ]

    def _widen(self) -> None:
        """Rewrite the nodes that compute on float16 tensors (``widen.py``); the unit's
        outputs stay those of the original nodes; the conversions write the input twins
        and the float16 outputs of a rewritten node."""
        outputs = self.outputs
        if not apply_widen(self):
            return
        self._plan_outputs()
        for w in self.widened.values():  # tensors the conversions write
            for t in [twin for _, twin in w.ins] + [o[1] for o in w.outs]:
                self.producer[t] = w.node
        self.produced += written(self)
        self.outputs = outputs

    def dest(self, node: Node) -> tuple[Ref, int]:
        """The buffer and element offset where ``node``'s (final) output is written."""
        name, off = self.out(node), 0
        while name in self.sub:
            name, o = self.sub[name]
            off += o
        return Ref(self.alias.get(name, name)), off

    # --- context for ops ---------------------------------------------------------------
    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(int(d) for d in self.graph.tensors[name].shape)

    def dtype(self, name: str) -> str:
        """The element type of ``name``'s buffer: its own (a constant's, else the graph's)
        for ``TYPED`` tensors, else float32."""
        c = self.const(name)
        t = self.graph.tensors.get(name)
        own = str(c.dtype) if c is not None else t.dtype if t is not None else "float32"
        return own if own in TYPED else "float32"

    def const(self, name: str) -> np.ndarray | None:
        return self.weights.get(name) if name else None

    def out(self, node: Node) -> str:
        """The tensor ``node``'s launch writes (its fused activation's output, if any)."""
        return self.final.get(node.id, node.outputs[0])

    def act(self, node: Node) -> tuple[np.float32, np.float32, np.float32]:
        a = self.act_of.get(node.id)
        return NO_ACT if a is None else act_params(a, self)

    def t(self, name: str) -> Ref:
        return Ref(self.alias.get(name, name))

    def tensor_or_const(self, name: str, dtype: str = "float32") -> Any:
        """An input: its value uploaded as ``dtype`` when constant, else the tensor reference."""
        c = self.const(name)
        if c is None:
            return self.t(name)
        return self.upload(c, key=("const", name, dtype), dtype=dtype)

    def upload(self, array: np.ndarray, key: Any = None, dtype: str = "float32") -> Any:
        if key is not None and key in self._uploads:
            return self._uploads[key]
        b = self.device.copy_in(np.ascontiguousarray(np.asarray(array, dtype=dtype)).reshape(-1))
        self.keep.append(b)
        if key is not None:
            self._uploads[key] = b.buf
        return b.buf

    def ints(self, values: list[int]) -> Any:
        return self.upload(np.asarray(values, dtype=np.int32), dtype="int32")

    def scratch(self, n_floats: int, dtype: str = "float32") -> Any:
        b = self.device.alloc((max(int(n_floats), 1),), dtype)
        self.keep.append(b)
        return b.buf

    def kernel(self, filename: str, name: str, options: str = "") -> Any:
        k = self.device.kernel(filename, name, options)
        self.files[id(k)] = filename
        return k

    def launch(
        self,
        node: Node,
        kernel: Any,
        gsize: tuple[int, ...],
        lsize: tuple[int, ...] | None,
        args: list[Any],
    ) -> None:
        if lsize is not None:
            gsize = tuple(-(-g // l) * l for g, l in zip(gsize, lsize, strict=False))
        if min(gsize) <= 0:
            return
        lsize = None if lsize is None else tuple(lsize)
        self.launches.append(Launch(node.id, kernel, tuple(int(g) for g in gsize), lsize, args))

    def make_alias(self, out: str, src: str) -> None:
        self.alias[out] = self.alias.get(src, src)

    def make_view(self, out: str, src: str, offset: int) -> bool:
        """Whether ``out`` is now ``src``'s elements from ``offset`` on (``views.py``)."""
        return make_view(self, out, src, offset)

    # --- finishing -----------------------------------------------------------------------
    def build(self) -> Unit:
        for n in self.nodes:
            if n.id not in self.fused and n.outputs[0] not in self.operand_views:
                try:
                    members = self.chains[n.id][0] if n.id in self.chains else [n]
                    for m in members:
                        convert_in(self, m)
                    if n.id in self.chains:
                        build_chain(self, *self.chains[n.id], chain_half(self, n))
                    else:
                        op_for(n.op_type, n.domain).build(n, self)
                    convert_out(self, n, chained=n.id in self.chains)
                except (KeyError, IndexError, TypeError, ValueError) as e:
                    why = f"{n.id} ({n.op_type}): {type(e).__name__}: {e}"
                    raise HetlabError(f"{self.device.name} cannot build node {why}") from None
        buffers: dict[str, Any] = {}
        slots: dict[str, list[tuple[Launch, int]]] = {}
        inputs: list[str] = []
        shapes = {t: self.shape(t) for n in self.nodes for t in n.inputs + n.outputs if t}
        shapes.update({t: self.shape(t) for t in half_names(self)})
        shapes.update({t: self.shape(t) for t in self.outputs})
        dtypes = {self.alias.get(t, t): d for t in shapes if (d := self.dtype(t)) != "float32"}
        own = {t for t in self.produced if t not in self.alias}
        self._set_args(own, buffers, slots, inputs)
        for t in self.outputs:  # outputs that are views of unit inputs
            root = self.alias.get(t, t)
            if root in self.weights:  # a view of a constant: the unit holds the constant
                self._const_buffer(root, buffers)
            elif root not in own and root not in inputs:
                inputs.append(root)
            if root in own and root not in buffers:
                buffers[root] = self._alloc(root, buffers)
        plan = LaunchPlan(
            self.device,
            self.launches,
            self.node_ids,
            self.fused,
            self.alias,
            buffers,
            slots,
            shapes,
            keep=self.keep,
            dtypes=dtypes,
        )
        if self.device.bounds_check:
            plan.checks = Checks(self.device, self.launches, self.files, buffers)
        return Unit(
            device=self.device.name,
            nodes=self.node_ids,
            inputs=inputs,
            outputs=list(self.outputs),
            handle=plan,
        )

    def _set_args(
        self,
        own: set[str],
        buffers: dict[str, Any],
        slots: dict[str, list[tuple[Launch, int]]],
        inputs: list[str],
    ) -> None:
        """Set every launch's arguments: the unit's own tensors and constants get buffers
        now; a unit input's argument becomes a slot rebound at each run."""
        for L in self.launches:
            for i, a in enumerate(L.args):
                if not isinstance(a, Ref):
                    L.kernel.set_arg(i, a)
                elif a.name in own:
                    if a.name not in buffers:
                        buffers[a.name] = self._alloc(a.name, buffers)
                    L.kernel.set_arg(i, buffers[a.name].buf)
                elif a.name in self.weights:  # a constant read as a tensor: the unit holds it
                    L.kernel.set_arg(i, self._const_buffer(a.name, buffers).buf)
                else:
                    slots.setdefault(a.name, []).append((L, i))
                    if a.name not in inputs:
                        inputs.append(a.name)

    def _alloc(self, name: str, buffers: dict[str, Any]) -> Any:
        if name in self.views:
            return view_buffer(self, name, buffers)
        return self.device.alloc(self.shape(name), self.dtype(name))

    def _const_buffer(self, name: str, buffers: dict[str, Any]) -> Any:
        """Upload constant ``name`` once, at prepare time, into the unit's own buffers
        (as float32 unless it is an integer or bool tensor a typed kernel reads)."""
        if name not in buffers:
            w = np.asarray(self.weights[name], dtype=self.dtype(name))
            buffers[name] = self.device.alloc(w.shape, str(w.dtype))
            self.device.write(buffers[name], w)
        return buffers[name]
