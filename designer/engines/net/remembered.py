"""What the layers of fixed features share (MiniRocket, Hydra): fitted once from data, no
gradient, and the features of a sequence read before taken from memory.

Such a layer is fitted from the first input it sees in training (:meth:`fit`; a run calls it
on its first training batch before the first step, so that every rank of a data-parallel run
holds the same) and keeps what it fitted in buffers of fixed shapes, so that a net is built
before it has seen data and loads any checkpoint of the same design. Sequences are read as a
padded set is: zero-padded to the steps the layer was fitted on (``length``), so a batch of
shorter sequences gives the same features; with ``lengths`` the steps from each sequence's
length on are zeros whatever the data held there.

The features of a sequence read before come from memory (on the device that runs the layer,
up to ``REMEMBER_BYTES`` a layer): a training set is read over and over, and after its first
pass a step costs only the layers after this one. Finding them takes the sequences' keys on
the host, which a CUDA graph cannot: a layer that reads the data alone is run before the
captured step (``Net.stage``), and one captured inside it computes its features.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from designer.graph.layers import rocket as R


def remembers() -> bool:
    """Whether these layers keep the features of the sequences they read (a bank of
    ``REMEMBER_BYTES``; 0 turns it off, as a benchmark comparing the two does)."""
    return R.REMEMBER_BYTES > 0


class FittedFeatures(nn.Module):
    """(T, N, C) -> (N, F) features fitted once from data; a subclass gives :meth:`fit` and
    :meth:`features` and registers its own buffers after calling this ``__init__``."""

    def __init__(self, batch_first: bool):
        super().__init__()
        self.batch_first = batch_first
        self.register_buffer("length", torch.zeros((), dtype=torch.int64))  # steps read
        self.register_buffer("fitted", torch.zeros((), dtype=torch.bool))
        self._length: int | None = None
        self._rows: dict[tuple, int] = {}  # a remembered sequence's key -> its row in _bank
        self._bank: torch.Tensor | None = None  # (rows, F) features of sequences read before
        self._mixers: torch.Tensor | None = None  # (values, 2) the keys' odd multipliers
        self._fitted: bool | None = False  # None: read the buffer (after a load)
        self.register_load_state_dict_post_hook(lambda module, keys: module._forget())

    def _forget(self) -> None:
        """Drop what was read from the buffers and the features remembered (a load)."""
        self._fitted = self._length = None
        self._rows, self._bank = {}, None

    def _fitted_now(self, steps: int) -> None:
        """Mark the layer fitted to sequences of ``steps`` steps."""
        self.length.fill_(steps)
        self.fitted.fill_(True)
        self._fitted, self._length = True, steps
        self._rows, self._bank = {}, None

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

    def fit(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> None:
        raise NotImplementedError

    def features(self, s: torch.Tensor) -> torch.Tensor:
        """(N, F) features of ``s``, (N, C, T) as :meth:`_series` makes it."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if not self.is_fitted:
            self.fit(x, lengths)
        with torch.no_grad(), torch.autocast(x.device.type, enabled=False):
            s = self._series(x, lengths, self.steps())
            if not remembers() or (s.is_cuda and torch.cuda.is_current_stream_capturing()):
                return self.features(s)
            return self._remembered(s)

    # ------------------------------------------------------------------------ memory --
    def keys(self, s: torch.Tensor) -> list[tuple[int, int]]:
        """One key a sequence of ``s``, the same for the same values (bit for bit) and steps in
        any batch and on any device: two sums of the values' bits times fixed odd multipliers,
        in integers, whose wrapping sums do not depend on the order they are added in, and the
        steps read (zeros after the end add nothing to the sums, and a batch padded past the
        fitted steps gives other features)."""
        bits = s.reshape(len(s), -1).contiguous().view(torch.int32).long()
        width = bits.shape[1]
        if self._mixers is None or self._mixers.shape[0] < width \
                or self._mixers.device != s.device:
            g = torch.Generator().manual_seed(0x5EED)
            mixers = torch.randint(0, 1 << 30, (max(width, 1), 2), generator=g) * 2 + 1
            self._mixers = mixers.to(s.device)
        m = self._mixers[:width]
        steps = s.shape[2]
        return [(a, b, steps) for a, b in torch.stack([(bits * m[:, 0]).sum(1),
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


def unfitted(net: nn.Module) -> tuple[str, ...]:
    """The names of ``net``'s layers of fixed features not yet fitted."""
    return tuple(n for n, m in net.layers.items()
                 if isinstance(m, FittedFeatures) and not m.is_fitted)


def fit_from(net: nn.Module, feeds: dict) -> bool:
    """Fit every layer of fixed features of ``net`` (a ``build.Net``) not yet fitted, from
    one forward pass of ``feeds`` (a training batch) up to those layers, with no gradients and
    the net in evaluation mode (so that no running statistic moves). Returns whether there was
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
    """The buffers of ``net``'s layers of fixed features (on the host), keyed as in its state
    dict."""
    return {f"layers.{n}.{k}": v.cpu() for n, m in net.layers.items()
            if isinstance(m, FittedFeatures) for k, v in m.state_dict().items()}
