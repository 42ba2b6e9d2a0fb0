"""The sLSTM: xLSTM's scalar cell with exponential gating."""
from designer.cells.slstm import expansion, memory, spec  # noqa: F401  (expansion, memory: register)
from designer.graph import parts, registry

registry.register(*spec.SPECS)
parts.defer(parts.ENGINES, "designer.cells.slstm.engines")
parts.defer(parts.EXPORTS, "designer.cells.slstm.exports")
