"""The RG-LRU's unrolled net, as data: a step is the chain's SCALE (h_conted = cont_t x h_{t-1})
and the unit alone, an RG_LRU_UNIT of h_conted and the step's input transform, which reads the
chain's ``Lambda`` (its decays): the gates read the input alone, so a chain holds no recurrent
matrix, only ``W_xc`` (3H x E) and ``b_c``, filled as every chain's are, and ``Lambda`` (H).
Pure Python."""
from __future__ import annotations

from designer.cells.rglru.spec import CELL, KIND
from designer.engines.expansion.expand import Step, chain, draw_as

draw_as(CELL.unit)


def _decays(params: dict, hidden: int, rows: int) -> dict:
    return {"Lambda": (hidden,)}


@chain(KIND, weights=_decays)
def _rglru_step(step: Step) -> None:
    step.unit(CELL.unit, (step.h_conted, step.x), (step.h,),
              {"weights": (step.weight("Lambda"),)})
