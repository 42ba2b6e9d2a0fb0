"""The mLSTM: xLSTM's matrix-memory cell."""
from designer.cells.mlstm import expansion, memory, spec  # noqa: F401  (expansion, memory: register)
from designer.graph import parts, registry

registry.register(*spec.SPECS)
parts.defer(parts.ENGINES, "designer.cells.mlstm.engines")
parts.defer(parts.EXPORTS, "designer.cells.mlstm.exports")
