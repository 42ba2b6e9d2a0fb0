"""The builder of Hydra, competing random convolution features (spec:
``designer.graph.layers.hydra``).

Its state is buffers, fitted once from the first input it sees in training (the length, and
from it the dilations and the groups a dilation; then the kernels and channel sums, drawn from
``seed``): ``weights`` (F / 2, 9), one row a kernel, kernels of a group together, groups of a
view and dilation together (dilation by dilation, the series before its difference); ``mix``
(F / (2 x kernels), C), how many times each group reads each channel; ``dilations``. Their
shapes depend on the parameters alone, so a net is built before it has seen data.

Per dilation d and view: the group's channel sums (``mix`` times the series), one grouped
``conv1d`` of the groups' kernels (pads 4d, dilation d, full fp32), then, for each group at
each step, the kernel of the largest response gets that response added to its feature and the
kernel of the smallest gets one added to its count (the first kernel where responses tie, as
``argmax`` picks). The difference is ``x[t+1] - x[t]``, one step fewer. The features are the
square roots of their positive parts, dilation by dilation, then view, then the maxima's
before the minima's, group by group. What it shares with MiniRocket (reading a padded set,
remembering the features of sequences read before) is :mod:`designer.engines.net.remembered`'s.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from designer.graph.layers import hydra as H

from designer.engines.net.builders import BuildContext, builder
from designer.engines.net.remembered import FittedFeatures


class Hydra(FittedFeatures):
    """(T, N, C) -> (N, F) features; see the module's docstring."""

    def __init__(self, channels: int, num_features: int, kernels: int, max_dilations: int,
                 max_channels: int, seed: int, batch_first: bool):
        super().__init__(batch_first)
        self.channels, self.num_features, self.kernels = channels, num_features, kernels
        self.max_dilations, self.max_channels, self.seed = max_dilations, max_channels, seed
        rows = num_features // (H.COUNTS * kernels)  # groups, at most (one a view and dilation)
        self.register_buffer("weights", torch.zeros(rows * kernels, H.TAPS))
        self.register_buffer("mix", torch.zeros(rows, channels))
        self.register_buffer("dilations", torch.zeros(max_dilations, dtype=torch.int64))
        self._plan: tuple[list[int], int] | None = None

    def _forget(self) -> None:
        super()._forget()
        self._plan = None

    def plan(self) -> tuple[list[int], int]:
        """``([dilations], groups a view at each)``, read once from the buffers."""
        if self._plan is None:
            used = [d for d in self.dilations.tolist() if d > 0]
            self._plan = used, H.groups(self.num_features, self.kernels, len(used))
        return self._plan

    def features(self, s: torch.Tensor) -> torch.Tensor:
        """(N, F) features of ``s``, (N, C, T) as :meth:`_series` makes it."""
        n = s.shape[0]
        used, g = self.plan()
        k = self.kernels
        views = (s, torch.diff(s, dim=2) if s.shape[2] > 1 else torch.zeros_like(s))
        out, row = [], 0
        with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled,
                                        benchmark=torch.backends.cudnn.benchmark,
                                        deterministic=torch.backends.cudnn.deterministic,
                                        allow_tf32=False):
            for d in used:
                for x in views:
                    mix = self.mix[row:row + g]  # (g, C)
                    w = self.weights[row * k:(row + g) * k].unsqueeze(1)  # (g k, 1, 9)
                    summed = torch.einsum("gc,nct->ngt", mix, x)
                    z = F.conv1d(summed, w, padding=4 * d, dilation=d, groups=g)
                    out.extend(self.compete(z.view(n, g, k, -1)))
                    row += g
        made = torch.cat([o.reshape(n, -1) for o in out], 1).clamp(min=0).sqrt()
        return F.pad(made, (0, self.num_features - made.shape[1]))

    @staticmethod
    def compete(z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(N, g, k, T) responses -> ((N, g, k) the sums of each kernel's responses where it
        responds most in its group, (N, g, k) the counts of the steps where it responds
        least)."""
        top, at_top = z.max(2)
        low, at_low = z.min(2)
        most = z.new_zeros(z.shape[:3]).scatter_add_(2, at_top, top)
        least = z.new_zeros(z.shape[:3]).scatter_add_(2, at_low, torch.ones_like(low))
        return most, least

    @torch.no_grad()
    def fit(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> None:
        """Fit the dilations to the steps of ``x`` (a batch in the layer's layout, padded as
        the data pads them) and draw the kernels and channel sums from ``seed``."""
        steps = self._series(x, lengths).shape[2]
        used = H.steps_dilations(steps, {"max_dilations": self.max_dilations,
                                          "num_features": self.num_features,
                                          "kernels": self.kernels})
        g = H.groups(self.num_features, self.kernels, len(used))
        rows = len(used) * H.VIEWS * g
        gen = torch.Generator().manual_seed(self.seed)
        w = torch.randn(rows * self.kernels, H.TAPS, generator=gen)
        w = w - w.mean(1, keepdim=True)
        w = w / w.abs().sum(1, keepdim=True)
        c = self.channels
        mix = torch.zeros(rows, c)
        if c == 1:
            mix.fill_(1.0)
        else:  # a few channels a group, drawn with replacement, as Hydra draws them
            per = max(2, min(c // 2, self.max_channels))
            picks = torch.randint(0, c, (rows, per), generator=gen)
            mix.scatter_add_(1, picks, torch.ones(rows, per))
        self.weights.zero_()
        self.mix.zero_()
        self.weights[:len(w)] = w.to(self.weights.device)
        self.mix[:rows] = mix.to(self.mix.device)
        self.dilations.zero_()
        self.dilations[:len(used)] = torch.tensor(used)
        self._plan = None
        self._fitted_now(steps)

    def extra_repr(self) -> str:
        return (f"channels={self.channels}, features={self.num_features}, "
                f"kernels={self.kernels}, max_dilations={self.max_dilations}, "
                f"seed={self.seed}, batch_first={self.batch_first}")


@builder("Hydra")
def _hydra(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    channels = ctx.int_dim(ctx.input_shape(0)[2], "the input channels")
    return Hydra(channels, p["num_features"], p["kernels"], p["max_dilations"],
                 p["max_channels"], p["seed"], p["batch_first"])
