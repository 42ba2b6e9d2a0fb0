"""The builder of MiniRocket, random convolution features (spec: ``designer.graph.layers.rocket``).

Its state is buffers, not parameters: the dilations, the features each dilation makes, the
channels each kernel sums over and the biases, all fitted once from the first input it sees
in training (:meth:`MiniRocket.fit`; a run calls it on its first training batch before the
first step, so that every rank of a data-parallel run holds the same). A checkpoint holds
them like any weights. The buffers have fixed shapes (``max_dilations`` rows), so a net is
built before it has seen data and loads any checkpoint of the same design.

Each dilation is one ``conv1d`` whose weights are the 84 kernels times their channel masks
(kernel k's response is the sum over its channels of -1 x the nine taps + 3 x its three
taps of weight 2), run in full fp32 (no TF32: the responses are compared with biases, and
rounding would move steps across them). Half the (dilation, kernel) pairs count every step,
the other half only the steps whose window lies inside the sequence, as MiniRocket does.
Sequences are read as MiniRocket reads a padded set: zero-padded to the steps the layer was
fitted on (``length``, the data's padded length), so a batch of shorter sequences gives the
same features; with ``lengths`` the steps from each sequence's length on are zeros whatever
the data held there. The features of a sequence read before come from memory (on the device
that runs the layer, up to ``REMEMBER_BYTES``): a training set is read over and over, and after
its first pass a step costs only the layers after this one. Finding them takes the sequences'
keys on the host, which a CUDA graph cannot: a layer that reads the data alone is run before
the captured step (``Net.stage``), and one captured inside it computes its features.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from designer.graph.layers import rocket as R
from designer.graph.layers.rocket import CHUNK, SORT_ABOVE

from designer.engines.net.builders import BuildContext, builder


def remembers() -> bool:
    """Whether MiniRocket layers keep the features of the sequences they read (a bank of
    ``REMEMBER_BYTES``; 0 turns it off, as a benchmark comparing the two does)."""
    return R.REMEMBER_BYTES > 0


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


class MiniRocket(nn.Module):
    """(T, N, C) -> (N, F) proportions of positive values; see the module's docstring."""

    def __init__(self, channels: int, num_features: int, max_dilations: int, seed: int,
                 batch_first: bool):
        super().__init__()
        self.channels, self.num_features = channels, R.features(num_features)
        self.max_dilations, self.seed, self.batch_first = max_dilations, seed, batch_first
        self.register_buffer("kernels", kernel_weights(), persistent=False)
        self.register_buffer("dilations", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("counts", torch.zeros(max_dilations, dtype=torch.int64))
        self.register_buffer("masks", torch.zeros(max_dilations, R.KERNELS, channels))
        self.register_buffer("biases", torch.zeros(self.num_features))
        self.register_buffer("length", torch.zeros((), dtype=torch.int64))  # steps read
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))
        self._plan: list[tuple[int, int]] | None = None  # (dilation, features) on the host
        self._length: int | None = None
        self._rows: dict[tuple, int] = {}  # a remembered sequence's key -> its row in _bank
        self._bank: torch.Tensor | None = None  # (rows, F) features of sequences read before
        self._mixers: torch.Tensor | None = None  # (values, 2) the keys' odd multipliers
        self._fitted: bool | None = False  # None: read the buffer (after a load)
        self.register_load_state_dict_post_hook(lambda module, keys: module._forget())

    # ------------------------------------------------------------------------ state --
    def _forget(self) -> None:
        self._plan = self._fitted = self._length = None
        self._rows, self._bank = {}, None

    def plan(self) -> list[tuple[int, int]]:
        """``[(dilation, features a kernel makes at it), ...]``, read once from the buffers."""
        if self._plan is None:
            self._plan = [(int(d), int(n)) for d, n in zip(self.dilations.tolist(),
                                                           self.counts.tolist()) if n > 0]
        return self._plan

    def steps(self) -> int:
        """The steps each sequence is read as (zero-padded to): the fit's, read once."""
        if self._length is None:
            self._length = int(self.length)
        return self._length

    @property
    def is_fitted(self) -> bool:
        if self._fitted is None:
            self._fitted = bool(self.fitted)
        return self._fitted

    # ------------------------------------------------------------------------ maths --
    def _series(self, x: torch.Tensor, lengths, steps: int = 0):
        """(N, C, T') in fp32: the steps from each sequence's length on zeroed, and zeros
        after the end up to ``steps`` (T' = max(T, steps))."""
        x = (x.permute(0, 2, 1) if self.batch_first else x.permute(1, 2, 0)).float()
        if lengths is not None:
            valid = torch.arange(x.shape[2], device=x.device) < \
                lengths.to(x.device).long().unsqueeze(1)
            x = torch.where(valid.unsqueeze(1), x, 0.0)
        if x.shape[2] < steps:
            x = F.pad(x, (0, steps - x.shape[2]))
        return x

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

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if not self.is_fitted:
            self.fit(x, lengths)
        with torch.no_grad(), torch.autocast(x.device.type, enabled=False):
            s = self._series(x, lengths, self.steps())
            if not remembers() or (s.is_cuda and torch.cuda.is_current_stream_capturing()):
                return self.features(s)
            return self._remembered(s)

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

    def keys(self, s: torch.Tensor) -> list[tuple[int, int]]:
        """One key a sequence of ``s``, the same for the same values (bit for bit) in any batch
        and on any device: two sums of the values' bits times fixed odd multipliers, in
        integers, whose wrapping sums do not depend on the order they are added in."""
        bits = s.reshape(len(s), -1).contiguous().view(torch.int32).long()
        width = bits.shape[1]
        if self._mixers is None or self._mixers.shape[0] < width \
                or self._mixers.device != s.device:
            g = torch.Generator().manual_seed(0x5EED)
            mixers = torch.randint(0, 1 << 30, (max(width, 1), 2), generator=g) * 2 + 1
            self._mixers = mixers.to(s.device)
        m = self._mixers[:width]
        return [tuple(k) for k in torch.stack([(bits * m[:, 0]).sum(1),
                                               (bits * m[:, 1]).sum(1)], 1).tolist()]

    def _remembered(self, s: torch.Tensor) -> torch.Tensor:
        """The features of ``s``: those of sequences read before from the bank, the rest
        computed and kept while the bank has room (``REMEMBER_BYTES``)."""
        if self._bank is not None and self._bank.device != s.device:
            self._rows, self._bank = {}, None
        keys = self.keys(s)
        rows = [self._rows.get(k) for k in keys]
        new = [i for i, r in enumerate(rows) if r is None]
        if not new:
            return self._bank.index_select(0, torch.tensor(rows, device=s.device))
        made = self.features(s[new] if len(new) < len(s) else s)
        self._keep([keys[i] for i in new], made)
        if len(new) == len(s):
            return made
        out = made.new_empty(len(s), made.shape[1])
        old = [i for i, r in enumerate(rows) if r is not None]
        out[torch.tensor(new, device=s.device)] = made
        out[torch.tensor(old, device=s.device)] = self._bank.index_select(
            0, torch.tensor([rows[i] for i in old], device=s.device))
        return out

    def _keep(self, keys: list[tuple], made: torch.Tensor) -> None:
        """Keep the rows of ``made`` under ``keys`` (each once) while the bank has room."""
        limit = R.REMEMBER_BYTES // max(1, 4 * made.shape[1])
        fresh = {}
        for i, k in enumerate(keys):
            if k not in self._rows and k not in fresh and len(self._rows) + len(fresh) < limit:
                fresh[k] = i
        if not fresh:
            return
        have = len(self._rows)
        need = have + len(fresh)
        if self._bank is None or self._bank.shape[0] < need:  # grow by doubling, up to limit
            grown = made.new_empty(min(limit, max(need, 2 * have, 64)), made.shape[1])
            if self._bank is not None:
                grown[:have] = self._bank[:have]
            self._bank = grown
        self._bank[have:need] = made[torch.tensor(list(fresh.values()), device=made.device)]
        for j, k in enumerate(fresh):
            self._rows[k] = have + j

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
        self.length.fill_(steps)
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
        self.fitted.fill_(True)
        self._plan, self._fitted, self._length = None, True, steps
        self._memory = {}

    def extra_repr(self) -> str:
        return (f"channels={self.channels}, features={self.num_features}, "
                f"max_dilations={self.max_dilations}, seed={self.seed}, "
                f"batch_first={self.batch_first}")


