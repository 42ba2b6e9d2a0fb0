"""The builder of Conv1D, the convolution over time (spec: ``designer.graph.layers.conv``).

It is not recurrent: both engines (cuDNN and the unrolled Caffe net) run the same module, a
``torch.nn.Conv1d`` between the transposes from and to the time-major layout.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from designer.graph.layers.conv import pads

from designer.engines.net.builders import BuildContext, builder
from designer.engines.tensors.fillers import fill_bias, fill_weight


def valid_steps(lengths: torch.Tensor, steps: int, device) -> torch.Tensor:
    """(N, T) flags: step t of sequence n is within its first ``lengths[n]`` steps."""
    return torch.arange(steps, device=device).unsqueeze(0) < \
        lengths.to(device).long().unsqueeze(1)


class Conv1D(nn.Module):
    """Filters slid along time: (T, N, C) -> (T', N, H), or batch-first (N, T, C) -> (N, T', H).

    ``pads`` are the zero steps added before and after each sequence. With ``lengths``, the
    steps from a sequence's length on are zeroed before the convolution and in its output
    (the spec allows lengths only with stride 1 and padding same or causal, where T' = T).
    """

    def __init__(self, channels: int, outputs: int, kernel: int, stride: int, dilation: int,
                 groups: int, bias: bool, pads: tuple[int, int], batch_first: bool):
        super().__init__()
        self.conv = nn.Conv1d(channels, outputs, kernel, stride=stride, dilation=dilation,
                              groups=groups, bias=bias)
        self.pads, self.batch_first = tuple(pads), batch_first

    def forward(self, x, lengths=None):
        x = x.permute(0, 2, 1) if self.batch_first else x.permute(1, 2, 0)  # (N, C, T)
        valid = None
        if lengths is not None:
            valid = valid_steps(lengths, x.shape[2], x.device).unsqueeze(1)  # (N, 1, T)
            x = torch.where(valid, x, 0.0)
        if any(self.pads):
            x = F.pad(x, self.pads)
        y = self.conv(x)
        if valid is not None:
            y = torch.where(valid, y, 0.0)
        return y.permute(0, 2, 1) if self.batch_first else y.permute(2, 0, 1)

    def extra_repr(self) -> str:
        return f"pads={self.pads}, batch_first={self.batch_first}"


@builder("Conv1D")
def _conv1d(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    channels = ctx.int_dim(ctx.input_shape()[2], "the input channels")
    m = Conv1D(channels, p["num_output"], p["kernel_size"], p["stride"], p["dilation"],
               p["groups"], p["bias_term"], pads(p), p["batch_first"])
    if p["weight_filler"] != "torch_default":
        fill_weight(m.conv.weight, p["weight_filler"], p["num_output"])
        fill_bias(m.conv.bias, p["bias_filler"])
    return m
