"""The builder of MiniRocket, random convolution features (spec: ``designer.graph.layers.rocket``).

Its state is buffers, not parameters: the dilations, the features each dilation makes, the
channels each kernel sums over and the biases, all fitted once from the first input it sees
in training (:meth:`MiniRocket.fit`). A checkpoint holds them like any weights. The buffers
have fixed shapes (``max_dilations`` rows).

Each dilation is one ``conv1d`` whose weights are the 84 kernels times their channel masks
(kernel k's response is the sum over its channels of -1 x the nine taps + 3 x its three
taps of weight 2), run in full fp32 (no TF32: the responses are compared with biases, and
rounding would move steps across them). Half the (dilation, kernel) pairs count every step,
the other half only the steps whose window lies inside the sequence, as MiniRocket does.
What it shares with the other layers of fixed features (fitting once, reading a padded set,
remembering the features of sequences read before) is :mod:`designer.engines.net.remembered`'s.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from designer.graph.layers import rocket as R
from designer.graph.layers.rocket import CHUNK, SORT_ABOVE

from designer.engines.net.builders import BuildContext, builder
from designer.engines.net.remembered import FittedFeatures, remembers  # noqa: F401 (re-export)


def kernel_weights() -> torch.Tensor:
    """(84, 9): -1 at every tap, 2 at each kernel's three chosen taps."""
    w = -torch.ones(R.KERNELS, R.TAPS)
    for k, taps in enumerate(R.TWOS):
        w[k, list(taps)] = 2.0
    return w


