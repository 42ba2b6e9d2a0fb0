"""The sLSTM: xLSTM's scalar cell with exponential gating."""
from designer.cells.slstm import spec
from designer.graph import registry

registry.register(*spec.SPECS)
