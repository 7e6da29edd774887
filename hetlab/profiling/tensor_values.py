"""Real input values for isolated units: one recorded onnxruntime run of the whole model.

An op run in isolation needs inputs that are valid for it: a Reshape's shape, a Gather's
indices, a Slice's bounds. So the model runs once on the CPU (seeded random model inputs,
except those the user gave)
with every needed intermediate tensor as an extra output (``onnx_io.extract`` of the whole
graph). Integer and boolean tensors are always recorded; float tensors while they fit in
``budget_bytes`` (seeded random data of the right shape otherwise, which costs the same).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from hetlab.graph.inputs import fit_given, random_arrays, random_inputs
from hetlab.graph.ir import OpGraph
from hetlab.graph.ort_session import reference_session

DEFAULT_BUDGET = int(os.environ.get("HETLAB_PROFILE_VALUES_MB", "1024")) * 2**20


class Values:
    """Lazily computed arrays for the tensors named in ``needed`` (and the model inputs)."""

    def __init__(
        self,
        graph: OpGraph,
        needed: Iterable[str],
        seed: int = 0,
        budget_bytes: int = DEFAULT_BUDGET,
        given: dict[str, Any] | None = None,
    ) -> None:
        self.graph = graph
        # model inputs the user gave (``--input sr=16000``): data-dependent models need them
        self.given = fit_given(graph, {k: v for k, v in (given or {}).items() if k in graph.inputs})
        self.needed = [t for t in dict.fromkeys(needed) if t and t not in graph.consts]
        self.seed = seed
        self.budget = budget_bytes
        self._arrays: dict[str, np.ndarray] | None = None
        self.note = ""

    def get(self, names: Iterable[str]) -> dict[str, np.ndarray]:
        if self._arrays is None:
            self._arrays = self._record()
        names = list(names)
        missing = [
            self.graph.tensors[t]
            for t in names
            if t not in self._arrays and t in self.graph.tensors
        ]
        extra = random_arrays(missing, seed=self.seed + 1) if missing else {}
        return {
            t: self._arrays[t] if t in self._arrays else extra[t]
            for t in names
            if t in self._arrays or t in extra
        }

    def _record(self) -> dict[str, np.ndarray]:
        g = self.graph
        feeds = {**random_inputs(g, seed=self.seed), **self.given}
        inter = [t for t in self.needed if t not in feeds and t in g.tensors]
        want, used = [], 0
        for t in sorted(
            inter, key=lambda t: (g.tensors[t].dtype.startswith("float"), g.tensors[t].nbytes)
        ):
            ten = g.tensors[t]
            if not ten.dtype.startswith("float") or used + ten.nbytes <= self.budget:
                want.append(t)
                used += ten.nbytes if ten.dtype.startswith("float") else 0
        if not want or not g.model_path:
            self.note = "model inputs only" if not want else "random (no model file)"
            return dict(feeds)
        try:
            from hetlab.graph.onnx_io import extract

            produced = {t for n in g.nodes for t in n.outputs if t}
            want = [t for t in want if t in produced]
            model = extract(g, [n.id for n in g.nodes], want)
            sess = reference_session(model)
            ins = {i.name for i in sess.get_inputs()}
            outs = sess.run(want, {k: v for k, v in feeds.items() if k in ins})
        except Exception as e:  # noqa: BLE001 - fall back to random data of the right shapes
            self.note = f"random (reference run failed: {str(e).splitlines()[0][:120] if str(e) else type(e).__name__})"
            return dict(feeds)
        self.note = f"recorded {len(want)} of {len(inter)} tensors from one onnxruntime run"
        return {**feeds, **{t: np.asarray(v) for t, v in zip(want, outs, strict=False)}}
