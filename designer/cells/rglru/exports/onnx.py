"""The RG-LRU in ONNX: an ONNX ``Scan`` per level and direction, or the unrolled units.

ONNX has no operator for this layer, so the export writes the recurrence the way the unrolled
engine runs it: the input transform once over all steps, a_t and b_t from it and the chain's
``Lambda`` (log a_t = -c sigmoid(r) softplus(-Λ), a_t = exp(log a_t), b_t = sqrt(1 - a_t^2)
sigmoid(i) u), then a ``Scan`` whose body is one step, ``h = a_t * h + b_t``
(:func:`designer.exchange.onnx_export.scan.linear_scan`, which also keeps the state over padding and
reads the backward direction reversed). ONNX has no expm1, so 1 - a_t^2 is written as
-tanh(log a_t) (1 + a_t^2), which keeps its precision as a_t nears 1 (expm1(x) = tanh(x / 2)
(e^x + 1)). ``Lambda`` is written as the layer holds it, so that an import reads it back.
``unit`` writes the RG_LRU_UNIT nodes of the unrolled net (``--unrolled``). T and N stay
dynamic.
"""
from __future__ import annotations

import numpy as np

from designer.cells.rglru.spec import CELL, KIND
from designer.exchange.onnx_export.ops import OnnxBuilder, tensor
from designer.exchange.onnx_export.recurrent import FUSED, NODES, UnrolledLayer
from designer.exchange.onnx_export.scan import linear_scan


def _terms(b: OnnxBuilder, hint: str, xw: str, lam: str, hidden: int) -> tuple[str, str]:
    """(a, b) of ``h = a * h_prev + b`` from the input transform ``xw`` (..., 3H) and the
    chain's ``lam`` (H)."""
    r, i, u = b.op("Split", [xw, b.ints(f"{hint}/blocks", [hidden] * len(CELL.gates))],
                   f"{hint}/block", outputs=len(CELL.gates), axis=-1)
    from designer.cells.rglru.arithmetic import C  # (torch: imported when written)
    decay = b.op("Softplus", [b.op("Neg", [lam], f"{hint}/minus_lambda")], f"{hint}/decay")
    rate = b.op("Mul", [b.op("Sigmoid", [r], f"{hint}/r"),
                        b.const(f"{hint}/minus_c", np.float32(-C))], f"{hint}/rate")
    log_a = b.op("Mul", [rate, decay], f"{hint}/log_a")
    a = b.op("Exp", [log_a], f"{hint}/a")
    one = b.const(f"{hint}/one", np.float32(1.0))
    room = b.op("Mul", [b.op("Neg", [b.op("Tanh", [log_a], f"{hint}/tanh_log_a")],
                             f"{hint}/minus_tanh"),
                        b.op("Add", [b.op("Mul", [a, a], f"{hint}/a_squared"), one],
                             f"{hint}/one_plus_a2")], f"{hint}/one_minus_a2")
    gated = b.op("Mul", [b.op("Sigmoid", [i], f"{hint}/i"), u], f"{hint}/i_u")
    return a, b.op("Mul", [b.op("Sqrt", [room], f"{hint}/norm"), gated], f"{hint}/b")


@NODES.register(CELL.unit)
def unit(layer: UnrolledLayer, node, hint: str, bot: list) -> list:
    """One unrolled step: RG_LRU_UNIT of h_conted and the step's xw, with the chain's Lambda."""
    b, (h_conted, x_lin) = layer.b, bot
    a, c = _terms(b, hint, x_lin, layer.weight(node.params["weights"][0]), layer.hidden)
    return [b.op("Add", [b.op("Mul", [a, h_conted], f"{hint}/ah"), c], hint)]


@FUSED.register(KIND)
def scan(b: OnnxBuilder, name: str, module, x: str, states: list[str], lengths=None):
    """The layer over time-major ``x`` (T, N, E) as Scan ops; returns (y, [final h])."""
    def terms(hint: str, xw: str, chain: str) -> tuple[str, str]:
        lam = b.const(f"{name}.Lambda_{chain}", tensor(getattr(module, f"Lambda_{chain}")))
        return _terms(b, hint, xw, lam, module.hidden)
    return linear_scan(b, name, module, x, states, lengths, terms)
