"""MinGRU's and MinLSTM's unrolled nets, as data: a step is the chain's SCALE (h_conted =
cont_t x h_{t-1}) and the unit alone, MIN_GRU_UNIT or MIN_LSTM_UNIT of h_conted and the step's
input transform: the gates read the input alone, so a chain holds no recurrent weights (``W_xc``
and ``b_c`` only, filled as every chain's are). Pure Python."""
from __future__ import annotations

from designer.cells.minimal.spec import CELLS
from designer.engines.expansion.expand import Step, chain, draw_as

draw_as(*(cell.unit for cell in CELLS.values()))


@chain(*CELLS)
def _min_step(step: Step) -> None:
    step.unit(step.cell.unit, (step.h_conted, step.x), (step.h,))
