"""One-off export of the hetlab model zoo to ``hetlab/graph/models/<name>.onnx`` (not run by tests).

Run with a Python that has torch, torchvision, timm and onnx (kept out of hetlab's own
dependencies), from the repository root::

    /work/torchenv/bin/python data/export_zoo.py            # every model
    /work/torchenv/bin/python data/export_zoo.py lstm resnet50

Every model is exported at batch 1 with static shapes, opset 17, in eval mode, with random
weights (no downloads), through the legacy TorchScript exporter with constant folding. Big
float initializers are then stripped (``hetlab.graph.zoo_weights.strip_weights``); ``hetlab.zoo``
synthesizes them again from a seed when a model is used. ``lstm`` is built directly with
``onnx.helper`` and needs no torch.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

import onnx
from onnx import TensorProto, helper, numpy_helper

from hetlab.graph.zoo_weights import strip_weights

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "hetlab" / "graph" / "models"
OPSET = 17
LSTM_STEPS, LSTM_HIDDEN, LSTM_INPUT = 10, 1024, 1024


def build_lstm(steps: int = LSTM_STEPS, hidden: int = LSTM_HIDDEN, inp: int = LSTM_INPUT):
    """HOPE's LSTM (1 layer, ``hidden`` units, ``steps`` time steps, batch 1) unrolled into
    per-gate operators: per step and gate g in (i, f, g, o), ``MatMul(x_t, W_g)`` and
    ``MatMul(h_{t-1}, R_g)`` -> Add -> Add(b_g) -> Sigmoid/Tanh, then ``c_t = f*c + i*g`` and
    ``h_t = o*tanh(c_t)``; the four gates are parallel branches. Input ``x`` is
    ``[steps, 1, inp]``; outputs ``h`` (last step, ``[1, hidden]``) and ``y`` (all steps,
    ``[steps, hidden]``). Weights are shared by the steps; h_0 = c_0 = 0."""
    import numpy as np

    init_hint = f"init=uniform:{1.0 / hidden**0.5!r}"
    inits, nodes = [], []

    def weight(name: str, shape: list[int], hint: str) -> str:
        t = numpy_helper.from_array(np.zeros(shape, np.float32), name)
        t.doc_string = hint
        inits.append(t)
        return name

    inits.append(numpy_helper.from_array(np.zeros([1], np.int64), "axes0"))
    inits.append(numpy_helper.from_array(np.ones([steps], np.int64), "split_steps"))
    h = weight("h0", [1, hidden], "init=normal:0")
    c = weight("c0", [1, hidden], "init=normal:0")
    gates = {"i": "Sigmoid", "f": "Sigmoid", "g": "Tanh", "o": "Sigmoid"}
    w = {g: weight(f"W_{g}", [inp, hidden], init_hint) for g in gates}
    r = {g: weight(f"R_{g}", [hidden, hidden], init_hint) for g in gates}
    b = {g: weight(f"b_{g}", [1, hidden], init_hint) for g in gates}

    xs = [f"x_{t}_3d" for t in range(steps)]
    nodes.append(helper.make_node("Split", ["x", "split_steps"], xs, name="split_x", axis=0))
    hs = []
    for t in range(steps):
        s = f"s{t}"
        x_t = f"x_{t}"
        nodes.append(helper.make_node("Squeeze", [xs[t], "axes0"], [x_t], name=f"{s}_squeeze"))
        act = {}
        for g, op in gates.items():
            p = f"{s}_{g}"
            nodes += [
                helper.make_node("MatMul", [x_t, w[g]], [f"{p}_xw"], name=f"{p}_xW"),
                helper.make_node("MatMul", [h, r[g]], [f"{p}_hr"], name=f"{p}_hR"),
                helper.make_node("Add", [f"{p}_xw", f"{p}_hr"], [f"{p}_sum"], name=f"{p}_add"),
                helper.make_node("Add", [f"{p}_sum", b[g]], [f"{p}_pre"], name=f"{p}_bias"),
                helper.make_node(op, [f"{p}_pre"], [f"{p}_act"], name=f"{p}_{op.lower()}"),
            ]
            act[g] = f"{p}_act"
        h_t = f"h_{t}" if t < steps - 1 else "h"
        nodes += [
            helper.make_node("Mul", [act["f"], c], [f"{s}_fc"], name=f"{s}_f_mul_c"),
            helper.make_node("Mul", [act["i"], act["g"]], [f"{s}_ig"], name=f"{s}_i_mul_g"),
            helper.make_node("Add", [f"{s}_fc", f"{s}_ig"], [f"c_{t}"], name=f"{s}_c"),
            helper.make_node("Tanh", [f"c_{t}"], [f"{s}_tc"], name=f"{s}_tanh_c"),
            helper.make_node("Mul", [act["o"], f"{s}_tc"], [h_t], name=f"{s}_h"),
        ]
        h, c = h_t, f"c_{t}"
        hs.append(h_t)
    nodes.append(helper.make_node("Concat", hs, ["y"], name="concat_h", axis=0))
    graph = helper.make_graph(
        nodes,
        "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, inp])],
        [
            helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, hidden]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, hidden]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)
    model.producer_name = "hetlab/data/export_zoo.py"
    onnx.checker.check_model(model)
    return model


def _torch_export(module, shape: tuple[int, ...]):
    """Export ``module`` (eval mode, batch 1, static shapes) with the legacy exporter,
    BatchNormalization kept unfused."""
    import io

    import torch

    module.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(
            module,
            (torch.randn(*shape),),
            buf,
            input_names=["input"],
            output_names=["logits"],
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
            # eval mode, but keep BatchNormalization as its own operator (EVAL would fold it
            # into the Conv before it), as in the papers' models and the ONNX model zoo
            training=torch.onnx.TrainingMode.PRESERVE,
        )
    return onnx.load_from_string(buf.getvalue())


def _static_shape(vi) -> list[int] | None:
    dims = vi.type.tensor_type.shape.dim
    if not vi.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
        return None
    return [d.dim_value for d in dims]


def _eval_node(node, values: dict):
    """Run one node on constant inputs with onnx's reference evaluator."""
    import numpy as np
    from onnx.reference import ReferenceEvaluator

    ins = [i for i in node.input if i]
    g = helper.make_graph(
        [node],
        "fold",
        [],
        [helper.make_tensor_value_info(o, 0, None) for o in node.output if o],
        [numpy_helper.from_array(np.asarray(values[i]), i) for i in ins],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)
    return ReferenceEvaluator(m).run(None, {})


