"""MinGRU's and MinLSTM's units on torch, for the reference executor (their nodes:
:mod:`designer.cells.minimal.expansion`)."""
from __future__ import annotations

from designer.engines.unrolled import unit_op
from designer.cells.minimal.arithmetic import min_unit
from designer.cells.minimal.spec import CELLS

KIND_OF_UNIT = {cell.unit: kind for kind, cell in CELLS.items()}


@unit_op(*KIND_OF_UNIT)
def _min_unit(node, b: list, run) -> tuple:
    return (min_unit(KIND_OF_UNIT[node.type], *b),)
