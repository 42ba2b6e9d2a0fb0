"""Recurrent layers in ONNX: the standard LSTM/GRU/RNN ops, or the unrolled per-step net.

Both engines export as ONNX ``LSTM``, ``GRU`` and ``RNN`` ops, one per stacked level: the
unrolled engine's weights first go through :mod:`designer.engines.convert` (Caffe -> torch), then
torch's gate order is rearranged into ONNX's:

- LSTM: torch [i, f, g, o] -> ONNX [i, o, f, c]; ``B`` = [b_ih, b_hh];
- GRU: torch [r, z, n] -> ONNX [z, r, h], with ``linear_before_reset=1`` (torch's form);
- RNN: the same blocks, ``Tanh`` or ``Relu``.

``unrolled`` writes instead the very nodes the CAFFE engine runs (``expansion``): per step SCALE,
INNER_PRODUCT, ELTWISE and LSTM_UNIT (or GRU_UNIT, TANH/RELU), over a fixed number of steps.

The state of a layer is one ``(num_layers * directions, N, H)`` tensor per kind (h, and c for an
LSTM), in torch's order (index ``2 * level + direction``): the graph takes it as
``<layer>.h0``/``<layer>.c0`` and gives it back as ``<layer>.hT``/``.cT``.

MinGRU and MinLSTM have no ONNX operator: :mod:`onnx_min_rnn` writes them as ``Scan`` ops
(or, unrolled, their MIN_GRU_UNIT and MIN_LSTM_UNIT nodes); the sLSTM neither: :mod:`onnx_slstm`
(a ``Scan`` per level and direction, or its HEAD_INNER_PRODUCT and SLSTM_UNIT nodes), its state
h, c, n and m; the mLSTM neither: :mod:`onnx_mlstm` (a ``Scan`` per level, or its MLSTM_UNIT
nodes), its state C, n and m.

A bidirectional layer is one ``direction="bidirectional"`` op per level, both directions'
weights in ONNX's gate order; its ``Y`` (T, 2, N, H) becomes (T, N, 2H), forward half first.
``lengths`` become the op's ``sequence_lens`` (int32): padded steps give zero outputs and the
final state is each sequence's after its last valid step (the backward direction's, after step
0), as torch's packed sequences. A length of 0 is run as 1 and then undone (no output, the
state as it came in), which is what the designer's engines do.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from designer.cells.classic.engines.convert import caffe_to_cudnn, cudnn_to_caffe
from designer.engines.expansion import expand_params
from designer.cells.mlstm.engines.unrolled import expand_mlstm
from designer.engines.unrolled import weight_key

from designer.cells.minimal.exports import onnx as onnx_min_rnn

from designer.cells.mlstm.exports import onnx as onnx_mlstm

from designer.cells.slstm.exports import onnx as onnx_slstm
from designer.exchange.onnx_ops import OnnxBuilder, lstm_unit, tensor

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
            "nonlinearity": getattr(module, "nonlinearity", "tanh")}


def _reorder(w: np.ndarray, kind: str) -> np.ndarray:
    blocks = np.split(w, len(TORCH_TO_ONNX[kind]), axis=0)
    return np.concatenate([blocks[j] for j in TORCH_TO_ONNX[kind]], axis=0)


def _levels(b: OnnxBuilder, name: str, state: str, levels: int, dirs: int = 1) -> list[str]:
    if levels == 1:
        return [state]
    return b.op("Split", [state, b.ints(f"{name}/levels", [dirs] * levels)], f"{name}/{state}",
                outputs=levels, axis=0)


def _directions(w: dict, key: str, kind: str, dirs: int) -> np.ndarray:
    """(directions, ...) of one torch tensor, each direction in ONNX's gate order."""
    return np.stack([_reorder(w[f"{key}{s}"], kind) for s in ("", "_reverse")[:dirs]])


