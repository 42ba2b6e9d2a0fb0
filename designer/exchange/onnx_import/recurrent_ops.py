"""ONNX ``LSTM``, ``GRU`` and ``RNN`` as recurrent layers.

The op's ``W``, ``R`` and ``B`` are already in the gate order rnn-designer's export writes (ONNX's
i, o, f, c and z, r, h), so they are kept as they are, under the names the export gives them
(``<layer>.W_l0`` ...); :mod:`weights` puts them into either engine. ``Y`` (T, D, N, H) becomes
the layer's output, ``Y_h`` its last step (a SequenceLast of ``Y``). Initial states must be
zeros (a constant of zeros, a ``ConstantOfShape`` or an input read as zeros); ``sequence_lens``
must be the data's lengths.
"""
from __future__ import annotations

import numpy as np

from designer.graph import registry

from designer.exchange.onnx_import.values import Const, Seq, Zeros


def _gates(op_type: str) -> int:
    """The gate blocks of an ONNX recurrent op: those of the layer of the same name."""
    return len(registry.cell(op_type).gates)


def _recurrent(w, node, attrs, kind: str):
    x = w.seq(node)
    layout = attrs.get("layout", 0)
    want = "NTC" if layout else "TNC"
    if x.axes.replace("1", "") != want:
        w.fail(node, f"reads a value of axes {x.axes} where its layout needs {want}")
    hidden = attrs.get("hidden_size")
    weights = w.value(node, 1)
    if not isinstance(weights, Const):
        w.fail(node, "has weights that are not constants")
    if hidden is None:
        w.fail(node, "has no hidden_size, so the size of its state is only known at run time")
    direction = attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction == "reverse":
        w.fail(node, "runs backwards only; rnn-designer's layers run forwards, or both ways")
    dirs = 2 if direction == "bidirectional" else 1
    extra = {}
    if kind == "GRU" and not attrs.get("linear_before_reset", 0):
        w.fail(node, "has linear_before_reset=0; rnn-designer's GRU (as torch's and cuDNN's) "
               "applies the reset gate after the recurrent matrix product")
    if kind == "RNN":
        acts = [a.decode() if isinstance(a, bytes) else a for a in
                attrs.get("activations", ["Tanh"] * dirs)]
        if set(acts) - {"Tanh", "Relu"} or len(set(acts)) > 1:
            w.fail(node, f"uses the activations {acts}; rnn-designer's RNN uses tanh or relu")
        extra["nonlinearity"] = acts[0].lower()
    if attrs.get("clip") is not None or attrs.get("input_forget", 0):
        w.fail(node, "clips its cell or couples its gates, which rnn-designer's layers do not")
    if kind == "LSTM" and len(node.input) > 7 and node.input[7]:
        w.fail(node, "has peepholes, which rnn-designer's LSTM does not")
    for i in (5, 6):
        state = w.value(node, i)
        if state is not None and not isinstance(state, Zeros) and not (
                isinstance(state, Const) and not state.array.any()):
            w.fail(node, "starts from a state that is not zeros; rnn-designer's layers start "
                   "from zeros or carry their own")
    g = _gates(kind)
    recurrence = w.const(node, 2, "the recurrent weights")
    bias = w.value(node, 3)
    if bias is not None and not isinstance(bias, (Const, Zeros)):
        w.fail(node, "has a bias that is not a constant")
    b = bias.array if isinstance(bias, Const) else np.zeros((dirs, 2 * g * hidden), np.float32)
    _check_sizes(w, node, x, {"W": weights.array, "R": recurrence, "B": b}, dirs, g * hidden)
    name = w.add(kind, kind.lower(), {"num_output": int(hidden), "bidirectional": dirs == 2,
                                      **extra})
    w.connect(x, name, "x")
    lengths = w.value(node, 4)
    if lengths is not None:
        if not isinstance(lengths, Seq) or lengths.src[1] != "lengths":
            w.fail(node, "reads sequence_lens that are not the data's lengths")
        w.connect(lengths, name, "lengths")
    elif w.tokens:
        w.graph.connect(w.data_layer, "cont", name, "cont")
    w.arrays[f"{name}.W_l0"] = weights.array.astype(np.float32)
    w.arrays[f"{name}.R_l0"] = recurrence.astype(np.float32)
    w.arrays[f"{name}.B_l0"] = b.astype(np.float32)
    d = "D" if dirs == 2 else "1"
    y_axes = "T" + d + "NC" if not layout else "NT" + d + "C"
    y = Seq((name, "y"), y_axes, {"C": int(hidden), "D": dirs})
    return [y] + [LastState(y, lengths, node.output[0])] * (len(node.output) - 1)


def _check_sizes(w, node, x: Seq, arrays: dict, dirs: int, rows: int) -> None:
    """W, R and B against the features the op reads, its directions and hidden_size (``rows``:
    the gates times the units), before a layer of those sizes is made."""
    weights = arrays["W"]
    if weights.ndim == 3 and x.features and weights.shape[2] != x.features:
        w.fail(node, f"reads {x.features:,} features a step, but its weights W are made for "
               f"{weights.shape[2]:,}")
    hidden = rows // _gates(node.op_type)
    want = {"W": (dirs, rows, weights.shape[-1]), "R": (dirs, rows, hidden), "B": (dirs, 2 * rows)}
    for key, array in arrays.items():
        if tuple(array.shape) != want[key]:
            w.fail(node, f"has weights {key} of the shape {tuple(array.shape)}, where "
                   f"{dirs} direction{'s' if dirs > 1 else ''} of {hidden:,} units need "
                   f"{want[key]}")


class LastState:
    """``Y_h`` of a recurrent op, read as the last (valid) step of ``Y``: a SequenceLast."""

    def __init__(self, y: Seq, lengths, label: str):
        self.y, self.lengths, self.label, self.made = y, lengths, label, None

    def value(self, w, node) -> Seq:
        if self.made is None:
            if self.y.sizes.get("D", 1) > 1:
                w.fail(node, "reads the final state of a bidirectional layer; read its output "
                       "(Y) instead, or its last step")
            name = w.add("SequenceLast", "last", {})
            w.connect(self.y, name, "x")
            if self.lengths is not None:
                w.connect(self.lengths, name, "lengths")
            self.made = Seq((name, "y"), "1NC", {"C": self.y.features})
        return self.made


def lstm(w, node, attrs):
    return _recurrent(w, node, attrs, "LSTM")


def gru(w, node, attrs):
    return _recurrent(w, node, attrs, "GRU")


def rnn(w, node, attrs):
    return _recurrent(w, node, attrs, "RNN")