def above(c: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(N, 84, F) counts of the steps of ``c`` (N, 84, T) above each bias of ``b`` (1, 84, F).

    A few biases a kernel: compared step by step, a block of sequences at a time (at most
    ``CHUNK`` comparisons held); many: counted from where each bias falls in the sorted steps.
    """
    n, k, t = c.shape
    per = b.shape[2]
    if per > SORT_ABOVE:
        below = torch.searchsorted(c.sort(2).values.contiguous(),
                                   b.expand(n, -1, -1).contiguous(), right=True)
        return (t - below).float()
    rows = max(1, CHUNK // max(1, k * t * per))
    return torch.cat([(c[i:i + rows].unsqueeze(3) > b.unsqueeze(2)).float().sum(2)
                      for i in range(0, n, rows)])


def quantile_rows(rows: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """(K, Q): row k's quantiles ``q[k]`` (K, Q), interpolated linearly between the sorted
    values as numpy's default method does."""
    ordered = rows.sort(1).values
    pos = q * (rows.shape[1] - 1)
    lo = pos.floor().long()
    hi = (lo + 1).clamp(max=rows.shape[1] - 1)
    a, b = ordered.gather(1, lo), ordered.gather(1, hi)
    return a + (b - a) * (pos - lo)


class MiniRocket(FittedFeatures):
    """(T, N, C) -> (N, F) proportions of positive values; see the module's docstring."""

    def __init__(self, channels: int, num_features: int, max_dilations: int, seed: int,
                 batch_first: bool):
        super().__init__(batch_first)
        self.channels, self.num_features = channels, R.features(num_features)
        self.max_dilations, self.seed = max_dilations, seed
        self.register_buffer("kernels", kernel_weights(), persistent=False)
        self.register_buffer("dilations", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("counts", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("masks", torch.zeros(max_dilations, R.KERNELS, channels))
        self.register_buffer("biases", torch.zeros(self.num_features))
        self._plan: list[tuple[int, int]] | None = None  # (dilation, features) on the host

    def _forget(self) -> None:
        super()._forget()
        self._plan = None

    def plan(self) -> list[tuple[int, int]]:
        """``[(dilation, features a kernel makes at it), ...]``, read once from the buffers."""
        if self._plan is None:
            self._plan = [(int(d), int(n)) for d, n in zip(self.dilations.tolist(),
                                                           self.counts.tolist()) if n > 0]
        return self._plan

    # ------------------------------------------------------------------------ maths --
    def responses(self, x: torch.Tensor, j: int, dilation: int,
                  paired: bool = False) -> torch.Tensor:
        """(N, 84, T): each kernel's response at dilation row ``j``, zero-padded at the ends;
        ``paired``: ``x`` holds 84 sequences and kernel k reads the k-th, (84, T)."""
        w = self.kernels.unsqueeze(1) * self.masks[j].unsqueeze(2)  # (84, C, 9)
        if paired:
            x = x.reshape(1, -1, x.shape[2])
        with torch.backends.cudnn.flags(enabled=torch.backends.cudnn.enabled,
                                        benchmark=torch.backends.cudnn.benchmark,
                                        deterministic=torch.backends.cudnn.deterministic,
                                        allow_tf32=False):
            y = F.conv1d(x, w, padding=4 * dilation, dilation=dilation,
                         groups=R.KERNELS if paired else 1)
        return y[0] if paired else y

    @staticmethod
    def counted(j: int, dilation: int, steps: int, device) -> torch.Tensor:
        """(84, T) booleans: the steps that count for each kernel at row ``j``: all of them,
        or, for every other kernel, those whose window lies inside the sequence."""
        at = torch.arange(steps, device=device)
        pad = 4 * dilation
        inner = (at >= pad) & (at < steps - pad)
        inside = (torch.arange(R.KERNELS, device=device) + j) % 2 == 1  # (84,)
        return inner | ~inside.unsqueeze(1)

    def features(self, s: torch.Tensor) -> torch.Tensor:
        """(N, F) features of ``s``, (N, C, T) as :meth:`_series` makes it."""
        n, steps = s.shape[0], s.shape[2]
        out, start = [], 0
        for j, (d, per) in enumerate(self.plan()):
            keep = self.counted(j, d, steps, s.device)
            c = self.responses(s, j, d).masked_fill(~keep, float("-inf"))
            total = keep.sum(1, keepdim=True).clamp(min=1).unsqueeze(0)  # (1, 84, 1)
            b = self.biases[start:start + R.KERNELS * per].view(1, R.KERNELS, per)
            out.append((above(c, b) / total).reshape(n, -1))
            start += R.KERNELS * per
        return torch.cat(out, 1)

    # ------------------------------------------------------------------------ fitting --
    @torch.no_grad()
    def fit(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> None:
        """Fit the dilations, channels and biases to the sequences in ``x`` (a batch in the
        layer's layout, padded as the data pads them): the dilations to their steps, each
        bias to a quantile of one kernel's responses on one sequence drawn at random (seeded
        by ``seed``), as MiniRocket fits them."""
        s = self._series(x, lengths)
        n, c, steps = s.shape
        used, per = R.dilations(max(steps, 1), self.num_features, self.max_dilations)
        rng = np.random.RandomState(self.seed)
        combos = len(used) * R.KERNELS
        top = np.log2(min(c, R.MAX_CHANNELS) + 1)
        width = (2 ** rng.uniform(0, top, combos)).astype(np.int64)
        masks = torch.zeros(self.max_dilations, R.KERNELS, c)
        for i, w in enumerate(width):
            masks[i // R.KERNELS, i % R.KERNELS, rng.choice(c, int(w), replace=False)] = 1.0
        self.masks.copy_(masks)
        self.dilations.zero_()
        self.counts.zero_()
        self.dilations[:len(used)] = torch.tensor(used)
        self.counts[:len(used)] = torch.tensor(per)
        q = torch.tensor(R.quantiles(self.num_features), dtype=torch.float64, device=s.device)
        biases, start = [], 0
        for j, d in enumerate(used):
            picks = torch.from_numpy(rng.randint(n, size=R.KERNELS)).to(s.device)
            rows = self.responses(s[picks], j, d, paired=True)  # kernel k on pick k
            width_q = R.KERNELS * per[j]
            biases.append(quantile_rows(rows.double(), q[start:start + width_q].view(
                R.KERNELS, per[j])).float())
            start += width_q
        self.biases.copy_(torch.cat([b.reshape(-1) for b in biases]))
        self._plan = None
        self._fitted_now(steps)

    def extra_repr(self) -> str:
        return (f"channels={self.channels}, features={self.num_features}, "
                f"max_dilations={self.max_dilations}, seed={self.seed}, "
                f"batch_first={self.batch_first}")


@builder("MiniRocket")
def _mini_rocket(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    channels = ctx.int_dim(ctx.input_shape(0)[2], "the input channels")
    return MiniRocket(channels, p["num_features"], p["max_dilations"], p["seed"],
                      p["batch_first"])
