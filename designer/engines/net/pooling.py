"""The builder of SequencePool: mean, max or attention pooling over each sequence's valid steps."""
from __future__ import annotations

import torch
from torch import nn

from designer.engines.net.builders import BuildContext, builder


def valid_steps(lengths: torch.Tensor, steps: int, device) -> torch.Tensor:
    """(T, N, 1) booleans: step t of sequence n is valid (t < lengths[n])."""
    at = torch.arange(steps, device=device).unsqueeze(1)
    return (at < lengths.to(device).long().unsqueeze(0)).unsqueeze(2)


class SequencePool(nn.Module):
    """One vector per sequence from all its valid steps (see the SequencePool spec).

    ``score`` (attention only) maps each step's H values to one score: a learned vector
    (``Linear(H, 1)``), or ``Linear(H, U) -> tanh -> Linear(U, 1)``; its last layer starts at
    zero, so attention starts as the mean. Padded steps are filled before they are read (with
    0, or -inf for the max), so what they hold, NaN included, never reaches the output or the
    gradients; a sequence with no valid step gives zeros.
    """

    def __init__(self, method: str, hidden: int, units: int = 0, batch_first: bool = False):
        super().__init__()
        self.method, self.batch_first = method, batch_first
        self.score = None
        if method == "attention":
            layers = [nn.Linear(hidden, units), nn.Tanh(), nn.Linear(units, 1, bias=False)] \
                if units else [nn.Linear(hidden, 1, bias=False)]
            self.score = nn.Sequential(*layers)
            nn.init.zeros_(self.score[-1].weight)

    def forward(self, x, lengths=None):
        if self.batch_first:
            x = x.transpose(0, 1)
        pad = None if lengths is None else ~valid_steps(lengths, x.shape[0], x.device)
        if self.method == "max":
            if pad is None:
                return x.max(0).values
            top = x.masked_fill(pad, float("-inf")).max(0).values
            return torch.where(pad.all(0), 0.0, top)  # no valid step: zeros
        if pad is not None:
            x = x.masked_fill(pad, 0.0)
        elif self.batch_first and self.score is not None:
            x = x.contiguous()  # one copy that the scores and the weighted sum both read
        if self.method == "mean":
            if pad is None:
                return x.mean(0)
            return x.sum(0) / lengths.to(x.device).clamp(min=1).unsqueeze(1).to(x.dtype)
        s = self.score(x)
        if pad is not None:  # no weight on padded steps (where none is valid, x is all 0)
            s = s.masked_fill(pad, torch.finfo(s.dtype).min)
        return (torch.softmax(s, 0) * x).sum(0)


@builder("SequencePool")
def _sequence_pool(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    hidden = ctx.int_dim(ctx.input_shape(0)[2], "the input's size H")
    return SequencePool(p["method"], hidden, p["attention_units"], p["batch_first"])
