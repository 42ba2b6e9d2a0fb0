"""The layer catalogue, one module per family."""
from designer.graph.layers import (activation, conv, data, dense, embed, loss, min_recurrent,
                                   mlstm, norm, pooling, recurrent, rocket, sequences, shape,
                                   slstm, unit)

FAMILIES = (data, sequences, embed, recurrent, min_recurrent, mlstm, slstm, conv, rocket, dense,
            norm, shape, pooling, activation, loss, unit)
ALL_SPECS = tuple(s for family in FAMILIES for s in family.SPECS)
