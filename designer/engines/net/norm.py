"""Builders for BatchNorm and LayerNorm over the channels (the last axis).

:class:`SequenceBatchNorm` is ``nn.BatchNorm1d``'s parameters and buffers (``weight``,
``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``: a checkpoint saves and
restores them all) with statistics over every axis but the last. Given the sequences'
``lengths`` while training, it computes them over the valid steps only (a masked batch norm),
so padded steps change neither the statistics nor the valid outputs; in evaluation it uses the
running statistics, for which the lengths do not matter. A batch with non-finite values
(a step the trainer skips) leaves the running statistics as they were.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from designer.engines.net.builders import BuildContext, builder


def valid_steps(lengths: torch.Tensor, steps: int, batch_first: bool,
                device) -> torch.Tensor:
    """A bool mask of the valid steps: (T, N), or (N, T) when batch-first."""
    at = torch.arange(steps, device=device)
    lengths = lengths.to(device).long()
    return at[None, :] < lengths[:, None] if batch_first else at[:, None] < lengths[None, :]


def masked_moments(x: torch.Tensor, mask: torch.Tensor):
    """Per channel (last axis): the mean and the biased variance of the values where ``mask``
    (``x``'s shape without the channels) holds, and how many values that is (a tensor, so no
    host sync)."""
    m = mask.unsqueeze(-1)
    dims = tuple(range(x.dim() - 1))
    count = m.sum(dims, dtype=x.dtype).clamp(min=1)
    mean = torch.where(m, x, 0).sum(dims) / count
    var = torch.where(m, x - mean, 0).square().sum(dims) / count
    return mean, var, count


class SequenceBatchNorm(nn.BatchNorm1d):
    """Batch normalisation of the last axis over all the others, masked by ``lengths``."""

    def __init__(self, channels: int, eps: float, momentum: float, affine: bool,
                 batch_first: bool):
        super().__init__(channels, eps=eps, momentum=momentum, affine=affine)
        self.batch_first = batch_first

    def forward(self, x, lengths=None):
        c = x.shape[-1]
        if not self.training:
            y = F.batch_norm(x.reshape(-1, c), self.running_mean, self.running_var, self.weight,
                             self.bias, False, self.momentum, self.eps)
            return y.reshape(x.shape)
        if lengths is None or x.dim() != 3:
            mean, var = self.running_mean.clone(), self.running_var.clone()
            y = F.batch_norm(x.reshape(-1, c), mean, var, self.weight, self.bias, True,
                             self.momentum, self.eps)
            self._keep_finite(mean, var)
            return y.reshape(x.shape)
        steps = x.shape[1] if self.batch_first else x.shape[0]
        mask = valid_steps(lengths, steps, self.batch_first, x.device)
        xf = x if x.dtype in (torch.float32, torch.float64) else x.float()  # bf16: in fp32
        mean, var, count = masked_moments(xf, mask)
        with torch.no_grad():
            unbiased = var * count / (count - 1).clamp(min=1)
            self._keep_finite(self.running_mean.lerp(mean.to(self.running_mean.dtype),
                                                     self.momentum),
                              self.running_var.lerp(unbiased.to(self.running_var.dtype),
                                                    self.momentum))
        y = (xf - mean) * torch.rsqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)

    @torch.no_grad()
    def _keep_finite(self, mean: torch.Tensor, var: torch.Tensor) -> None:
        """Take the updated running statistics, unless a non-finite batch (a step the trainer
        will skip) would poison them for good; decided on the device, without a host sync."""
        ok = torch.isfinite(mean).all() & torch.isfinite(var).all()
        self.running_mean.copy_(torch.where(ok, mean, self.running_mean))
        self.running_var.copy_(torch.where(ok, var, self.running_var))
        self.num_batches_tracked.add_(1)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", batch_first={self.batch_first}"


def _channels(ctx: BuildContext) -> int:
    return ctx.int_dim(ctx.input_shape()[-1], "the channel count (the input's last dim)")


@builder("BatchNorm")
def _batch_norm(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    return SequenceBatchNorm(_channels(ctx), p["eps"], p["momentum"], p["affine"],
                             p["batch_first"])


@builder("LayerNorm")
def _layer_norm(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    return nn.LayerNorm(_channels(ctx), eps=p["eps"], elementwise_affine=p["affine"])
