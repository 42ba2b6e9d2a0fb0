"""The ``MLSTM`` module an exported ``model.py`` holds for its mLSTM layers.

No ``torch.nn`` class computes the mLSTM, so the export writes one: the functions of the CHUNK
engine (:mod:`designer.cells.mlstm.arithmetic`, which imports torch and math alone) as they are,
read from it under the prefix ``mlstm`` (:mod:`designer.exchange.pytorch_export.copies`), and a small
module holding the same tensors as the designer's
layers (``W_xc_l{k}``, ``b_c_l{k}``). The exported net therefore computes what the CHUNK engine
does, operation for operation, whichever engine trained it (the CAFFE engine holds the same
tensors).
"""
from __future__ import annotations

from functools import partial

from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.copies import cell_source
from designer.exchange.pytorch_export.heads import head_cell
from designer.exchange.pytorch_export.snippets import CELL_HELPERS

MODULE = '''

class MLSTM(nn.Module):
    """An mLSTM layer (Beck et al., 2024, "xLSTM"): per level W_xc_l{k} ((4H + 2NH) x E,
    blocks [q, k, v, o, i, f]) and b_c_l{k}; ``forward(x, state=None, lengths=None)`` returns
    the output and the final state (C, n, m), each (num_layers, N, values): H*H/NH, H and NH
    values per sequence."""

    def __init__(self, input_size, hidden_size, num_heads=1, num_layers=1, dropout=0.0,
                 batch_first=False, forget_gate="sigmoid", cell_norm="head"):
        super().__init__()
        self.hidden_size, self.num_heads, self.num_layers = hidden_size, num_heads, num_layers
        self.dropout, self.batch_first, self.forget_gate = dropout, batch_first, forget_gate
        self.cell_norm = cell_norm  # "head": each head's read-out normalised; "none"
        for k in range(num_layers):
            e = input_size if k == 0 else hidden_size
            rows = 4 * hidden_size + 2 * num_heads
            self.register_parameter(f"W_xc_l{k}", nn.Parameter(torch.empty(rows, e)))
            self.register_parameter(f"b_c_l{k}", nn.Parameter(torch.zeros(rows)))

    def forward(self, x, state=None, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        if state is None:
            h, heads = self.hidden_size, self.num_heads
            state = tuple(x.new_zeros(self.num_layers, x.shape[1], size)
                          for size in (h * h // heads, h, heads))
        if lengths is not None:
            lengths = lengths.to(x.device, torch.int64)
        y, state = mlstm_layers(dict(self.named_parameters()), x, state, self.num_layers,
                                self.num_heads, self.forget_gate, lengths, self.dropout,
                                self.training, CHUNK, self.cell_norm)
        return (y.transpose(0, 1) if self.batch_first else y), state
'''


# the helper's text: the chunk length, the cell's functions, then ``MLSTM``
CELL_HELPERS["mlstm"] = partial(cell_source, "designer.cells.mlstm", "mlstm", MODULE)


@LAYERS.register("mLSTM")
def mlstm_recurrent(writer, name, var, layer, module, p, x, comment) -> str:
    """Write an mLSTM layer into ``writer`` (a ``pytorch_code`` writer): its ``MLSTM``
    attribute and weights; returns the expression of its call."""
    extra = [] if module.forget == "sigmoid" else [f"forget_gate={module.forget!r}"]
    if module.norm != "head":
        extra.append(f"cell_norm={module.norm!r}")
    return head_cell(writer, name, var, module, p, x, comment, "MLSTM", "mlstm",
                     ("CHUNK", "the chunkwise-parallel engine, which MLSTM runs"), extra)
