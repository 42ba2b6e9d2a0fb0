"""The arithmetic of the RG-LRU (De et al., 2024, "Griffin"; the equations:
:mod:`designer.cells.rglru.spec`).

A step is ``h_t = a_t * h_{t-1} + b_t`` with a_t and b_t made from the step's input transform
``xw_t = W_xc x_t + b_c`` (blocks [r, i, u]) and the chain's ``Lambda`` alone (:func:`terms`):
log a_t = -c sigmoid(r) softplus(-Λ), b_t = sqrt(1 - a_t^2) sigmoid(i) u. The square root's
argument is -expm1(2 log a_t), exact however close a_t comes to 1.

:func:`rglru_unit` is one step in that sequential form (what the unrolled engine's
RG_LRU_UNIT computes); :func:`rglru_layers` a whole layer, every step at once by the linear
scan the engines share (:func:`designer.engines.tensors.linear_scan.scan_steps`), in plain
arithmetic since b_t takes either sign. :func:`initial_lambda` draws Λ as the paper does.

Everything here uses torch alone: the PyTorch export copies these functions, and the scan's that
they call, into ``model.py``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from designer.engines.tensors.linear_scan import SCAN_CHUNK, scan_steps

C = 8.0  # the paper's constant: a_t = a^(c r_t)


def terms(xw, lam):
    """a_t and b_t of ``h_t = a_t h_{t-1} + b_t`` from the input transform xw (..., 3H) and
    the chain's Lambda (H)."""
    r, i, u = xw.chunk(3, -1)
    log_a = torch.sigmoid(r) * (-C * F.softplus(-lam))  # the product keeps r's gate alone
    return torch.exp(log_a), torch.sqrt(-torch.expm1(2 * log_a)) * (torch.sigmoid(i) * u)


def rglru_unit(h_prev, xw, lam):
    """One step in the paper's sequential form: the new h from h_prev and the step's xw."""
    a, b = terms(xw, lam)
    return a * h_prev + b


def initial_lambda(size, low=0.9, high=0.999, generator=None):
    """Lambda (size) such that a^c, a = sigmoid(Lambda), is uniform in [low, high]."""
    a = torch.empty(size).uniform_(low, high, generator=generator) ** (1.0 / C)
    return torch.log(a) - torch.log1p(-a)


def rglru_layers(weights, x, h0, levels, directions=1, lengths=None, dropout=0.0,
                 training=False, chunk=SCAN_CHUNK):
    """A whole RG-LRU layer on time-major x (T, N, E).

    ``weights`` holds ``W_xc_l{k}``, ``b_c_l{k}`` and ``Lambda_l{k}`` per level k
    (``..._reverse`` for the backward direction), ``h0`` (levels * directions, N, H) the
    starting state (index ``directions * level + direction``), ``lengths`` (N) each
    sequence's valid steps (None: all). Returns y (T, N, directions * H) and the final state.
    """
    finals = []
    for k in range(levels):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:directions]):
            xw = F.linear(x, weights[f"W_xc_l{k}{sfx}"], weights[f"b_c_l{k}{sfx}"])
            lam = weights[f"Lambda_l{k}{sfx}"]
            hs, last = scan_steps(xw, h0[k * directions + d], lambda v: terms(v, lam), None,
                                  lengths, d == 1, chunk)
            outs.append(hs)
            finals.append(last)
        x = outs[0] if directions == 1 else torch.cat(outs, -1)
        if dropout and k < levels - 1:
            x = F.dropout(x, dropout, training)
    return x, torch.stack(finals)
