"""The ``SLSTM`` module an exported ``model.py`` holds for its sLSTM layers.

No ``torch.nn`` class computes the sLSTM, so the export writes one: the functions of the FUSED
engine (:mod:`designer.cells.slstm.arithmetic`, which imports torch alone) as they are, read
from it under the prefix ``slstm`` (:mod:`designer.exchange.pytorch_export.copies`), and a small module
holding the same tensors as the designer's layers (``W_xc_l{k}``, ``b_c_l{k}``, ``W_hc_l{k}``,
``..._reverse``). The exported net therefore computes what the FUSED engine does, operation for
operation.
"""
from __future__ import annotations

from functools import partial

from designer.exchange.pytorch_export.layers import LAYERS
from designer.exchange.pytorch_export.copies import cell_source
from designer.exchange.pytorch_export.heads import head_cell
from designer.exchange.pytorch_export.snippets import CELL_HELPERS

MODULE = '''

class SLSTM(nn.Module):
    """An sLSTM layer (Beck et al., 2024, "xLSTM"): per level and direction W_xc_l{k}
    (4H x E, gate blocks [i, f, z, o]), b_c_l{k} and W_hc_l{k} (heads x 4d x d, one recurrent
    block per head); ``forward(x, state=None, lengths=None)`` returns the output and the final
    state (h, c, n, m), each (num_layers * directions, N, H)."""

    def __init__(self, input_size, hidden_size, num_heads=1, num_layers=1, dropout=0.0,
                 batch_first=False, bidirectional=False, forget_gate="sigmoid"):
        super().__init__()
        self.hidden_size, self.num_layers, self.dropout = hidden_size, num_layers, dropout
        self.batch_first, self.forget_gate = batch_first, forget_gate
        self.directions = 2 if bidirectional else 1
        d = hidden_size // num_heads
        for k in range(num_layers):
            e = input_size if k == 0 else self.directions * hidden_size
            for s in ("", "_reverse")[:self.directions]:
                self.register_parameter(f"W_xc_l{k}{s}",
                                        nn.Parameter(torch.empty(4 * hidden_size, e)))
                self.register_parameter(f"b_c_l{k}{s}",
                                        nn.Parameter(torch.zeros(4 * hidden_size)))
                self.register_parameter(f"W_hc_l{k}{s}",
                                        nn.Parameter(torch.empty(num_heads, 4 * d, d)))

    def forward(self, x, state=None, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        if state is None:
            state = tuple(x.new_zeros(self.num_layers * self.directions, x.shape[1],
                                      self.hidden_size) for _ in range(4))
        if lengths is not None:
            lengths = lengths.to(x.device, torch.int64)
        y, state = slstm_layers(dict(self.named_parameters()), x, state, self.num_layers,
                                self.directions, None, lengths, self.dropout, self.training,
                                self.forget_gate == "exp")
        return (y.transpose(0, 1) if self.batch_first else y), state
'''


# the helper's text: the cell's functions, then ``SLSTM``
CELL_HELPERS["slstm"] = partial(cell_source, "designer.cells.slstm", "slstm", MODULE)


@LAYERS.register("sLSTM")
def slstm_recurrent(writer, name, var, layer, module, p, x, comment) -> str:
    """Write an sLSTM layer into ``writer`` (a ``pytorch_code`` writer): its ``SLSTM``
    attribute and weights; returns the expression of its call."""
    extra = ["bidirectional=True"] * bool(p.get("bidirectional"))
    if module.forget_gate != "sigmoid":
        extra.append(f"forget_gate={module.forget_gate!r}")
    return head_cell(writer, name, var, module, p, x, comment, "SLSTM", "slstm",
                     ("FUSED", "the fused engine, which SLSTM runs"), extra)
