"""The layer catalogue, one module per family."""
from . import activation, data, dense, embed, loss, recurrent, shape, unit

FAMILIES = (data, embed, recurrent, dense, shape, activation, loss, unit)
ALL_SPECS = tuple(s for family in FAMILIES for s in family.SPECS)