def fold_constants(model):
    """Fold what is static at batch 1: ``Shape`` of a tensor whose shape is known and every
    node whose inputs are all constants (timm's TF-"same" padding arithmetic, ``Identity``
    copies of de-duplicated initializers). Their outputs become initializers, so the
    operator DAG holds only the model's real operators. Repeats until nothing changes."""
    import numpy as np

    while True:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
        g = model.graph
        shapes = {vi.name: _static_shape(vi) for vi in [*g.input, *g.value_info, *g.output]}
        values = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        outputs = {o.name for o in g.output}
        keep, folded = [], 0
        for node in g.node:
            ins = [i for i in node.input if i]
            new = None
            if node.op_type == "Shape" and shapes.get(node.input[0]) is not None:
                a = {x.name: x.i for x in node.attribute}
                new = [np.array(shapes[node.input[0]][a.get("start", 0) : a.get("end")], np.int64)]
            else:
                constant = node.op_type == "Constant" or (ins and all(i in values for i in ins))
                if constant and not any(o in outputs for o in node.output):
                    new = _eval_node(node, values)
            if new is None:
                keep.append(node)
                continue
            folded += 1
            for name, v in zip(node.output, new, strict=False):
                values[name] = np.asarray(v)
                g.initializer.append(numpy_helper.from_array(np.asarray(v), name))
        del g.node[:]
        g.node.extend(keep)
        used = {i for n in g.node for i in n.input} | outputs
        live = [t for t in g.initializer if t.name in used]
        del g.initializer[:]
        g.initializer.extend(live)
        del g.value_info[:]
        if not folded:
            return model


