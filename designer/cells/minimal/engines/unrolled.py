"""MinGRU's and MinLSTM's unrolled nets: a step is the chain's SCALE (h_conted = cont_t x
h_{t-1}) and the unit alone, MIN_GRU_UNIT or MIN_LSTM_UNIT of h_conted and the step's input
transform: the gates read the input alone, so a chain holds no recurrent weights (``W_xc`` and
``b_c`` only, filled as every chain's are)."""
from __future__ import annotations

from designer.engines.expansion import Step, chain
from designer.engines.unrolled import unit_op
from designer.cells.minimal.arithmetic import min_unit
from designer.cells.minimal.spec import CELLS

KIND_OF_UNIT = {cell.unit: kind for kind, cell in CELLS.items()}


@chain(*CELLS)
def _min_step(step: Step) -> None:
    step.unit(step.cell.unit, (step.h_conted, step.x), (step.h,))


@unit_op(*KIND_OF_UNIT)
def _min_unit(node, b: list, run) -> tuple:
    return (min_unit(KIND_OF_UNIT[node.type], *b),)
