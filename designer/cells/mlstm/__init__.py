"""The mLSTM: xLSTM's matrix-memory cell."""
from designer.cells.mlstm import spec
from designer.graph import registry

registry.register(*spec.SPECS)
