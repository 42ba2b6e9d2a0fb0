"""MinGRU and MinLSTM in ONNX: an ONNX ``Scan`` per level and direction, or the unrolled units.

ONNX has no operator for these layers, and none for a log-space cumulative sum, so the export
writes the recurrence the way the unrolled engine runs it: the input transform once over all
steps, ``a_t`` and ``b_t`` from it (MinGRU: a = 1 - z, b = z * g(v); MinLSTM: a = f / (f + i),
b = i / (f + i) * g(v); g(v) = v + 0.5 for v >= 0, sigmoid(v) below), then a ``Scan`` whose body
is one step, ``h = a_t * h + b_t``. T and N stay dynamic.

``lengths`` make the padded steps keep the state (a = 1, b = 0 there) and output zero; the
backward direction reads each sequence's valid steps reversed (``ReverseSequence``, which
leaves the padding in place) or, without lengths, runs the Scan backwards. ``unit`` writes the
MIN_GRU_UNIT and MIN_LSTM_UNIT nodes of the unrolled net (``--unrolled``).
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from designer.cells.minimal.spec import CELLS
from designer.exchange.onnx_export.ops import OnnxBuilder, tensor
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer

KINDS = {cell.unit: kind for kind, cell in CELLS.items()}  # unit node type -> layer type


def _g(b: OnnxBuilder, hint: str, v: str) -> str:
    """g(v) = v + 0.5 for v >= 0, sigmoid(v) below."""
    zero = b.const(f"{hint}/zero", np.float32(0.0))
    half = b.const(f"{hint}/half", np.float32(0.5))
    return b.op("Where", [b.op("GreaterOrEqual", [v, zero], f"{hint}/v_ge_0"),
                          b.op("Add", [v, half], f"{hint}/v_half"),
                          b.op("Sigmoid", [v], f"{hint}/v_sigmoid")], f"{hint}/g")


def _terms(b: OnnxBuilder, hint: str, kind: str, xw: str, hidden: int) -> tuple[str, str]:
    """(a, b) of ``h = a * h_prev + b`` from the input transform ``xw`` (..., G*H)."""
    g = len(CELLS[kind].gates)
    parts = b.op("Split", [xw, b.ints(f"{hint}/blocks", [hidden] * g)], f"{hint}/block",
                 outputs=g, axis=-1)
    cand = _g(b, hint, parts[-1])
    if kind == "MinGRU":
        z = b.op("Sigmoid", [parts[0]], f"{hint}/z")
        one = b.const(f"{hint}/one", np.float32(1.0))
        return (b.op("Sub", [one, z], f"{hint}/a"),
                b.op("Mul", [z, cand], f"{hint}/b"))
    f = b.op("Sigmoid", [parts[0]], f"{hint}/f")
    i = b.op("Sigmoid", [parts[1]], f"{hint}/i")
    total = b.op("Add", [f, i], f"{hint}/f_plus_i")
    return (b.op("Div", [f, total], f"{hint}/a"),
            b.op("Mul", [b.op("Div", [i, total], f"{hint}/i_norm"), cand], f"{hint}/b"))


@NODES.register(*KINDS)
def unit(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """One unrolled step: MIN_GRU_UNIT or MIN_LSTM_UNIT of h_conted and the step's xw."""
    b, (h_conted, x_lin) = layer.b, bot
    a, c = _terms(b, hint, KINDS[node.type], x_lin, layer.hidden)
    return [b.op("Add", [b.op("Mul", [a, h_conted], f"{hint}/ah"), c], hint)]


