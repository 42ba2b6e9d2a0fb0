"""Recurrent layers in ONNX: each cell's own form, or the unrolled per-step net.

A recurrent layer is written by the writers its cell registers from its folder
(``designer/cells/<cell>/exports/onnx.py``):

- :data:`FUSED`: layer type -> the writer of the layer as ONNX's own recurrent operators or, for
  a cell ONNX has none for, as ``Scan`` ops whose body is one step (:mod:`onnx_scan`):
  ``writer(b, name, module, x, states, lengths) -> (y, final states)``;
- :data:`NODES`: node type of the unrolled net -> the writer of one node:
  ``writer(layer, node, hint, bottoms) -> tops``, ``layer`` an :class:`UnrolledLayer`. The
  nodes every unrolled net is made of (SCALE, INNER_PRODUCT, ELTWISE, SLICE, CONCAT,
  SEQUENCE_MASK, HOLD, DROPOUT, TANH and RELU) are written here; each cell registers its unit
  nodes.

:func:`unrolled` writes the very nodes the CAFFE engine runs
(:func:`designer.engines.expansion.expand.expand`) over a fixed number of steps.

The state of a layer is one ``(num_layers * directions, N, size)`` tensor per state its cell
carries (``CellSpec.states``), in torch's order (index ``2 * level + direction``): the graph
takes it as ``<layer>.h0`` ... and gives it back as ``<layer>.hT`` ....
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto, helper

from designer.exchange.onnx_export.ops import OnnxBuilder, tensor
from designer.exchange.writers import Writers

FUSED = Writers("ONNX form")
NODES = Writers("ONNX form", "unrolled node")


def fused(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` in its cell's own form; returns (y, final states)."""
    return FUSED.of_type(module.kind, name)(b, name, module, x, states, lengths)


def caffe_weights(module) -> dict:
    """The layer's tensors (numpy) as its unrolled net holds them: ``W_xc_l0``, ``b_c_l0``,
    ``W_hc_l0`` ... (a layer on the cuDNN engine, which holds a torch.nn layer, converted)."""
    if hasattr(module, "rnn"):
        from designer.engines.net.convert import convert_layer
        sd = {k: v.detach() for k, v in module.state_dict().items()}
        return {k: tensor(v) for k, v in
                convert_layer(module.kind, sd, module.levels, "CUDNN", "CAFFE").items()}
    return {k: tensor(v) for k, v in module.named_parameters()}


def split_levels(b: OnnxBuilder, name: str, state: str, levels: int,
                 dirs: int = 1) -> list[str]:
    """A state tensor (levels * dirs, N, size) cut into one tensor per level."""
    if levels == 1:
        return [state]
    return b.op("Split", [state, b.ints(f"{name}/levels", [dirs] * levels)], f"{name}/{state}",
                outputs=levels, axis=0)


@dataclass
class UnrolledLayer:
    """What a node writer reads of the layer whose unrolled net it writes: the builder, the
    layer's name and module, and its weights, each written once as an ONNX constant."""

    b: OnnxBuilder
    name: str
    module: object
    weights: dict
    consts: dict = field(default_factory=dict)

    @property
    def hidden(self) -> int:
        return self.module.hidden

    def array(self, blob_weight: str) -> np.ndarray:
        """The tensor a node names (``L1/W_hc``), as the layer holds it."""
        from designer.engines.unrolled import weight_key
        return self.weights[weight_key(blob_weight)]

    def weight(self, blob_weight: str, form: str = "", make=None) -> str:
        """The ONNX constant of the tensor a node names, in ``form`` (made from the tensor by
        ``make``; as it is without one), written the first time it is asked for."""
        from designer.engines.unrolled import weight_key
        key = weight_key(blob_weight)
        if (key, form) not in self.consts:
            value = self.weights[key] if make is None else make(self.weights[key])
            self.consts[(key, form)] = self.b.const(f"{self.name}.{key}", value)
        return self.consts[(key, form)]


