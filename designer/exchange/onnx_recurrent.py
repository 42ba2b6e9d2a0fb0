"""Recurrent layers in ONNX: the standard LSTM/GRU/RNN ops, or the unrolled per-step net.

Both engines export as ONNX ``LSTM``, ``GRU`` and ``RNN`` ops, one per stacked level: the
unrolled engine's weights first go through :mod:`designer.engines.convert` (Caffe -> torch), then
torch's gate order is rearranged into ONNX's:

- LSTM: torch [i, f, g, o] -> ONNX [i, o, f, c]; ``B`` = [b_ih, b_hh];
- GRU: torch [r, z, n] -> ONNX [z, r, h], with ``linear_before_reset=1`` (torch's form);
- RNN: the same blocks, ``Tanh`` or ``Relu``.

``unrolled`` writes instead the very nodes the CAFFE engine runs (``expansion``): per step SCALE,
INNER_PRODUCT, ELTWISE and LSTM_UNIT (or GRU_UNIT, TANH/RELU), over a fixed number of steps.

The state of a layer is one ``(num_layers, N, H)`` tensor per kind (h, and c for an LSTM): the
graph takes it as ``<layer>.h0``/``<layer>.c0`` and gives it back as ``<layer>.hT``/``.cT``.
"""
from __future__ import annotations

import numpy as np

from designer.engines.convert import caffe_to_cudnn, cudnn_to_caffe
from designer.engines.expansion import expand_params
from designer.engines.unrolled import weight_key

from .onnx_ops import OnnxBuilder, lstm_unit, tensor

TORCH_TO_ONNX = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def torch_weights(module) -> dict:
    """torch ``nn.LSTM/GRU/RNN`` tensors (numpy) of a recurrent layer on either engine."""
    kind = "LSTM" if module.kind == "LSTMSimple" else module.kind
    if hasattr(module, "rnn"):  # the cuDNN engine holds a torch module already
        return {k: tensor(v) for k, v in module.rnn.state_dict().items()}
    sd = {k: v.detach() for k, v in module.named_parameters()}
    return {k: tensor(v) for k, v in caffe_to_cudnn(kind, sd, module.levels).items()}


def caffe_weights(module) -> dict:
    """The unrolled layer's tensors (numpy): ``W_xc_l0``, ``b_c_l0``, ``W_hc_l0`` ..."""
    kind = "LSTM" if module.kind == "LSTMSimple" else module.kind
    if hasattr(module, "rnn"):
        sd = {k: v.detach() for k, v in module.rnn.state_dict().items()}
        return {k: tensor(v) for k, v in cudnn_to_caffe(kind, sd, module.levels).items()}
    return {k: tensor(v) for k, v in module.named_parameters()}


def layer_settings(module) -> dict:
    """Input size, dropout and nonlinearity of a recurrent module on either engine."""
    rnn = getattr(module, "rnn", None)
    if rnn is not None:
        return {"input_size": rnn.input_size, "dropout": rnn.dropout,
                "nonlinearity": getattr(rnn, "nonlinearity", "tanh")}
    return {"input_size": module.input_size, "dropout": module.dropout,
            "nonlinearity": module.nonlinearity}


def _reorder(w: np.ndarray, kind: str) -> np.ndarray:
    blocks = np.split(w, len(TORCH_TO_ONNX[kind]), axis=0)
    return np.concatenate([blocks[j] for j in TORCH_TO_ONNX[kind]], axis=0)


def _levels(b: OnnxBuilder, name: str, state: str, levels: int) -> list[str]:
    if levels == 1:
        return [state]
    return b.op("Split", [state, b.ints(f"{name}/levels", [1] * levels)], f"{name}/{state}",
                outputs=levels, axis=0)


def fused(b: OnnxBuilder, name: str, module, x: str, states: list[str]):
    """ONNX LSTM/GRU/RNN ops, one per level; returns (y, final states)."""
    kind = "LSTM" if module.kind == "LSTMSimple" else module.kind
    w, h = torch_weights(module), module.hidden
    inits = [_levels(b, name, s, module.levels) for s in states]
    finals = [[] for _ in states]
    for k in range(module.levels):
        wk = b.const(f"{name}.W_l{k}", _reorder(w[f"weight_ih_l{k}"], kind)[None])
        rk = b.const(f"{name}.R_l{k}", _reorder(w[f"weight_hh_l{k}"], kind)[None])
        bias = np.concatenate([_reorder(w[f"bias_ih_l{k}"], kind),
                               _reorder(w[f"bias_hh_l{k}"], kind)])[None]
        bk = b.const(f"{name}.B_l{k}", bias)
        hint = f"{name}/l{k}" if module.levels > 1 else name
        extra = {}
        if kind == "GRU":
            extra["linear_before_reset"] = 1
        if kind == "RNN":
            relu = layer_settings(module)["nonlinearity"] == "relu"
            extra["activations"] = ["Relu" if relu else "Tanh"]
        outs = b.op(kind, [x, wk, rk, bk, ""] + [s[k] for s in inits], hint,
                    outputs=1 + len(states), hidden_size=h, **extra)
        x = b.op("Squeeze", [outs[0], b.ints(f"{hint}/dir", [1])], f"{hint}/y")
        for i, final in enumerate(outs[1:]):
            finals[i].append(final)
    return x, [f[0] if len(f) == 1 else b.op("Concat", f, f"{name}/final{i}", axis=0)
               for i, f in enumerate(finals)]


