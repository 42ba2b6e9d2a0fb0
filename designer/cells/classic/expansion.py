"""The classic cells' unrolled nets, as data: the nodes of one step (pure Python).

Per step, after the chain's SCALE (h_conted = cont_t x h_{t-1}):

- LSTM and LSTMSimple: INNER_PRODUCT (W_hc x h_conted), ELTWISE sum with the step's input
  transform, LSTM_UNIT (c, gates [i, f, o, g], cont) -> (c, h);
- GRU: INNER_PRODUCT (W_hc x h_conted + b_hc), GRU_UNIT (h_conted, that, the step's input
  transform, gates [r, z, n]) -> h;
- RNN: INNER_PRODUCT, ELTWISE, then TANH or RELU (its ``nonlinearity``).

Each chain holds ``W_xc`` and ``b_c`` (the input transform), ``W_hc`` (G x H) and, for the GRU,
``b_hc`` (G): the recurrent bias its reset gate multiplies.
"""
from __future__ import annotations

from designer.cells.classic.spec import CELLS
from designer.engines.expansion.expand import Step, chain, draw_as

draw_as(CELLS["LSTM"].unit, CELLS["GRU"].unit)


def _w_hc(params: dict, hidden: int, rows: int) -> dict:
    return {"W_hc": (rows, hidden)}


def _w_hc_b_hc(params: dict, hidden: int, rows: int) -> dict:
    return {"W_hc": (rows, hidden), "b_hc": (rows,)}


@chain("LSTM", "LSTMSimple", weights=_w_hc)
def _lstm_step(step: Step) -> None:
    gates = step.sum(step.product())
    step.unit(step.cell.unit, step.found + (gates, step.cont), step.made + (step.h,))


@chain("GRU", weights=_w_hc_b_hc)
def _gru_step(step: Step) -> None:
    recurrent = step.product(weights=("W_hc", "b_hc"))
    step.unit(step.cell.unit, (step.h_conted, recurrent, step.x), (step.h,))


@chain("RNN", weights=_w_hc)
def _rnn_step(step: Step) -> None:
    unit = "RELU" if step.params.get("nonlinearity") == "relu" else "TANH"
    step.unit(unit, (step.sum(step.product()),), (step.h,))
