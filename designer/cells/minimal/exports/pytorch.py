"""The ``MinRNN`` module an exported ``model.py`` holds for its MinGRU and MinLSTM layers.

No ``torch.nn`` class computes these layers, so the export writes one: the functions of the
parallel-scan engine (:mod:`designer.cells.minimal.arithmetic`, which imports torch alone) as
they are, read from it under the prefix ``min`` (:mod:`designer.exchange.pytorch_export.copies`), and a
small module holding the same tensors as the designer's layers (``W_xc_l{k}``, ``b_c_l{k}``,
``..._reverse``). The exported net therefore computes what the SCAN engine does, operation for
operation.
"""
from __future__ import annotations

from functools import partial

from designer.cells.minimal.spec import CELLS
from designer.exchange.pytorch_export.copies import cell_source
from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.recurrent import write_cell_layer
from designer.exchange.pytorch_export.snippets import CELL_HELPERS

MODULE = '''

class MinRNN(nn.Module):
    """A MinGRU or MinLSTM layer (Feng et al., 2024, "Were RNNs All We Needed?"): per level
    and direction W_xc_l{k} (G*H x E) and b_c_l{k}, blocks [z, h] (MinGRU) or [f, i, h]
    (MinLSTM); ``forward(x, h0=None, lengths=None)`` returns the output and the final h,
    (num_layers * directions, N, H)."""

    def __init__(self, kind, input_size, hidden_size, num_layers=1, dropout=0.0,
                 batch_first=False, bidirectional=False):
        super().__init__()
        self.kind, self.hidden_size, self.num_layers = kind, hidden_size, num_layers
        self.dropout, self.batch_first = dropout, batch_first
        self.directions = 2 if bidirectional else 1
        gates = 2 if kind == "MinGRU" else 3
        for k in range(num_layers):
            e = input_size if k == 0 else self.directions * hidden_size
            for s in ("", "_reverse")[:self.directions]:
                self.register_parameter(f"W_xc_l{k}{s}",
                                        nn.Parameter(torch.empty(gates * hidden_size, e)))
                self.register_parameter(f"b_c_l{k}{s}",
                                        nn.Parameter(torch.zeros(gates * hidden_size)))

    def forward(self, x, h0=None, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        if h0 is None:
            h0 = x.new_zeros(self.num_layers * self.directions, x.shape[1], self.hidden_size)
        if lengths is not None:
            lengths = lengths.to(x.device, torch.int64)
        y, h = min_layers(self.kind, dict(self.named_parameters()), x, h0, self.num_layers,
                          self.directions, lengths, self.dropout, self.training)
        return (y.transpose(0, 1) if self.batch_first else y), h
'''


# the helper's text: the scan's constant and functions, then ``MinRNN``
CELL_HELPERS["min_rnn"] = partial(cell_source, "designer.cells.minimal", "min", MODULE)


@LAYERS.register(*CELLS)
def min_recurrent(writer, name, var, layer, module, p, x, comment) -> str:
    """Write a MinGRU or MinLSTM layer into ``writer`` (a ``pytorch_code`` writer): its
    ``MinRNN`` attribute and weights; returns the expression of its call."""
    return write_cell_layer(writer, name, var, module, p, x, comment, cls="MinRNN",
                            helper="min_rnn", fused="the parallel scan", first=(repr(layer.type),))
