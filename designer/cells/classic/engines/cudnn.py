"""The CUDNN engine: LSTM, GRU and RNN layers as one fused ``torch.nn`` call.

All ``num_layers`` (and both directions of a bidirectional layer) run in a single call (cuDNN on
a GPU, oneDNN on the CPU) with dropout between layers. The ``cont`` input (0 = the sequence
restarts here) is honoured exactly: the fused call is split at the steps where some sequence
restarts, and the state of those sequences is multiplied by ``cont`` before the next piece, which
is what the unrolled net's SCALE layers do.

``lengths`` (each sequence's valid steps, padding at the end) runs the call on a packed sequence
(``pack_padded_sequence``, unsorted): padded steps give zero outputs and no gradient, the final
state is each sequence's state after its last valid step (the backward direction's: after step
0), and a ``cont`` at a padded step is ignored. A length of 0 leaves that sequence's state as it
came in. Packing needs the lengths on the host, so a training step that packs cannot be captured
in a CUDA graph. A training step on a GPU that carries no state (no state in, none kept: a
classifier's) takes a second path instead, which needs nothing from the host: the padded batch
run as it is, padded steps' outputs zeroed by a mask, and the backward direction reading each
sequence reversed within its own length (``masked``). It gives the same outputs, ``h``
and gradients; an LSTM's final ``c`` is NaN there, since the step throws the state away.

State, for both engines: LSTM ``(h, c)``, GRU and RNN ``(h,)``, each ``(num_layers * D, N, H)``
with D = 2 directions for a bidirectional layer (index ``2 * layer + direction``, as torch).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from designer.cells.classic.engines.masked import run_masked, usable
from designer.cells.classic.spec import CELLS
from designer.engines.tensors.fillers import fill_bias, fill_weight
from designer.engines.tensors.recurrent_state import (CaptureUnsupported, capturing, check_lengths,
                                              reset_points, time_major, zero_state)

DIRECTION_SUFFIXES = ("", "_reverse")  # torch's parameter names: weight_ih_l0_reverse
TORCH_CLASSES = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}
_CELLS = {"LSTM": torch.lstm_cell, "GRU": torch.gru_cell, "RNN_tanh": torch.rnn_tanh_cell,
          "RNN_relu": torch.rnn_relu_cell}
ENGINE = "the cuDNN engine"


def host_lengths(lengths: torch.Tensor, steps: int, batch: int, name: str) -> torch.Tensor:
    """The checked lengths as a CPU int64 tensor (what packing needs)."""
    if capturing(lengths):
        raise CaptureUnsupported(f"{ENGINE} packs sequences by lengths read on the host")
    check_lengths(lengths, steps, batch, name)
    return lengths.to("cpu", torch.int64)


class CudnnRecurrent(nn.Module):
    """``torch.nn.LSTM``/``GRU``/``RNN`` with Caffe's continuation input and padded lengths."""

    engine_name = "CUDNN"

    def __init__(self, kind: str, input_size: int, hidden: int, levels: int, dropout: float,
                 batch_first: bool, nonlinearity: str = "tanh", bidirectional: bool = False,
                 name: str = "rnn"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = kind, hidden, levels, batch_first
        self.input_size, self.directions, self.name = input_size, (2 if bidirectional else 1), name
        self.state_layers = levels * self.directions
        extra = {"nonlinearity": nonlinearity} if kind == "RNN" else {}
        self.rnn = TORCH_CLASSES[kind](input_size, hidden, levels, dropout=dropout,
                                       bidirectional=bidirectional, **extra)
        self._weight_names = [(f"weight_ih_l{k}", f"weight_hh_l{k}", f"bias_ih_l{k}",
                               f"bias_hh_l{k}") for k in range(levels)]
        # set by ``TrainStep`` while it runs a step that throws the final state away: padded
        # lengths may then run on the device (``masked``) rather than packed
        self.state_discarded = False

    @classmethod
    def from_params(cls, kind: str, input_size: int, p: dict, name: str = "rnn"):
        """The layer a ``kind`` layer's resolved parameters ``p`` describe, filled."""
        m = cls(kind, input_size, p["num_output"], p["num_layers"], p["dropout_ratio"],
                p["batch_first"], p.get("nonlinearity", "tanh"), p.get("bidirectional", False),
                name)
        m.reset_parameters(p["weight_filler"], p["bias_filler"])
        return m

    def reset_parameters(self, filler: str, bias: float) -> None:
        """Fill the weights by ``filler`` (``torch_default``: torch's own stay), each gate
        block apart, and the biases as the Caffe net has its one: all of ``bias`` in
        ``bias_ih``, ``bias_hh`` zero."""
        if filler == "torch_default":
            return
        g = len(CELLS[self.kind].gates)
        for k in range(self.levels):
            for sfx in DIRECTION_SUFFIXES[:self.directions]:
                fill_weight(getattr(self.rnn, f"weight_ih_l{k}{sfx}"), filler, self.hidden, g)
                fill_weight(getattr(self.rnn, f"weight_hh_l{k}{sfx}"), filler, self.hidden, g)
                fill_bias(getattr(self.rnn, f"bias_ih_l{k}{sfx}"), bias)
                fill_bias(getattr(self.rnn, f"bias_hh_l{k}{sfx}"), 0.0)

    def capture_blocker(self, cont: bool, lengths: bool, carries_state: bool) -> str | None:
        """Why a CUDA graph could not hold a step that feeds this layer ``cont`` or
        ``lengths`` (``None``: it can): packing and resets are found on the host."""
        if lengths and carries_state:
            return ("runs on cuDNN with a 'lengths' input: packing the padded sequences needs "
                    "the lengths on the host")
        if cont:
            return "runs on cuDNN with a 'cont' input, whose resets are found on the host"
        return None

    def _run(self, x, state):
        if isinstance(x, torch.Tensor) and not x.is_cuda and x.shape[0] <= 4 and \
                not torch.is_grad_enabled():
            # a few steps of generation: oneDNN sets up a primitive per call (about 4 ms on a
            # small CPU) and torch's fused call is slow for a batch of streams; torch's cell
            # kernels, level by level, are many times quicker
            if self.directions == 1:
                return self._cells(x, state)
            before = torch.backends.mkldnn.enabled
            torch.backends.mkldnn.enabled = False
            try:
                return self._call(x, state)
            finally:
                torch.backends.mkldnn.enabled = before
        return self._call(x, state)

    def _cells(self, x, state):
        """The same layers, one step and one level at a time with torch's RNN cell kernels
        (the functions ``torch.nn.LSTMCell``/``GRUCell``/``RNNCell`` call)."""
        hs, cs = list(state[0].unbind(0)), (list(state[1].unbind(0)) if self.kind == "LSTM"
                                            else None)
        cell = _CELLS[self.kind if self.kind != "RNN" else f"RNN_{self.rnn.nonlinearity}"]
        ys = []
        for t in range(x.shape[0]):
            inp = x[t]
            for k in range(self.levels):
                w = [getattr(self.rnn, name) for name in self._weight_names[k]]
                if self.kind == "LSTM":
                    hs[k], cs[k] = cell(inp, (hs[k], cs[k]), *w)
                else:
                    hs[k] = cell(inp, hs[k], *w)
                inp = hs[k]
                if k + 1 < self.levels and self.rnn.dropout and self.training:
                    inp = torch.nn.functional.dropout(inp, self.rnn.dropout, True)
            ys.append(inp)
        h = torch.stack(hs)
        new = (h, torch.stack(cs)) if self.kind == "LSTM" else (h,)
        return torch.stack(ys), new

    def _call(self, x, state):
        if self.kind == "LSTM":
            y, (h, c) = self.rnn(x, state)
            return y, (h, c)
        y, h = self.rnn(x, state[0])
        return y, (h,)

    def _run_packed(self, x, state, lengths):
        """Run ``x`` (T, N, E) whose sequence n has ``lengths[n]`` (host, maybe 0) valid steps."""
        alive = lengths > 0
        packed = pack_padded_sequence(x, lengths.clamp(min=1), enforce_sorted=False)
        out, new = self._run(packed, state)
        y, _ = pad_packed_sequence(out, total_length=x.shape[0])
        if not bool(alive.all()):  # a sequence with no step here: no output, state unchanged
            keep = alive.to(x.device).view(1, -1, 1)
            y = torch.where(keep, y, 0.0)
            new = tuple(torch.where(keep, a, b) for a, b in zip(new, state))
        return y, new

    def forward(self, x, cont=None, state=None, lengths=None):
        x, cont, t_, n = time_major(self, x, cont)
        if usable(self, x, cont, state, lengths):
            y, state = run_masked(self, x, lengths)
            return (y.transpose(0, 1) if self.batch_first else y), state
        has_state = state is not None
        if state is None:
            state = zero_state(self.kind, self.state_layers, n, self.hidden, x)
        points = [] if cont is None else reset_points(cont, has_state, ENGINE)
        if lengths is None and not points:
            y, state = self._run(x, state)
        else:
            lens = None if lengths is None else host_lengths(lengths, t_, n, self.name)
            ys, start = [], 0
            for p in points + [t_]:
                if p > start:
                    if lens is None:
                        piece, state = self._run(x[start:p], state)
                    else:
                        piece, state = self._run_packed(x[start:p], state,
                                                        (lens - start).clamp(0, p - start))
                    ys.append(piece)
                if p < t_:
                    keep = cont[p].to(x.dtype)
                    if lens is not None:  # a restart at a padded step changes nothing
                        keep = torch.where((lens > p).to(x.device), keep, 1.0)
                    state = tuple(s * keep.view(1, n, 1) for s in state)
                start = p
            y = ys[0] if len(ys) == 1 else torch.cat(ys, 0)
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, state
