"""MinGRU and MinLSTM: recurrent cells whose gates read only the input."""
from designer.cells.minimal import expansion, checks, memory, spec  # noqa: F401  (checks, memory: register)
from designer.graph import parts, registry

registry.register(*spec.SPECS)
parts.defer(parts.ENGINES, "designer.cells.minimal.engines")
parts.defer(parts.EXPORTS, "designer.cells.minimal.exports")
