"""The sLSTM's unrolled net: per step, after the chain's SCALE (h_conted = cont_t x h_{t-1}),
HEAD_INNER_PRODUCT (W_hc, one (4d x d) block per head, times h_conted), ELTWISE (+ the step's
input transform) and SLSTM_UNIT, which reads the cell c, normaliser n and stabiliser m the step
found and its cont (zeroing them as LSTM_UNIT zeroes c) and gives the new c, n, m and h.

A chain holds ``W_xc`` (4H x E), ``b_c`` and ``W_hc`` (heads x 4d x d), filled as the FUSED
engine fills them (:func:`designer.cells.slstm.engines.fused.fill_slstm`: the same draws).
"""
from __future__ import annotations

from designer.engines.expansion import Step, chain
from designer.engines.unrolled import fills, unit_op
from designer.cells.slstm.arithmetic import head_matmul, slstm_unit
from designer.cells.slstm.engines.fused import fill_slstm
from designer.cells.slstm.spec import CELL


def _weights(params: dict, hidden: int, rows: int) -> dict:
    heads = params.get("num_heads", 1)
    return {"W_hc": (heads, rows // heads, hidden // heads)}


@chain("sLSTM", weights=_weights)
def _slstm_step(step: Step) -> None:
    pre = step.sum(step.product("HEAD_INNER_PRODUCT"))
    step.unit(step.cell.unit, step.found + (pre, step.cont), step.made + (step.h,),
              {"forget_gate": step.params.get("forget_gate", "sigmoid")})


@unit_op("HEAD_INNER_PRODUCT", drawn_as="INNER_PRODUCT")
def _head_inner_product(node, b: list, run) -> tuple:
    return (head_matmul(b[0], run.weight(node.params["weights"][0])),)


@unit_op(CELL.unit)
def _slstm_unit(node, b: list, run) -> tuple:
    """(c, n, m, pre-activations, cont) -> (c, n, m, h)."""
    keep = b[4].unsqueeze(-1)
    h_t, c_t, n_t, m_t = slstm_unit(b[3], b[0] * keep, b[1] * keep, b[2] * keep,
                                    node.params["forget_gate"] == "exp")
    return c_t, n_t, m_t, h_t


@fills("sLSTM")
def _fill(module, params: dict) -> None:
    fill_slstm(module, params.get("weight_filler", "uniform"), params.get("bias_filler", 0.0),
               params.get("forget_bias", "constant"))