def fused(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """ONNX LSTM/GRU/RNN ops, one per level; returns (y, final states)."""
    if module.kind in ("MinGRU", "MinLSTM"):
        return onnx_min_rnn.scan(b, name, module, x, states, lengths)
    if module.kind == "sLSTM":
        return onnx_slstm.scan(b, name, module, x, states, lengths)
    if module.kind == "mLSTM":
        return onnx_mlstm.scan(b, name, module, x, states, lengths)
    kind = "LSTM" if module.kind == "LSTMSimple" else module.kind
    w, h = torch_weights(module), module.hidden
    dirs = getattr(module, "directions", 1)
    inits = [_levels(b, name, s, module.levels, dirs) for s in states]
    finals = [[] for _ in states]
    seq_lens, alive = "", None
    if lengths is not None:
        one = b.op("Cast", [b.ints(f"{name}/one", [1])], f"{name}/one_i32", to=TensorProto.INT32)
        as_int = b.op("Cast", [lengths], f"{name}/lengths_i32", to=TensorProto.INT32)
        seq_lens = b.op("Max", [as_int, one], f"{name}/sequence_lens")
        alive = b.op("Greater", [as_int, b.op("Sub", [one, one], f"{name}/zero")],
                     f"{name}/alive")
    for k in range(module.levels):
        wk = b.const(f"{name}.W_l{k}", _directions(w, f"weight_ih_l{k}", kind, dirs))
        rk = b.const(f"{name}.R_l{k}", _directions(w, f"weight_hh_l{k}", kind, dirs))
        bias = np.concatenate([_directions(w, f"bias_ih_l{k}", kind, dirs),
                               _directions(w, f"bias_hh_l{k}", kind, dirs)], axis=1)
        bk = b.const(f"{name}.B_l{k}", bias)
        hint = f"{name}/l{k}" if module.levels > 1 else name
        extra = {}
        if dirs == 2:
            extra["direction"] = "bidirectional"
        if kind == "GRU":
            extra["linear_before_reset"] = 1
        if kind == "RNN":
            relu = layer_settings(module)["nonlinearity"] == "relu"
            extra["activations"] = ["Relu" if relu else "Tanh"] * dirs
        outs = b.op(kind, [x, wk, rk, bk, seq_lens] + [s[k] for s in inits], hint,
                    outputs=1 + len(states), hidden_size=h, **extra)
        if dirs == 1:
            x = b.op("Squeeze", [outs[0], b.ints(f"{hint}/dir", [1])], f"{hint}/y")
        else:  # (T, 2, N, H) -> (T, N, 2H), the forward half first
            y = b.op("Transpose", [outs[0]], f"{hint}/y_tnd", perm=[0, 2, 1, 3])
            x = b.op("Reshape", [y, b.ints(f"{hint}/y_shape", [0, 0, -1])], f"{hint}/y")
        for i, final in enumerate(outs[1:]):
            finals[i].append(final)
    finals = [f[0] if len(f) == 1 else b.op("Concat", f, f"{name}/final{i}", axis=0)
              for i, f in enumerate(finals)]
    if alive is not None:  # a sequence of length 0: no output, its state as it came in
        keep = b.op("Unsqueeze", [alive, b.ints(f"{name}/keep_axes", [0, 2])], f"{name}/keep")
        x = b.op("Where", [keep, x, b.const(f"{name}/no_output", np.float32(0.0))],
                 f"{name}/y_kept")
        finals = [b.op("Where", [keep, f, s], f"{name}/final{i}_kept")
                  for i, (f, s) in enumerate(zip(finals, states))]
    return x, finals


def unrolled(b: OnnxBuilder, name: str, module, x: str, states: list[str], steps: int,
             lengths=None):
    """The unrolled net over ``steps`` steps, node for node; returns (y, final states)."""
    settings = layer_settings(module)
    dirs = getattr(module, "directions", 1)
    params = {"num_output": module.hidden, "num_layers": module.levels,
              "dropout_ratio": settings["dropout"], "nonlinearity": settings["nonlinearity"],
              "bidirectional": dirs == 2, "num_heads": getattr(module, "heads", 1),
              "forget_gate": getattr(module, "forget_gate", "sigmoid")}
    if module.kind == "mLSTM":
        params["forget_gate"], params["cell_norm"] = module.forget, module.norm
        exp = expand_mlstm(params, steps, "N", settings["input_size"], name, lengths is not None)
    else:
        exp = expand_params(module.kind, params, steps, "N", settings["input_size"], name,
                            lengths is not None)
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
    blobs = {"x": x, "cont": ones, "lengths": lengths}
    names = onnx_mlstm.STATES if module.kind == "mLSTM" else ("h", "c", "n", "m")[:len(states)]
    inits = [_levels(b, name, s, module.levels * dirs) for s in states]
    for k in range(module.levels):
        p = f"L{k}/" if module.levels > 1 else ""
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            for j, x0 in enumerate(names):
                blobs[f"{p}{x0}_0{sfx}"] = inits[j][k * dirs + d]
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
        elif node.type == "HEAD_INNER_PRODUCT":
            w = weights[weight_key(node.params["weights"][0])]
            key = (weight_key(node.params["weights"][0]), "heads")
            if key not in consts:
                consts[key] = b.const(f"{name}.{key[0]}", w.transpose(0, 2, 1).copy())
            tops = [onnx_slstm.head_matmul(b, hint, bot[0], consts[key], w.shape[0],
                                           w.shape[2], [1, -1, w.shape[1] * w.shape[0]])]
        elif node.type == "SLSTM_UNIT":
            tops = onnx_slstm.unrolled_unit(b, hint, bot, module.hidden,
                                            node.params["forget_gate"] == "exp")
        elif node.type == "MLSTM_UNIT":
            tops = onnx_mlstm.unrolled_unit(b, hint, bot, module.hidden, module.heads,
                                            node.params["forget_gate"] == "exp",
                                            node.params["norm"])
        elif node.type in ("MIN_GRU_UNIT", "MIN_LSTM_UNIT"):
            tops = [onnx_min_rnn.unit(b, hint, node.type, *bot, module.hidden)]
        elif node.type in ("TANH", "RELU"):
            tops = [b.op("Tanh" if node.type == "TANH" else "Relu", bot, hint)]
        elif node.type == "CONCAT":
            tops = [b.op("Concat", bot, hint, axis=node.params.get("axis", 0))]
        elif node.type == "SEQUENCE_MASK":  # valid (T, N): step < length
            at = b.ints(f"{hint}/steps", np.arange(node.params["steps"]).reshape(-1, 1))
            less = b.op("Less", [at, b.op("Unsqueeze", [bot[0], b.ints(f"{hint}/axes", [0])],
                                          f"{hint}/lengths")], f"{hint}/less")
            tops = [b.op("Cast", [less], hint, to=TensorProto.FLOAT)]
        elif node.type == "HOLD":  # the new state where the step is valid, else the old
            keep = b.op("Greater", [b.op("Unsqueeze", [bot[-1], b.ints(f"{hint}/axes", [-1])],
                                         f"{hint}/valid"), b.const(f"{hint}/zero",
                                                                   np.float32(0.0))],
                        f"{hint}/keep")
            half = (len(bot) - 1) // 2
            tops = [b.op("Where", [keep, new, old], f"{hint}/{i}")
                    for i, (new, old) in enumerate(zip(bot[:half], bot[half:-1]))]
        elif node.type == "DROPOUT":
            tops = [b.op("Identity", bot, hint)]
        else:  # pragma: no cover - the expansion makes only the types above
            raise ValueError(f"no ONNX form for an unrolled {node.type} node")
        blobs.update(zip(node.tops, tops))
    per = len(names)
    finals = []
    for i in range(per):
        parts = [blobs[exp.outputs[1 + per * k + i]] for k in range(module.levels * dirs)]
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
