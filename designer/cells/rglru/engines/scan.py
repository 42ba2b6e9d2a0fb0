"""The SCAN engine: an RG-LRU layer computed for all steps at once by the linear scan.

The layer holds what its unrolled net holds (``W_xc_l{k}``, ``b_c_l{k}`` and ``Lambda_l{k}``
per level, the backward direction's suffixed ``_reverse``), so a checkpoint of either engine
loads into the other as it is. :func:`designer.cells.rglru.arithmetic.rglru_layers` does the
arithmetic; this module adds what every recurrent layer here takes: batch-first input, a
carried state ``(h,)`` of shape ``(num_layers * directions, N, H)``, per-sequence ``lengths``,
and ``cont``, which multiplies the state between the pieces of the call split where some
sequence restarts (:func:`designer.engines.tensors.recurrent_state.between_resets`: found on
the host, so such a step cannot be captured in a CUDA graph).
"""
from __future__ import annotations

import torch
from torch import nn

from designer.cells.rglru.arithmetic import SCAN_CHUNK, rglru_layers
from designer.cells.rglru.engines.unrolled import SUFFIXES, fill
from designer.cells.rglru.spec import CELL, KIND
from designer.engines.net.builders import BuildContext, build_unrolled, builder
from designer.engines.tensors.recurrent_state import (between_resets, check_lengths,
                                                      time_major, zero_state)

WORDS = "the linear scan"


class ScanRGLRU(nn.Module):
    """An RG-LRU layer on the SCAN engine."""

    engine_name = "SCAN"

    def __init__(self, input_size: int, hidden: int, levels: int = 1, dropout: float = 0.0,
                 batch_first: bool = False, bidirectional: bool = False, name: str = "rnn"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = KIND, hidden, levels, batch_first
        self.input_size, self.dropout, self.name = input_size, dropout, name
        self.directions = 2 if bidirectional else 1
        self.state_layers = levels * self.directions
        self.chunk = SCAN_CHUNK
        rows = len(CELL.gates) * hidden
        for k in range(levels):  # in the unrolled net's order: W_xc, b_c, Lambda per chain
            e = input_size if k == 0 else self.directions * hidden
            for s in SUFFIXES[:self.directions]:
                self.register_parameter(f"W_xc_l{k}{s}", nn.Parameter(torch.empty(rows, e)))
                self.register_parameter(f"b_c_l{k}{s}", nn.Parameter(torch.zeros(rows)))
                self.register_parameter(f"Lambda_l{k}{s}", nn.Parameter(torch.zeros(hidden)))

    @classmethod
    def from_params(cls, input_size: int, p: dict, name: str = "rnn"):
        m = cls(input_size, p["num_output"], p.get("num_layers", 1), p.get("dropout_ratio", 0.0),
                p.get("batch_first", False), p.get("bidirectional", False), name)
        m.reset_parameters(p.get("weight_filler", "uniform"), p.get("bias_filler", 0.0))
        return m

    def reset_parameters(self, filler: str, bias: float) -> None:
        """Fill the tensors as the unrolled engine does (the same draws, in the same order)."""
        fill(self, {"weight_filler": filler, "bias_filler": bias})

    def _run(self, x, h, lengths):
        return rglru_layers(self._parameters, x, h, self.levels, self.directions, lengths,
                            self.dropout, self.training, self.chunk)

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        has_state = state is not None
        h = (state if has_state else zero_state(KIND, self.state_layers, n, self.hidden, x))[0]
        lens = None
        if lengths is not None:
            check_lengths(lengths, t_, n, self.name)
            lens = lengths.to(x.device, torch.int64)
        y, h = between_resets(self._run, x, h, cont, lens, has_state, WORDS)
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, (h,)

    def capture_blocker(self, cont: bool, lengths: bool, carries_state: bool) -> str | None:
        """Why a CUDA graph could not hold a step that feeds this layer ``cont`` (``None``:
        it can): the resets are found on the host."""
        if cont:
            return f"runs {WORDS} with a 'cont' input, whose resets are found on the host"
        return None

    def extra_repr(self) -> str:
        both = ", bidirectional" if self.directions == 2 else ""
        return (f"{KIND}, {self.input_size} -> {self.hidden}, levels={self.levels}{both}, "
                f"engine=SCAN ({WORDS}, chunks of {self.chunk} steps)")


@builder(KIND)
def build(ctx: BuildContext) -> nn.Module:
    """SCAN: the linear scan; CAFFE: the unrolled net (both hold the same tensors)."""
    if ctx.params.get("engine", CELL.engines[0]) == "CAFFE":
        return build_unrolled(ctx)
    return ScanRGLRU.from_params(ctx.input_size(), ctx.params, name=ctx.name)
