"""Random variations of training batches for the sequence data layers (``jitter``, ``scaling``
and ``window_slice`` of ``SequenceClasses`` and ``TimeSeries``), off by default.

Only ``next_batch("train")`` applies them; validation, test, evaluate, predict and inspect read
the data as it is. Everything is done on the normalised inputs, in this order:

``window_slice`` (f < 1)
    Window slicing (Le Guennec, Malinowski and Tavenard 2016) with the slice stretched back
    to the sequence's length by linear interpolation, so shapes, ``lengths`` and the zero
    padding after each end stay as they were (a classifier sees training sequences of the
    lengths the test split has). A labelled sequence keeps a stretch of ``f`` of its steps
    that starts at random. A forecasting window must still end where its forecast starts, so
    its slice ends at the window's last step and keeps a random share between ``f`` and 1.
``scaling`` (s > 0)
    Each sequence's channels are multiplied by factors drawn from N(1, s^2), one per channel.
``jitter`` (j > 0)
    Noise from N(0, j^2) is added to every valid step (the padding stays zero).

The draws come from one generator of their own, seeded from the run's seed, so two runs with
the same seed see the same variations, and its state is saved in the source's
``state_dict``: a resumed run draws what an uninterrupted one would. The draws are made for
the whole global batch of a data-parallel run and shared out like its rows, so the generator
advances alike on every rank. An option that is off draws nothing, so batches without
augmentation are exactly those of before.
"""
from __future__ import annotations

import numpy as np
import torch

from designer.training.data.base import byte_state

SALT = 3  # the splits' generators use 0, 1 and 2


class Augmentation:
    """The training-batch variations a sequence data layer asks for.

    Parameters
    ----------
    params : dict
        The data layer's effective parameters (``jitter``, ``scaling``, ``window_slice``;
        missing ones are off).
    seed : int
        The run's seed.
    anchor_end : bool
        Slices end at the last valid step and keep a random share (forecasting windows),
        rather than a fixed share that starts at random (labelled sequences).
    """

    def __init__(self, params: dict, seed: int, anchor_end: bool = False):
        self.jitter = float(params.get("jitter", 0.0))
        self.scaling = float(params.get("scaling", 0.0))
        self.window_slice = float(params.get("window_slice", 1.0))
        self.anchor_end = anchor_end
        words = np.random.SeedSequence([int(seed) % 2**64, SALT]).generate_state(2, np.uint32)
        self.generator = torch.Generator()
        self.generator.manual_seed((int(words[0]) << 32) | int(words[1]))
        self._first = self.generator.get_state()

    def restart(self) -> None:
        """Draw again from the seed, as a fresh run does."""
        self.generator.set_state(self._first)

    @property
    def active(self) -> bool:
        return self.jitter > 0 or self.scaling > 0 or self.window_slice < 1

    def describe(self) -> str:
        """``"jitter 0.05, scaling 0.1"``: the options that are on, for the user's notes."""
        on = [f"{name} {value:g}" for name, value, off in
              (("jitter", self.jitter, 0.0), ("scaling", self.scaling, 0.0),
               ("window_slice", self.window_slice, 1.0)) if value != off]
        return ", ".join(on)

    def apply(self, data: torch.Tensor, lengths: torch.Tensor, rows: int, mine) -> torch.Tensor:
        """``data`` (T, n, F) varied; the draws are made for the global batch of ``rows``
        sequences, of which ``mine`` picks this process's block (as it picked ``data``'s).

        ``lengths`` (n,) are each sequence's valid steps; what lies after them is left as it
        is. Returns a new tensor; ``data`` is not changed.
        """
        steps, _, features = data.shape
        g, kind = self.generator, data.dtype
        shares = mine(torch.rand(rows, generator=g)) if self.window_slice < 1 else None
        factors = (mine(1 + self.scaling * torch.randn(rows, features, generator=g)).to(kind)
                   if self.scaling > 0 else None)
        noise = (mine(self.jitter * torch.randn(rows, steps, features, generator=g)).to(kind)
                 if self.jitter > 0 else None)
        valid = torch.arange(steps)[:, None] < lengths[None, :]             # (T, n)
        out = data.clone()
        if shares is not None:
            out = self._slice(out, lengths, shares, valid)
        if factors is not None:
            out = out * factors[None, :, :]
        if noise is not None:
            out = out + noise.transpose(0, 1) * valid[:, :, None]
        return out

    def _slice(self, data: torch.Tensor, lengths: torch.Tensor, u: torch.Tensor,
               valid: torch.Tensor) -> torch.Tensor:
        """Each sequence's slice stretched over its valid steps by linear interpolation."""
        last = (lengths.to(torch.float64) - 1).clamp(min=0)                # (n,)
        u = u.to(torch.float64)
        if self.anchor_end:
            share = self.window_slice + (1 - self.window_slice) * u
            start = (1 - share) * last
        else:
            share = torch.full_like(u, self.window_slice)
            start = u * (1 - share) * last
        j = torch.arange(data.shape[0], dtype=torch.float64)[:, None]      # (T, 1)
        where = torch.minimum(start[None, :] + share[None, :] * j, last[None, :])
        lo = where.floor().long()
        hi = torch.minimum(lo + 1, last.long()[None, :])
        w = (where - lo).to(data.dtype)[:, :, None]
        f = data.shape[2]
        a = data.gather(0, lo[:, :, None].expand(-1, -1, f))
        b = data.gather(0, hi[:, :, None].expand(-1, -1, f))
        return torch.where(valid[:, :, None], a + w * (b - a), data)

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict | None) -> None:
        """Continue from a saved state; a checkpoint made before augmentation existed (or
        without it) has none, and the generator starts afresh from the seed."""
        if state and "generator" in state:
            self.generator.set_state(byte_state(state["generator"]))
        else:
            self.restart()
