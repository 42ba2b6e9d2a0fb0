"""The layer catalogue, one module per family; the recurrent layers are the cells'
(``designer/cells``), registered when the cells are loaded, as are the building blocks that
belong to a cell (a cell's unit as a layer of its own)."""
from designer.graph.layers import (activation, conv, data, dense, difference, embed, hydra, loss,
                                   norm, pooling, rocket, sequences, shape)

FAMILIES = (data, sequences, embed, conv, difference, rocket, hydra, dense, norm, shape,
            pooling, activation, loss)
ALL_SPECS = tuple(s for family in FAMILIES for s in family.SPECS)
