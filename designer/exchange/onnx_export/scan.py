"""The pieces a recurrent layer written as ONNX ``Scan`` ops shares with the others: the valid
steps of padded sequences, and a Scan body's outputs that keep the state over padding.

ONNX's own recurrent operators cover few cells; every other cell writes its recurrence as a
``Scan`` whose body is one step (its cell's ``exports/onnx.py``).
"""
from __future__ import annotations

import numpy as np

from designer.exchange.onnx_export.ops import OnnxBuilder


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
