"""LSTM, GRU, RNN and LSTMSimple: the classic recurrent cells."""
from designer.cells.classic import expansion, memory, spec  # noqa: F401  (expansion, memory: register)
from designer.graph import parts, registry

registry.register(*spec.SPECS)
parts.defer(parts.ENGINES, "designer.cells.classic.engines")
parts.defer(parts.EXPORTS, "designer.cells.classic.exports")
