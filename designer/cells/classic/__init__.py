"""LSTM, GRU, RNN and LSTMSimple: the classic recurrent cells."""
from designer.cells.classic import spec
from designer.graph import registry

registry.register(*spec.SPECS)
