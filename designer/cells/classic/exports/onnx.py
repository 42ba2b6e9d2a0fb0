"""LSTM, GRU, RNN and LSTMSimple in ONNX: the standard LSTM/GRU/RNN ops, or the unrolled
net's LSTM_UNIT and GRU_UNIT nodes.

Every engine exports as ONNX ``LSTM``, ``GRU`` and ``RNN`` ops, one per stacked level: the
unrolled engine's weights first go through :mod:`designer.engines.net.convert` (Caffe -> torch),
then torch's gate order is rearranged into ONNX's:

- LSTM (and LSTMSimple): torch [i, f, g, o] -> ONNX [i, o, f, c]; ``B`` = [b_ih, b_hh];
- GRU: torch [r, z, n] -> ONNX [z, r, h], with ``linear_before_reset=1`` (torch's form);
- RNN: the same blocks, ``Tanh`` or ``Relu``.

A bidirectional layer is one ``direction="bidirectional"`` op per level, both directions'
weights in ONNX's gate order; its ``Y`` (T, 2, N, H) becomes (T, N, 2H), forward half first.
``lengths`` become the op's ``sequence_lens`` (int32): padded steps give zero outputs and the
final state is each sequence's after its last valid step (the backward direction's, after step
0), as torch's packed sequences. A length of 0 is run as 1 and then undone (no output, the
state as it came in), which is what the designer's engines do.

The unrolled net (``--unrolled``) writes per step an LSTM_UNIT (:func:`lstm_unit`, Caffe's) or a
GRU_UNIT; an RNN's unit is a TANH or RELU node. The LSTMUnit building block is one LSTM_UNIT.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from designer.cells.classic.spec import CELLS, LSTM_UNIT
from designer.exchange.onnx_export.ops import CONVERTERS, OnnxBuilder, tensor
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer, split_levels

TORCH_TO_ONNX = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def _op(kind: str) -> str:
    """The ONNX operator of a layer type: LSTMSimple is an LSTM."""
    return "LSTM" if kind == "LSTMSimple" else kind


def torch_weights(module) -> dict:
    """torch ``nn.LSTM/GRU/RNN`` tensors (numpy) of a recurrent layer on either engine."""
    if hasattr(module, "rnn"):  # the cuDNN engine holds a torch module already
        return {k: tensor(v) for k, v in module.rnn.state_dict().items()}
    from designer.cells.classic.engines.convert import caffe_to_cudnn
    sd = {k: v.detach() for k, v in module.named_parameters()}
    return {k: tensor(v) for k, v in caffe_to_cudnn(_op(module.kind), sd, module.levels).items()}


def _nonlinearity(module) -> str:
    """An RNN's activation, on either engine."""
    rnn = getattr(module, "rnn", None)
    return getattr(module if rnn is None else rnn, "nonlinearity", "tanh")


def _reorder(w: np.ndarray, kind: str) -> np.ndarray:
    blocks = np.split(w, len(TORCH_TO_ONNX[kind]), axis=0)
    return np.concatenate([blocks[j] for j in TORCH_TO_ONNX[kind]], axis=0)


def _directions(w: dict, key: str, kind: str, dirs: int) -> np.ndarray:
    """(directions, ...) of one torch tensor, each direction in ONNX's gate order."""
    return np.stack([_reorder(w[f"{key}{s}"], kind) for s in ("", "_reverse")[:dirs]])


@FUSED.register("LSTM", "GRU", "RNN", "LSTMSimple")
def standard_ops(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """ONNX LSTM/GRU/RNN ops, one per level; returns (y, final states)."""
    kind = _op(module.kind)
    w, h = torch_weights(module), module.hidden
    dirs = getattr(module, "directions", 1)
    inits = [split_levels(b, name, s, module.levels, dirs) for s in states]
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
            relu = _nonlinearity(module) == "relu"
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


def lstm_unit(b, name, c_prev, gates, cont, hidden: int):
    """Caffe's LSTM_UNIT: gates [i, f, o, g]; c = cont * f * c_prev + i * g; h = o * tanh(c)."""
    axis = b.ints(f"{name}/last", [-1])
    ifo = b.op("Sigmoid", [b.op("Slice", [gates, b.ints(f"{name}/s0", [0]),
                                          b.ints(f"{name}/s3", [3 * hidden]), axis],
                                f"{name}/ifo_in")], f"{name}/ifo")
    g = b.op("Tanh", [b.op("Slice", [gates, b.ints(f"{name}/g0", [3 * hidden]),
                                     b.ints(f"{name}/g1", [4 * hidden]), axis],
                           f"{name}/g_in")], f"{name}/g")
    i, f, o = b.op("Split", [ifo, b.ints(f"{name}/split", [hidden] * 3)], f"{name}/gate",
                   outputs=3, axis=-1)
    keep = b.op("Unsqueeze", [cont, axis], f"{name}/cont")
    kept = b.op("Mul", [f, b.op("Mul", [keep, c_prev], f"{name}/c_conted")], f"{name}/fc")
    c = b.op("Add", [kept, b.op("Mul", [i, g], f"{name}/ig")], f"{name}/c")
    h = b.op("Mul", [o, b.op("Tanh", [c], f"{name}/tanh_c")], f"{name}/h")
    return c, h


@NODES.register(CELLS["LSTM"].unit)
def _lstm_unit(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    return list(lstm_unit(layer.b, hint, bot[0], bot[1], bot[2], layer.hidden))


@CONVERTERS.register(LSTM_UNIT.id)
def lstm_unit_layer(b, name, module, p, ins, shapes):
    """The LSTMUnit building block: one LSTM_UNIT of its inputs (c_prev, gates, cont)."""
    return list(lstm_unit(b, name, ins[0], ins[1], ins[2], int(shapes[0][-1])))


@NODES.register("GRU_UNIT")
def _gru_unit(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """h = (1 - z) n + z h_prev from the step's x_lin and h_lin, blocks [r, z, n]."""
    b, hidden = layer.b, layer.hidden
    h_conted, h_lin, x_lin = bot
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
    return [b.op("Add", [new, keep], hint)]