def unfitted(net: nn.Module) -> tuple[str, ...]:
    """The names of ``net``'s MiniRocket layers not yet fitted."""
    return tuple(n for n, m in net.layers.items()
                 if isinstance(m, MiniRocket) and not m.is_fitted)


def fit_from(net: nn.Module, feeds: dict) -> bool:
    """Fit every MiniRocket of ``net`` (a ``build.Net``) that is not yet fitted, from one
    forward pass of ``feeds`` (a training batch) up to those layers, with no gradients and the
    net in evaluation mode (so that no running statistic moves). Returns whether there was
    one to fit."""
    names = unfitted(net)
    if not names:
        return False
    was = net.training
    net.eval()
    try:
        with torch.no_grad():
            net(feeds, want=names)
    finally:
        net.train(was)
    return True


def fitted_state(net: nn.Module) -> dict:
    """The buffers of ``net``'s MiniRocket layers (on the host), keyed as in its state dict."""
    return {f"layers.{n}.{k}": v.cpu() for n, m in net.layers.items()
            if isinstance(m, MiniRocket) for k, v in m.state_dict().items()}


@builder("MiniRocket")
def _mini_rocket(ctx: BuildContext) -> nn.Module:
    p = ctx.params
    channels = ctx.int_dim(ctx.input_shape(0)[2], "the input channels")
    return MiniRocket(channels, p["num_features"], p["max_dilations"], p["seed"],
                      p["batch_first"])
