"""MinGRU and MinLSTM in ONNX: an ONNX ``Scan`` per level and direction, or the unrolled units.

ONNX has no operator for these layers, and none for a log-space cumulative sum, so the export
writes the recurrence the way the unrolled engine runs it: the input transform once over all
steps, ``a_t`` and ``b_t`` from it (MinGRU: a = 1 - z, b = z * g(v); MinLSTM: a = f / (f + i),
b = i / (f + i) * g(v); g(v) = v + 0.5 for v >= 0, sigmoid(v) below), then a ``Scan`` whose body
is one step, ``h = a_t * h + b_t`` (:func:`designer.exchange.onnx_export.scan.linear_scan`,
which also keeps the state over padding and reads the backward direction reversed). T and N stay
dynamic.
``unit`` writes the MIN_GRU_UNIT and MIN_LSTM_UNIT nodes of the unrolled net (``--unrolled``).
"""
from __future__ import annotations

import numpy as np

from designer.cells.minimal.spec import CELLS
from designer.exchange.onnx_export.ops import OnnxBuilder
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer
from designer.exchange.onnx_export.scan import linear_scan

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


@FUSED.register(*CELLS)
def scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` (T, N, E) as Scan ops; returns (y, [final h])."""
    return linear_scan(b, name, module, x, states, lengths,
                       lambda hint, xw, chain: _terms(b, hint, module.kind, xw, module.hidden))