def unrolled(b: OnnxBuilder, name: str, module, graph, x: str, states: list[str], steps: int,
             lengths=None):
    """The unrolled net of the layer ``name`` of ``graph`` over ``steps`` steps, node for node;
    returns (y, final states)."""
    from designer.engines.expansion.expand import expand
    exp = expand(graph, name, steps)
    layer = UnrolledLayer(b, name, module, caffe_weights(module))
    dirs = getattr(module, "directions", 1)
    ones = b.op("ConstantOfShape", [b.shape_slice(x, 0, 2, f"{name}/cont")], f"{name}/cont",
                value=helper.make_tensor("value", TensorProto.FLOAT, [1], [1.0]))
    blobs = {"x": x, "cont": ones, "lengths": lengths}
    names = graph.layer(name).spec.cell.states
    inits = [split_levels(b, name, s, module.levels * dirs) for s in states]
    for k in range(module.levels):
        p = f"L{k}/" if module.levels > 1 else ""
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            for j, x0 in enumerate(names):
                blobs[f"{p}{x0}_0{sfx}"] = inits[j][k * dirs + d]
    for node in exp.nodes:
        write = NODES.of_type(node.type, name)
        tops = write(layer, node, f"{name}/{node.name}", [blobs[v] for v in node.bottoms])
        blobs.update(zip(node.tops, tops))
    per = len(names)
    finals = []
    for i in range(per):
        chains = [blobs[exp.outputs[1 + per * k + i]] for k in range(module.levels * dirs)]
        finals.append(chains[0] if len(chains) == 1 else
                      b.op("Concat", chains, f"{name}/final{i}", axis=0))
    return blobs[exp.outputs[0]], finals


# --------------------------------------------------------- the nodes every net is made of --
@NODES.register("INNER_PRODUCT")
def _inner_product(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    w = node.params["weights"]
    out = layer.b.op("MatMul", [bot[0], layer.weight(w[0], "T", lambda a: a.T.copy())], hint)
    if len(w) > 1:
        out = layer.b.op("Add", [out, layer.weight(w[1])], f"{hint}/bias")
    return [out]


@NODES.register("SLICE")
def _slice(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    b = layer.b
    tops = b.op("Split", [bot[0], b.ints(f"{hint}/sizes", [1] * len(node.tops))], hint,
                outputs=len(node.tops), axis=0)
    return tops if isinstance(tops, list) else [tops]


@NODES.register("SCALE")
def _scale(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    b = layer.b
    keep = b.op("Unsqueeze", [bot[1], b.ints(f"{hint}/axes", [-1])], f"{hint}/cont")
    return [b.op("Mul", [bot[0], keep], hint)]


@NODES.register("ELTWISE")
def _eltwise(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    return [layer.b.op("Add", bot, hint)]


@NODES.register("TANH", "RELU")
def _activation(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    return [layer.b.op("Tanh" if node.type == "TANH" else "Relu", bot, hint)]


@NODES.register("CONCAT")
def _concat(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    return [layer.b.op("Concat", bot, hint, axis=node.params.get("axis", 0))]


@NODES.register("SEQUENCE_MASK")
def _sequence_mask(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """Valid (T, N): step < length."""
    b = layer.b
    at = b.ints(f"{hint}/steps", np.arange(node.params["steps"]).reshape(-1, 1))
    less = b.op("Less", [at, b.op("Unsqueeze", [bot[0], b.ints(f"{hint}/axes", [0])],
                                  f"{hint}/lengths")], f"{hint}/less")
    return [b.op("Cast", [less], hint, to=TensorProto.FLOAT)]


@NODES.register("HOLD")
def _hold(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """The new state where the step is valid, else the old."""
    b = layer.b
    keep = b.op("Greater", [b.op("Unsqueeze", [bot[-1], b.ints(f"{hint}/axes", [-1])],
                                 f"{hint}/valid"), b.const(f"{hint}/zero", np.float32(0.0))],
                f"{hint}/keep")
    half = (len(bot) - 1) // 2
    return [b.op("Where", [keep, new, old], f"{hint}/{i}")
            for i, (new, old) in enumerate(zip(bot[:half], bot[half:-1]))]


@NODES.register("DROPOUT")
def _dropout(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    return [layer.b.op("Identity", bot, hint)]