def _torchvision(name: str, **kw):
    import torchvision

    return getattr(torchvision.models, name)(weights=None, **kw)


def _timm(name: str):
    import timm

    return timm.create_model(name, pretrained=False)


def _pnasnet_mobile():
    """PNASNet-5 Mobile (Liu et al. 2018, Table 5; the TF-slim ``mobile_imagenet_config``:
    9 cells, 2 of them reductions, F = 54 filters, stem multiplier 1, 1080 features at
    224x224; the second stem cell has 28 filters where TF-slim has 27). timm only ships
    PNASNet-5 Large, so this reuses timm's ``CellStem0`` and ``Cell`` modules with the
    mobile widths (``PNASNet5Large`` hard-codes its widths), wired as its forward pass."""
    from functools import partial

    import torch
    from timm.layers import ConvNormAct, create_classifier
    from timm.models.pnasnet import Cell, CellStem0

    f = 54  # num_conv_filters; cells output 5 * filters, filters doubling at reductions
    stem = 32  # 32 * stem_multiplier(1.0)
    # stem cells at filter scaling 1/4 and 1/2: int(13.5) = 13 as in TF-slim, and 27 rounded
    # up to 28, since timm's FactorizedReduction makes 2 * (width // 2) channels
    s0, s1 = f // 4, 28

    class PNASNet5Mobile(torch.nn.Module):
        def __init__(self, num_classes: int = 1000) -> None:
            super().__init__()
            self.conv_0 = ConvNormAct(
                3,
                stem,
                kernel_size=3,
                stride=2,
                padding=0,
                norm_layer=partial(torch.nn.BatchNorm2d, eps=0.001, momentum=0.1),
                apply_act=False,
            )
            self.cell_stem_0 = CellStem0(
                in_chs_left=stem, out_chs_left=s0, in_chs_right=stem, out_chs_right=s0
            )
            self.cell_stem_1 = Cell(
                in_chs_left=stem,
                out_chs_left=s1,
                in_chs_right=5 * s0,
                out_chs_right=s1,
                match_prev_layer_dims=True,
                is_reduction=True,
            )
            cells, left, right = [], 5 * s0, 5 * s1
            for i in range(9):
                red = i in (3, 6)
                width = f * (1 if i < 3 else 2 if i < 6 else 4)
                cells.append(
                    Cell(
                        in_chs_left=left,
                        out_chs_left=width,
                        in_chs_right=right,
                        out_chs_right=width,
                        is_reduction=red,
                        match_prev_layer_dims=(i in (0, 4, 7)),
                    )
                )
                left, right = right, 5 * width
            self.cells = torch.nn.ModuleList(cells)
            self.act = torch.nn.ReLU()
            self.global_pool, self.last_linear = create_classifier(right, num_classes, "avg")

        def forward(self, x):
            x_conv_0 = self.conv_0(x)
            prev = self.cell_stem_0(x_conv_0)
            cur = self.cell_stem_1(x_conv_0, prev)
            for cell in self.cells:
                prev, cur = cur, cell(prev, cur)
            return self.last_linear(self.global_pool(self.act(cur)))

    return PNASNet5Mobile()


