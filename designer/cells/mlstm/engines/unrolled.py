"""The mLSTM's MLSTM_UNIT op on torch, for the reference executor (its unrolled net:
:mod:`designer.cells.mlstm.expansion`)."""
from __future__ import annotations

from designer.cells.mlstm.arithmetic import mlstm_unit
from designer.cells.mlstm.spec import CELL
from designer.engines.unrolled import unit_op


@unit_op(CELL.unit)
def _mlstm_unit(node, b: list, run) -> tuple:
    """(C, n, m, the step's input transform, cont) -> (C, n, m, h)."""
    return mlstm_unit(*b, **node.params)
