"""The ``RGLRU`` module an exported ``model.py`` holds for its RG-LRU layers.

No ``torch.nn`` class computes this layer, so the export writes one: the functions of the SCAN
engine (:mod:`designer.cells.rglru.arithmetic`, which imports torch alone, and the linear scan
it calls) as they are, read from it under the prefix ``rglru``
(:mod:`designer.exchange.pytorch_export.copies`), and a small module holding the same tensors as the
designer's layers (``W_xc_l{k}``, ``b_c_l{k}``, ``Lambda_l{k}``, ``..._reverse``). The
exported net therefore computes what the SCAN engine does, operation for operation.
"""
from __future__ import annotations

from functools import partial

from designer.cells.rglru.spec import KIND
from designer.exchange.pytorch_export.copies import cell_source
from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.recurrent import write_cell_layer
from designer.exchange.pytorch_export.snippets import CELL_HELPERS

MODULE = '''

class RGLRU(nn.Module):
    """An RG-LRU layer (De et al., 2024, "Griffin"): per level and direction W_xc_l{k}
    (3H x E, blocks [r, i, u]), b_c_l{k} and Lambda_l{k} (H); ``forward(x, h0=None,
    lengths=None)`` returns the output and the final h, (num_layers * directions, N, H)."""

    def __init__(self, input_size, hidden_size, num_layers=1, dropout=0.0, batch_first=False,
                 bidirectional=False):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.dropout, self.batch_first = dropout, batch_first
        self.directions = 2 if bidirectional else 1
        for k in range(num_layers):
            e = input_size if k == 0 else self.directions * hidden_size
            for s in ("", "_reverse")[:self.directions]:
                self.register_parameter(f"W_xc_l{k}{s}",
                                        nn.Parameter(torch.empty(3 * hidden_size, e)))
                self.register_parameter(f"b_c_l{k}{s}",
                                        nn.Parameter(torch.zeros(3 * hidden_size)))
                self.register_parameter(f"Lambda_l{k}{s}",
                                        nn.Parameter(torch.zeros(hidden_size)))

    def forward(self, x, h0=None, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        if h0 is None:
            h0 = x.new_zeros(self.num_layers * self.directions, x.shape[1], self.hidden_size)
        if lengths is not None:
            lengths = lengths.to(x.device, torch.int64)
        y, h = rglru_layers(dict(self.named_parameters()), x, h0, self.num_layers,
                            self.directions, lengths, self.dropout, self.training)
        return (y.transpose(0, 1) if self.batch_first else y), h
'''


# the helper's text: the scan's functions, the cell's, then ``RGLRU``
CELL_HELPERS["rglru"] = partial(cell_source, "designer.cells.rglru", "rglru", MODULE)


@LAYERS.register(KIND)
def rglru_layer(writer, name, var, layer, module, p, x, comment) -> str:
    """Write an RG-LRU layer into ``writer`` (a ``pytorch_code`` writer): its ``RGLRU``
    attribute and weights; returns the expression of its call."""
    return write_cell_layer(writer, name, var, module, p, x, comment, cls="RGLRU",
                            helper="rglru", fused="the linear scan", first=())
