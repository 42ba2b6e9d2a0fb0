"""Weight fillers named by the layer specs' ``weight_filler`` parameter."""
from __future__ import annotations

import math

import torch
from torch import nn


def fill_weight(w: torch.Tensor, filler: str, units: int, blocks: int = 1) -> None:
    """Initialise ``w`` (out x in) in place.

    ``units`` is the layer's number of outputs per gate (H), used by ``uniform``;
    ``blocks`` is the number of gate blocks stacked along dim 0 (orthogonal fills each).
    """
    with torch.no_grad():
        if filler == "xavier":
            nn.init.xavier_uniform_(w)
        elif filler == "uniform":
            bound = 1.0 / math.sqrt(max(units, 1))
            w.uniform_(-bound, bound)
        elif filler == "gaussian":
            w.normal_(0.0, 0.01)
        elif filler == "orthogonal":
            for block in w.chunk(blocks, 0):
                nn.init.orthogonal_(block)
        elif filler == "zero":
            w.zero_()
        elif filler == "torch_default":
            pass  # the module's own initialisation stays
        else:  # pragma: no cover - the spec's choices guard this
            raise ValueError(f"unknown filler {filler!r}")


def fill_bias(b: torch.Tensor | None, value: float) -> None:
    if b is not None:
        with torch.no_grad():
            b.fill_(value)
