"""The cuDNN engine's second way to honour ``lengths``: on the device, reading nothing on the
host, so that a training step holding it can be captured in a CUDA graph.

Packing (``cudnn``) needs the lengths on the host. This path runs the padded batch as it
is and relies on the padding coming after each sequence's valid steps:

- one direction, one level: the layer's own call over all T steps (the fused call, or the
  persistent kernel of a PERSIST layer). A step's output depends only on the steps before it,
  so the valid steps' outputs are exactly those of the packed run; the padded steps' outputs
  are set to zero by a mask ``t < lengths`` built on the device.
- more levels, or both directions: level by level, with torch's functional RNN ops
  (``torch._VF.lstm``/``gru``/``rnn_tanh``/``rnn_relu``, what ``nn.LSTM`` calls) on that level
  and direction's own parameters (``rnn.all_weights``), so the gradients reach the same tensors
  and the weights and checkpoints do not change. The backward direction reads each sequence
  reversed within its own length (``index[t, n] = lengths[n] - 1 - t`` for t < lengths[n],
  else t: the padding stays at the end), its outputs put back in time order by the same index;
  the directions are joined as torch joins them ([forward, backward] on the last axis), with
  dropout between the levels in training as in the fused call (its masks drawn by torch's
  generator, not cuDNN's).

Padded steps give zero outputs and no gradient. A sequence of length 0 runs one step (the
gathers need one) and gives zero outputs and a zero ``h``, as the packed path does. The final
state: ``h`` is exact (each level and direction's output at its last valid step; the backward
direction's at step 0). An LSTM's ``c``, which the padded run cannot give, is filled with NaN:
the path is only taken where the caller throws the state away, and a ``c`` read by mistake is
loud, never silently wrong. Lengths outside [0, T] are refused in one sentence as on the
packed path, except while a graph is captured, where they cannot be read (they are then
clamped into range, so the gathers never read outside the batch).

It is taken (:func:`usable`) only when the layer's ``state_discarded`` flag is set (``TrainStep``
sets it while it runs a step that carries no state), no state came in, no ``cont`` is given,
``lengths`` is, and the input is on a GPU (or ``ON_CPU`` is set, for the tests: on the CPU
nothing is gained, and packing skips the padded steps' work). Validation, evaluation,
generation and inspection keep packing.
"""
from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F

from designer.engines.tensors.recurrent_state import check_lengths, zero_state

ON_CPU = False   # take the path on the CPU too (the tests compare it with packing there)

_OPS = {"LSTM": torch._VF.lstm, "GRU": torch._VF.gru, "RNN_tanh": torch._VF.rnn_tanh,
        "RNN_relu": torch._VF.rnn_relu}

# cuDNN warns when a call's weights are not the start of one flat buffer, and copies them into
# one: expected for every level and direction but the first, each of which runs on its own slice
warnings.filterwarnings("ignore", message="RNN module weights are not part of single contiguous",
                        category=UserWarning, module=__name__.replace(".", r"\."))


def usable(module, x: torch.Tensor, cont, state, lengths) -> bool:
    """Whether ``module`` (a ``CudnnRecurrent``) may run this call on the device-side path."""
    return (lengths is not None and state is None and cont is None and
            getattr(module, "state_discarded", False) and (x.is_cuda or ON_CPU))


class _Reversed(torch.autograd.Function):
    """``x[index[t, n], n]``: each sequence's valid steps in reverse order. The reordering is
    its own inverse, so its gradient is the same gather (no scatter)."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        return _gather(x, index)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return _gather(grad, index), None


def _gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``x`` (T, N, F) read at ``index`` (T', N) along time."""
    return x.gather(0, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


def run_masked(module, x: torch.Tensor, lengths: torch.Tensor) -> tuple:
    """Run ``x`` (T, N, E), whose sequence n has ``lengths[n]`` valid steps, on the device.

    Returns
    -------
    y, state
        ``y`` (T, N, D * H), zero at padded steps; the state ``(h, c)`` for an LSTM, with ``c``
        all NaN (see the module doc), else ``(h,)``, each ``(levels * D, N, H)``.
    """
    steps, batch = x.shape[0], x.shape[1]
    check_lengths(lengths, steps, batch, module.name)  # not while a graph is captured
    lens = lengths.to(x.device, torch.long).clamp(0, steps)
    at = torch.arange(steps, device=x.device).unsqueeze(1)          # (T, 1)
    some = lens.clamp(min=1)          # a sequence of length 0 runs one step, zeroed below
    if module.directions == 1 and module.levels == 1:
        y, _ = module._run(x, zero_state(module.kind, 1, batch, module.hidden, x))
        finals = [_gather(y, (some - 1).unsqueeze(0))[0]]
    else:
        y, finals = _levels(module, x, torch.where(at < some, some - 1 - at, at), some - 1)
    y = torch.where((at < lens).unsqueeze(-1), y, 0.0)
    h = torch.where((lens > 0).view(1, -1, 1), torch.stack(finals), 0.0)
    return y, ((h, torch.full_like(h, float("nan"))) if module.kind == "LSTM" else (h,))


def _levels(module, x: torch.Tensor, index: torch.Tensor, last: torch.Tensor) -> tuple:
    """Every level and direction in turn: the top level's outputs (T, N, D * H) and each
    level and direction's final ``h`` (N, H), in torch's order (``D * level + direction``)."""
    finals, inp = [], x
    for k in range(module.levels):
        outs = []
        for d in range(module.directions):
            if d == 0:
                out = _level(module, inp, k, d)
                finals.append(_gather(out, last.unsqueeze(0))[0])
            else:  # the backward direction ends at step 0, after it has read the whole sequence
                out = _Reversed.apply(_level(module, _Reversed.apply(inp, index), k, d), index)
                finals.append(out[0])
            outs.append(out)
        inp = outs[0] if len(outs) == 1 else torch.cat(outs, -1)
        if k + 1 < module.levels and module.rnn.dropout and module.training:
            inp = F.dropout(inp, module.rnn.dropout, True)
    return inp, finals


def _level(module, x: torch.Tensor, k: int, d: int) -> torch.Tensor:
    """Level ``k``, direction ``d`` of ``module.rnn`` run forward over ``x`` (T, N, E) from a
    zero state: its outputs (T, N, H)."""
    rnn = module.rnn
    weights = rnn.all_weights[k * module.directions + d]
    h0 = x.new_zeros(1, x.shape[1], module.hidden)
    if module.kind == "LSTM":
        return _OPS["LSTM"](x, (h0, h0), weights, rnn.bias, 1, 0.0, module.training, False,
                            False)[0]
    op = _OPS[module.kind if module.kind != "RNN" else f"RNN_{rnn.nonlinearity}"]
    return op(x, h0, weights, rnn.bias, 1, 0.0, module.training, False, False)[0]
