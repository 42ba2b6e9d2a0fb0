"""The pieces a recurrent layer written as ONNX ``Scan`` ops shares with the others: the valid
steps of padded sequences, a Scan body's outputs that keep the state over padding, and a whole
layer whose every step is the linear recurrence ``h = a_t * h + b_t`` (:func:`linear_scan`).

ONNX's own recurrent operators cover few cells; every other cell writes its recurrence as a
``Scan`` whose body is one step (its cell's ``exports/onnx.py``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from onnx import TensorProto, helper

from designer.exchange.onnx_export.ops import OnnxBuilder, tensor


def valid_steps(b: OnnxBuilder, name: str, x: str, lengths: str) -> str:
    """(T, N, 1) booleans of time-major ``x``: step t < lengths[n]."""
    axis0 = b.ints(f"{name}/t_axis", [0])
    steps = b.op("Squeeze", [b.shape_slice(x, 0, 1, f"{name}/steps"), axis0], f"{name}/t")
    at = b.op("Range", [b.const(f"{name}/zero_i", np.int64(0)), steps,
                        b.const(f"{name}/one_i", np.int64(1))], f"{name}/at")
    at = b.op("Unsqueeze", [at, b.ints(f"{name}/t_axes", [1, 2])], f"{name}/at_tn1")
    ends = b.op("Unsqueeze", [lengths, b.ints(f"{name}/n_axes", [0, 2])], f"{name}/ends")
    return b.op("Less", [at, ends], f"{name}/valid")


def step_outputs(inner: OnnxBuilder, hint: str, new: list, y: str, old: list,
                 valid_t: str | None, states) -> list:
    """A Scan body's outputs: the new states, then the step's output ``y``; where
    ``valid_t`` (N, 1) is given, a padded step keeps the ``old`` states and outputs zero."""
    if valid_t is not None:
        zero = inner.const(f"{hint}/zero_out", np.float32(0.0))
        new = [inner.op("Where", [valid_t, a, o], f"{hint}/{s}_held")
               for a, o, s in zip(new, old, states)]
        y = inner.op("Where", [valid_t, y, zero], f"{hint}/y_valid")
    outs = [inner.op("Identity", [v], f"{hint}/{s}_out") for v, s in zip(new, states)]
    return outs + [inner.op("Identity", [y], f"{hint}/y_t")]


def linear_step_body(b: OnnxBuilder, hint: str, hidden: int):
    """The Scan body of a linear recurrence: state h (N, H), scan inputs a_t and b_t (N, H)
    -> h, and h as output."""
    h_in, a_t, b_t = (b.fresh(f"{hint}/{s}") for s in ("h_in", "a_t", "b_t"))
    ah, h_out, y_t = (b.fresh(f"{hint}/{s}") for s in ("ah", "h_out", "y_t"))
    nodes = [helper.make_node("Mul", [a_t, h_in], [ah], name=b.fresh(f"node:{hint}/ah")),
             helper.make_node("Add", [ah, b_t], [h_out], name=b.fresh(f"node:{hint}/h")),
             helper.make_node("Identity", [h_out], [y_t], name=b.fresh(f"node:{hint}/y"))]

    def value(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", hidden])
    return helper.make_graph(nodes, hint.replace("/", "_") + "_step",
                             [value(h_in), value(a_t), value(b_t)], [value(h_out), value(y_t)])


Terms = Callable[[str, str, str], tuple]  # (hint, xw, chain) -> (a, b): the cell's step terms


def linear_scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths,
                terms: Terms):
    """A recurrent layer whose every step is ``h = a_t * h + b_t``, with a_t and b_t made from
    the step's input transform alone, over time-major ``x`` (T, N, E) as Scan ops; returns
    (y, [final h]).

    Per level and direction the input transform ``xw = x W_xc^T + b_c`` is written once over
    all steps, then ``terms(hint, xw, chain)`` writes a_t and b_t from it (``chain``:
    ``l0``, ``l1_reverse``..., the suffix of the chain's tensors), then a Scan whose body is
    one step. ``lengths`` make the padded steps keep the state (a = 1, b = 0 there) and
    output zero; the backward direction reads each sequence's valid steps reversed
    (``ReverseSequence``, which leaves the padding in place) or, without lengths, runs the
    Scan backwards. T and N stay dynamic.
    """
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
            a, c = terms(hint, xw, f"l{k}{sfx}")
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
                            num_scan_inputs=2, body=linear_step_body(b, hint, h), **extra)
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
