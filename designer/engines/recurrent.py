"""The CUDNN engine: LSTM, GRU and RNN layers as one fused ``torch.nn`` call.

All ``num_layers`` run in a single call (cuDNN on a GPU, oneDNN on the CPU) with dropout between
layers. The ``cont`` input (0 = the sequence restarts here) is honoured exactly: the fused call is
split at the steps where some sequence restarts, and the state of those sequences is multiplied by
``cont`` before the next piece, which is what the unrolled net's SCALE layers do.

State, for both engines: LSTM ``(h, c)``, GRU and RNN ``(h,)``, each ``(num_layers, N, H)``.
"""
from __future__ import annotations

import torch
from torch import nn

from .build import BuildContext, builder
from .fillers import fill_bias, fill_weight

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1, "LSTMSimple": 4}
TORCH_CLASSES = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}


class CaptureUnsupported(RuntimeError):
    """Raised while a CUDA graph is being captured by a layer that needs the host to decide."""


def zero_state(kind: str, levels: int, n: int, hidden: int, like: torch.Tensor) -> tuple:
    h = like.new_zeros(levels, n, hidden)
    return (h, like.new_zeros(levels, n, hidden)) if kind in ("LSTM", "LSTMSimple") else (h,)


def reset_points(cont: torch.Tensor, has_state: bool) -> list[int]:
    """The steps where some sequence restarts (step 0 only matters with a carried state)."""
    if cont.is_cuda and torch.cuda.is_current_stream_capturing():
        raise CaptureUnsupported("the cuDNN engine reads reset positions on the host")
    rows = (cont == 0).any(1).nonzero().flatten().tolist()
    return [t for t in rows if t > 0 or has_state]


class CudnnRecurrent(nn.Module):
    """``torch.nn.LSTM``/``GRU``/``RNN`` with Caffe's continuation input."""

    def __init__(self, kind: str, input_size: int, hidden: int, levels: int, dropout: float,
                 batch_first: bool, nonlinearity: str = "tanh"):
        super().__init__()
        self.kind, self.hidden, self.levels, self.batch_first = kind, hidden, levels, batch_first
        extra = {"nonlinearity": nonlinearity} if kind == "RNN" else {}
        self.rnn = TORCH_CLASSES[kind](input_size, hidden, levels, dropout=dropout, **extra)

    def _run(self, x, state):
        if not x.is_cuda and x.shape[0] <= 4 and not torch.is_grad_enabled():
            # oneDNN sets up a primitive per call (about 4 ms on a small CPU): for the few
            # steps of generation torch's own kernels are ten times quicker
            before = torch.backends.mkldnn.enabled
            torch.backends.mkldnn.enabled = False
            try:
                return self._call(x, state)
            finally:
                torch.backends.mkldnn.enabled = before
        return self._call(x, state)

    def _call(self, x, state):
        if self.kind == "LSTM":
            y, (h, c) = self.rnn(x, state)
            return y, (h, c)
        y, h = self.rnn(x, state[0])
        return y, (h,)

    def forward(self, x, cont=None, state=None):
        if self.batch_first:
            x = x.transpose(0, 1)
            cont = None if cont is None else cont.transpose(0, 1)
        t_, n = x.shape[0], x.shape[1]
        has_state = state is not None
        if state is None:
            state = zero_state(self.kind, self.levels, n, self.hidden, x)
        points = [] if cont is None else reset_points(cont, has_state)
        if not points:
            y, state = self._run(x, state)
        else:
            ys, start = [], 0
            for p in points + [t_]:
                if p > start:
                    piece, state = self._run(x[start:p], state)
                    ys.append(piece)
                if p < t_:
                    keep = cont[p].to(x.dtype).view(1, n, 1)
                    state = tuple(s * keep for s in state)
                start = p
            y = torch.cat(ys, 0)
        if self.batch_first:
            y = y.transpose(0, 1)
        return y, state


def _fill_cudnn(m: CudnnRecurrent, params: dict) -> None:
    filler = params["weight_filler"]
    if filler == "torch_default":
        return
    g = GATES[m.kind]
    for k in range(m.levels):
        fill_weight(getattr(m.rnn, f"weight_ih_l{k}"), filler, m.hidden, g)
        fill_weight(getattr(m.rnn, f"weight_hh_l{k}"), filler, m.hidden, g)
        # one effective bias, as the Caffe net has: all of it in bias_ih
        fill_bias(getattr(m.rnn, f"bias_ih_l{k}"), params["bias_filler"])
        fill_bias(getattr(m.rnn, f"bias_hh_l{k}"), 0.0)


@builder("LSTM", "GRU", "RNN", "LSTMSimple")
def _recurrent(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    kind = ctx.layer.type
    e = ctx.int_dim(ctx.input_shape()[2], "the input size")
    if kind != "LSTMSimple" and p.get("engine", "CUDNN") == "CUDNN":
        m = CudnnRecurrent(kind, e, p["num_output"], p["num_layers"], p["dropout_ratio"],
                           p["batch_first"], p.get("nonlinearity", "tanh"))
        _fill_cudnn(m, p)
        return m
    from .unrolled import UnrolledRecurrent
    return UnrolledRecurrent.from_params(kind, e, p, name=ctx.name)
