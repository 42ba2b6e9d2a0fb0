"""The sLSTM's unrolled net, as data (pure Python): per step, after the chain's SCALE (h_conted = cont_t x h_{t-1}),
HEAD_INNER_PRODUCT (W_hc, one (4d x d) block per head, times h_conted), ELTWISE (+ the step's
input transform) and SLSTM_UNIT, which reads the cell c, normaliser n and stabiliser m the step
found and its cont (zeroing them as LSTM_UNIT zeroes c) and gives the new c, n, m and h.

A chain holds ``W_xc`` (4H x E), ``b_c`` and ``W_hc`` (heads x 4d x d), filled as the FUSED
engine fills them.
"""
from __future__ import annotations

from designer.cells.slstm.spec import CELL
from designer.engines.expansion.expand import Step, chain, draw_as

draw_as(CELL.unit)
draw_as("HEAD_INNER_PRODUCT", like="INNER_PRODUCT")


def _weights(params: dict, hidden: int, rows: int) -> dict:
    heads = params.get("num_heads", 1)
    return {"W_hc": (heads, rows // heads, hidden // heads)}


@chain("sLSTM", weights=_weights)
def _slstm_step(step: Step) -> None:
    pre = step.sum(step.product("HEAD_INNER_PRODUCT"))
    step.unit(step.cell.unit, step.found + (pre, step.cont), step.made + (step.h,),
              {"forget_gate": step.params.get("forget_gate", "sigmoid")})