def _step_body(b: OnnxBuilder, hint: str, hidden: int):
    """The Scan body: state h (N, H), scan inputs a_t and b_t (N, H) -> h, and h as output."""
    h_in, a_t, b_t = (b.fresh(f"{hint}/{s}") for s in ("h_in", "a_t", "b_t"))
    ah, h_out, y_t = (b.fresh(f"{hint}/{s}") for s in ("ah", "h_out", "y_t"))
    nodes = [helper.make_node("Mul", [a_t, h_in], [ah], name=b.fresh(f"node:{hint}/ah")),
             helper.make_node("Add", [ah, b_t], [h_out], name=b.fresh(f"node:{hint}/h")),
             helper.make_node("Identity", [h_out], [y_t], name=b.fresh(f"node:{hint}/y"))]

    def value(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", hidden])
    return helper.make_graph(nodes, hint.replace("/", "_") + "_step",
                             [value(h_in), value(a_t), value(b_t)], [value(h_out), value(y_t)])


@FUSED.register(*CELLS)
def scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` (T, N, E) as Scan ops; returns (y, [final h])."""
    h, dirs, levels = module.hidden, module.directions, module.levels
    weights = {k: tensor(v) for k, v in module.named_parameters()}
    chains = levels * dirs
    h0 = states[0]
    inits = [h0] if chains == 1 else b.op(
        "Split", [h0, b.ints(f"{name}/chains", [1] * chains)], f"{name}/h0", outputs=chains,
        axis=0)
    axis0 = b.ints(f"{name}/axis0", [0])
    valid = seq_lens = None
    if lengths is not None:  # (T, N, 1): step t < lengths[n]
        steps = b.op("Squeeze", [b.shape_slice(x, 0, 1, f"{name}/steps"), axis0], f"{name}/t")
        at = b.op("Range", [b.const(f"{name}/zero_i", np.int64(0)), steps,
                            b.const(f"{name}/one_i", np.int64(1))], f"{name}/at")
        at = b.op("Unsqueeze", [at, b.ints(f"{name}/t_axes", [1, 2])], f"{name}/at_tn1")
        ends = b.op("Unsqueeze", [lengths, b.ints(f"{name}/n_axes", [0, 2])], f"{name}/ends")
        valid = b.op("Less", [at, ends], f"{name}/valid")
        seq_lens = lengths
    finals = []
    for k in range(levels):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:dirs]):
            hint = f"{name}/l{k}{sfx}" if chains > 1 else name
            w = b.const(f"{name}.W_xc_l{k}{sfx}", weights[f"W_xc_l{k}{sfx}"].T.copy())
            xw = b.op("Add", [b.op("MatMul", [x, w], f"{hint}/xw_mm"),
                              b.const(f"{name}.b_c_l{k}{sfx}", weights[f"b_c_l{k}{sfx}"])],
                      f"{hint}/xw")
            a, c = _terms(b, hint, module.kind, xw, h)
            if valid is not None:  # padded steps keep the state: a = 1, b = 0
                a = b.op("Where", [valid, a, b.const(f"{hint}/one_pad", np.float32(1.0))],
                         f"{hint}/a_valid")
                c = b.op("Where", [valid, c, b.const(f"{hint}/zero_pad", np.float32(0.0))],
                         f"{hint}/b_valid")
            start = b.op("Squeeze", [inits[k * dirs + d], axis0], f"{hint}/h0")
            backwards = d == 1 and seq_lens is None
            if d == 1 and seq_lens is not None:
                a, c = (b.op("ReverseSequence", [v, seq_lens], f"{hint}/{s}_reversed",
                             batch_axis=1, time_axis=0) for v, s in ((a, "a"), (c, "b")))
            extra = {"scan_input_directions": [1, 1], "scan_output_directions": [1]} \
                if backwards else {}
            last, hs = b.op("Scan", [start, a, c], f"{hint}/scan", outputs=2,
                            num_scan_inputs=2, body=_step_body(b, hint, h), **extra)
            if d == 1 and seq_lens is not None:
                hs = b.op("ReverseSequence", [hs, seq_lens], f"{hint}/h_reversed",
                          batch_axis=1, time_axis=0)
            if valid is not None:
                hs = b.op("Where", [valid, hs, b.const(f"{hint}/zero_out", np.float32(0.0))],
                          f"{hint}/h_valid")
            outs.append(hs)
            finals.append(b.op("Unsqueeze", [last, axis0], f"{hint}/final"))
        x = outs[0] if dirs == 1 else b.op("Concat", outs, f"{name}/l{k}/both", axis=-1)
    final = finals[0] if chains == 1 else b.op("Concat", finals, f"{name}/final", axis=0)
    return x, [final]
