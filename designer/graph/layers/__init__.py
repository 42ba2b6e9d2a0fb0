"""The layer catalogue, one module per family; the recurrent layers are the cells'
(``designer/cells``), registered when the cells are loaded."""
from designer.graph.layers import (activation, conv, data, dense, embed, loss, norm, pooling,
                                   rocket, sequences, shape, unit)

FAMILIES = (data, sequences, embed, conv, rocket, dense, norm, shape, pooling, activation, loss,
            unit)
ALL_SPECS = tuple(s for family in FAMILIES for s in family.SPECS)