def unrolled(b: OnnxBuilder, name: str, module, x: str, states: list[str], steps: int):
    """The unrolled net over ``steps`` steps, node for node; returns (y, final states)."""
    settings = layer_settings(module)
    params = {"num_output": module.hidden, "num_layers": module.levels,
              "dropout_ratio": settings["dropout"], "nonlinearity": settings["nonlinearity"]}
    exp = expand_params(module.kind, params, steps, "N", settings["input_size"], name)
    weights = caffe_weights(module)
    consts = {}

    def weight(blob_weight: str, transpose: bool) -> str:
        key = weight_key(blob_weight)
        if (key, transpose) not in consts:
            value = weights[key].T.copy() if transpose else weights[key]
            consts[(key, transpose)] = b.const(f"{name}.{key}", value)
        return consts[(key, transpose)]

    ones = b.op("ConstantOfShape", [b.shape_slice(x, 0, 2, f"{name}/cont")], f"{name}/cont",
                value=_float_tensor(1.0))
    blobs = {"x": x, "cont": ones}
    lstm = module.kind in ("LSTM", "LSTMSimple")
    inits = [_levels(b, name, s, module.levels) for s in states]
    for k in range(module.levels):
        p = f"L{k}/" if module.levels > 1 else ""
        blobs[f"{p}h_0"] = inits[0][k]
        if lstm:
            blobs[f"{p}c_0"] = inits[1][k]
    for node in exp.nodes:
        hint = f"{name}/{node.name}"
        bot = [blobs[v] for v in node.bottoms]
        if node.type == "INNER_PRODUCT":
            w = node.params["weights"]
            out = b.op("MatMul", [bot[0], weight(w[0], True)], hint)
            if len(w) > 1:
                out = b.op("Add", [out, weight(w[1], False)], f"{hint}/bias")
            tops = [out]
        elif node.type == "SLICE":
            tops = b.op("Split", [bot[0], b.ints(f"{hint}/sizes", [1] * len(node.tops))], hint,
                        outputs=len(node.tops), axis=0)
            tops = tops if isinstance(tops, list) else [tops]
        elif node.type == "SCALE":
            keep = b.op("Unsqueeze", [bot[1], b.ints(f"{hint}/axes", [-1])], f"{hint}/cont")
            tops = [b.op("Mul", [bot[0], keep], hint)]
        elif node.type == "ELTWISE":
            tops = [b.op("Add", bot, hint)]
        elif node.type == "LSTM_UNIT":
            tops = list(lstm_unit(b, hint, bot[0], bot[1], bot[2], module.hidden))
        elif node.type == "GRU_UNIT":
            tops = [_gru_unit(b, hint, *bot, module.hidden)]
        elif node.type in ("TANH", "RELU"):
            tops = [b.op("Tanh" if node.type == "TANH" else "Relu", bot, hint)]
        elif node.type == "CONCAT":
            tops = [b.op("Concat", bot, hint, axis=0)]
        elif node.type == "DROPOUT":
            tops = [b.op("Identity", bot, hint)]
        else:  # pragma: no cover - the expansion makes only the types above
            raise ValueError(f"no ONNX form for an unrolled {node.type} node")
        blobs.update(zip(node.tops, tops))
    per = 2 if lstm else 1
    finals = []
    for i in range(per):
        parts = [blobs[exp.outputs[1 + per * k + i]] for k in range(module.levels)]
        finals.append(parts[0] if len(parts) == 1 else
                      b.op("Concat", parts, f"{name}/final{i}", axis=0))
    return blobs[exp.outputs[0]], finals


def _gru_unit(b, hint, h_conted, h_lin, x_lin, hidden: int):
    xs = b.op("Split", [x_lin, b.ints(f"{hint}/xs", [hidden] * 3)], f"{hint}/x", outputs=3,
              axis=-1)
    hs = b.op("Split", [h_lin, b.ints(f"{hint}/hs", [hidden] * 3)], f"{hint}/h", outputs=3,
              axis=-1)
    r = b.op("Sigmoid", [b.op("Add", [xs[0], hs[0]], f"{hint}/r_in")], f"{hint}/r")
    z = b.op("Sigmoid", [b.op("Add", [xs[1], hs[1]], f"{hint}/z_in")], f"{hint}/z")
    n = b.op("Tanh", [b.op("Add", [xs[2], b.op("Mul", [r, hs[2]], f"{hint}/rh")],
                           f"{hint}/n_in")], f"{hint}/n")
    one = b.const(f"{hint}/one", np.float32(1.0))
    keep = b.op("Mul", [z, h_conted], f"{hint}/zh")
    new = b.op("Mul", [b.op("Sub", [one, z], f"{hint}/1-z"), n], f"{hint}/zn")
    return b.op("Add", [new, keep], hint)


def _float_tensor(value: float):
    from onnx import TensorProto, helper
    return helper.make_tensor("value", TensorProto.FLOAT, [1], [value])
