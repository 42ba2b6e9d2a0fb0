"""The layer catalogue, one module per family."""
from . import activation, data, dense, embed, loss, recurrent, sequences, shape, unit

FAMILIES = (data, sequences, embed, recurrent, dense, shape, activation, loss, unit)
ALL_SPECS = tuple(s for family in FAMILIES for s in family.SPECS)