# name -> (builder, input shape, source, description)
MODELS: dict[str, tuple[Callable, tuple[int, ...], str, str]] = {
    "squeezenet": (
        lambda: _torchvision("squeezenet1_0"),
        (1, 3, 224, 224),
        "torchvision squeezenet1_0",
        "SqueezeNet 1.0 (Iandola et al. 2016)",
    ),
    "googlenet": (
        lambda: _torchvision("googlenet", aux_logits=False, init_weights=False),
        (1, 3, 224, 224),
        "torchvision googlenet (aux_logits=False)",
        "GoogLeNet / Inception v1 (Szegedy et al. 2015)",
    ),
    "inception_v3": (
        lambda: _torchvision("inception_v3", aux_logits=False, init_weights=False),
        (1, 3, 299, 299),
        "torchvision inception_v3 (aux_logits=False)",
        "Inception v3 (Szegedy et al. 2016)",
    ),
    "inception_v4": (
        lambda: _timm("inception_v4"),
        (1, 3, 299, 299),
        "timm inception_v4",
        "Inception v4 (Szegedy et al. 2017)",
    ),
    "resnet50": (
        lambda: _torchvision("resnet50"),
        (1, 3, 224, 224),
        "torchvision resnet50",
        "ResNet-50 (He et al. 2016)",
    ),
    "nasnet_large": (
        lambda: _timm("nasnetalarge"),
        (1, 3, 331, 331),
        "timm nasnetalarge",
        "NASNet-A Large (Zoph et al. 2018)",
    ),
    "pnasnet_large": (
        lambda: _timm("pnasnet5large"),
        (1, 3, 331, 331),
        "timm pnasnet5large",
        "PNASNet-5 Large (Liu et al. 2018)",
    ),
    "pnasnet_mobile": (
        _pnasnet_mobile,
        (1, 3, 224, 224),
        (
            "timm pnasnet Cell/CellStem0 with PNASNet-5 Mobile widths "
            "(9 cells, F=54, stem 32; built in data/export_zoo.py)"
        ),
        "PNASNet-5 Mobile (Liu et al. 2018)",
    ),
    "lstm": (
        build_lstm,
        (LSTM_STEPS, 1, LSTM_INPUT),
        "onnx.helper in data/export_zoo.py",
        (
            "HOPE's LSTM: 1 layer, 1024 hidden units, 10 time steps, input size 1024, "
            "batch 1, unrolled into per-gate MatMul/Add/Sigmoid/Tanh/Mul operators"
        ),
    ),
}


def vertices(model) -> int:
    """Main-graph nodes that are vertices of the operator DAG (spec §1: not ``Constant``)."""
    return sum(1 for n in model.graph.node if n.op_type != "Constant")


def _shapes(model) -> dict[str, list[int]]:
    init = {t.name for t in model.graph.initializer}
    return {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input
        if i.name not in init
    }


def export(name: str) -> dict:
    """Build, strip and save one model; returns its index.json entry."""
    builder, shape, source, description = MODELS[name]
    model = builder() if name == "lstm" else fold_constants(_torch_export(builder(), shape))
    model.producer_name = model.producer_name or "hetlab/data/export_zoo.py"
    onnx.checker.check_model(model)
    n = vertices(model)
    if name == "nasnet_large" and n < 1000:
        raise SystemExit(f"nasnet_large has {n} vertices, HOPE needs >= 1000")
    data = strip_weights(model).SerializeToString()
    (ZOO / f"{name}.onnx").write_bytes(data)
    return {
        "file": f"{name}.onnx",
        "inputs": _shapes(model),
        "vertices": n,
        "source": source,
        "description": description,
        "sha256": hashlib.sha256(data).hexdigest(),
        "opset": OPSET,
    }


def main(argv: list[str]) -> None:
    names = argv or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise SystemExit(f"unknown zoo names {unknown}; choose from {list(MODELS)}")
    ZOO.mkdir(parents=True, exist_ok=True)
    index_path = ZOO / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {}
    for name in names:
        index[name] = export(name)
        print(
            f"{name}: {index[name]['vertices']} vertices, "
            f"{(ZOO / index[name]['file']).stat().st_size / 1e3:.0f} kB",
            flush=True,
        )
    ordered = {n: index[n] for n in MODELS if n in index}
    index_path.write_text(json.dumps(ordered, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
