"""The sLSTM's unrolled net on torch: the HEAD_INNER_PRODUCT and SLSTM_UNIT ops and how a
chain's tensors are filled, as the FUSED engine fills them
(:func:`designer.cells.slstm.engines.fused.fill_slstm`: the same draws). Its nodes:
:mod:`designer.cells.slstm.expansion`.
"""
from __future__ import annotations

from designer.engines.unrolled import fills, unit_op
from designer.cells.slstm.arithmetic import head_matmul, slstm_unit
from designer.cells.slstm.engines.fused import fill_slstm
from designer.cells.slstm.spec import CELL


@unit_op("HEAD_INNER_PRODUCT")
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
