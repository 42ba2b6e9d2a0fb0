"""The SCAN engine: a MinGRU or MinLSTM layer computed for all steps at once by a parallel scan.

The layer holds what its unrolled net holds (``W_xc_l{k}`` and ``b_c_l{k}`` per level, the
backward direction's suffixed ``_reverse``), so a checkpoint of either engine loads into the
other as it is. :func:`designer.cells.minimal.arithmetic.min_layers` does the arithmetic; this
module adds what every recurrent layer here takes: batch-first input, a carried state ``(h,)``
of shape ``(num_layers * directions, N, H)``, per-sequence ``lengths``, and ``cont``.

``cont`` (0: the sequence restarts at this step) multiplies the state, which the scan cannot
do inside the logarithm: as on the cuDNN engine, the call is split at the steps where some
sequence restarts (found on the host, so such a step cannot be captured in a CUDA graph) and
the state is multiplied by ``cont`` between the pieces; a restart at a padded step changes
nothing.
"""
from __future__ import annotations

import torch
from torch import nn

from designer.cells.minimal.arithmetic import SCAN_CHUNK, min_layers
from designer.cells.minimal.spec import CELLS
from designer.engines.net.builders import BuildContext, build_unrolled, builder
from designer.engines.tensors.fillers import fill_bias, fill_weight
from designer.engines.tensors.recurrent_state import (between_resets, check_lengths, time_major,
                                                      zero_state)

GATES = {kind: len(cell.gates) for kind, cell in CELLS.items()}
SUFFIXES = ("", "_reverse")


def add_min_weights(module: nn.Module, gates: int, input_size: int, hidden: int, levels: int,
                    directions: int) -> None:
    """Register ``W_xc_l{k}{s}`` (G*H x E) and ``b_c_l{k}{s}`` (G*H) on ``module``."""
    for k in range(levels):
        e = input_size if k == 0 else directions * hidden
        for s in SUFFIXES[:directions]:
            module.register_parameter(f"W_xc_l{k}{s}",
                                      nn.Parameter(torch.empty(gates * hidden, e)))
            module.register_parameter(f"b_c_l{k}{s}", nn.Parameter(torch.zeros(gates * hidden)))


class ScanRecurrent(nn.Module):
    """A MinGRU or MinLSTM layer on the SCAN engine."""

    engine_name = "SCAN"

    def __init__(self, kind: str, input_size: int, hidden: int, levels: int = 1,
                 dropout: float = 0.0, batch_first: bool = False, bidirectional: bool = False,
                 name: str = "rnn"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = kind, hidden, levels, batch_first
        self.input_size, self.dropout, self.name = input_size, dropout, name
        self.directions = 2 if bidirectional else 1
        self.state_layers = levels * self.directions
        self.chunk = SCAN_CHUNK
        self.method = None  # the chunks in log space or step by step: by device (arithmetic)
        add_min_weights(self, GATES[kind], input_size, hidden, levels, self.directions)

    @classmethod
    def from_params(cls, kind: str, input_size: int, p: dict, name: str = "rnn"):
        m = cls(kind, input_size, p["num_output"], p.get("num_layers", 1),
                p.get("dropout_ratio", 0.0), p.get("batch_first", False),
                p.get("bidirectional", False), name)
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0))
        return m

    def reset_parameters(self, filler: str, bias: float) -> None:
        """Fill the weights as the unrolled engine does (the same draws, in the same order)."""
        filler = "uniform" if filler == "torch_default" else filler
        for k in range(self.levels):
            for s in SUFFIXES[:self.directions]:
                fill_weight(getattr(self, f"W_xc_l{k}{s}"), filler, self.hidden,
                            GATES[self.kind])
                fill_bias(getattr(self, f"b_c_l{k}{s}"), bias)

    def _run(self, x, h, lengths):
        return min_layers(self.kind, self._parameters, x, h, self.levels, self.directions,
                          lengths, self.dropout, self.training, self.chunk, self.method)

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        has_state = state is not None
        h = (state if has_state else zero_state(self.kind, self.state_layers, n, self.hidden,
                                                x))[0]
        lens = None
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            lens = lengths.to(x.device, torch.int64)
        y, h = between_resets(self._run, x, h, cont, lens, has_state, "the parallel scan")
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, (h,)

    def capture_blocker(self, cont: bool, lengths: bool, carries_state: bool) -> str | None:
        """Why a CUDA graph could not hold a step that feeds this layer ``cont`` (``None``:
        it can): the resets are found on the host."""
        if cont:
            return "runs the parallel scan with a 'cont' input, whose resets are found on the host"
        return None

    def extra_repr(self) -> str:
        both = ", bidirectional" if self.directions == 2 else ""
        return (f"{self.kind}, {self.input_size} -> {self.hidden}, levels={self.levels}{both}, "
                f"engine=SCAN (parallel scan)")


@builder(*CELLS)
def build(ctx: BuildContext) -> nn.Module:
    """SCAN: the parallel scan; CAFFE: the unrolled net (both hold the same tensors)."""
    if ctx.params.get("engine", CELLS[ctx.layer.type].engines[0]) == "CAFFE":
        return build_unrolled(ctx)
    return ScanRecurrent.from_params(ctx.layer.type, ctx.input_size(), ctx.params,
                                     name=ctx.name)
