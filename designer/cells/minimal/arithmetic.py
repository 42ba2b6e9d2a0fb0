"""The arithmetic of MinGRU and MinLSTM (Feng et al., 2024, "Were RNNs All We Needed?").

A step of either is ``h_t = a_t * h_{t-1} + b_t`` with a_t and b_t made from the step's input
transform ``xw_t = W_xc x_t + b_c`` alone (:func:`terms`):

- MinGRU, blocks [z, h]: a = 1 - z, b = z * g(v), with z = sigmoid(k);
- MinLSTM, blocks [f, i, h]: a = f' = f / (f + i), b = i' * g(v), with i' = i / (f + i);

where g(v) = v + 0.5 for v >= 0 and sigmoid(v) below (positive everywhere).

:func:`min_unit` is one step in that sequential form (what the unrolled engine's MIN_GRU_UNIT and
MIN_LSTM_UNIT nodes compute). The SCAN engine computes all steps at once by the scan of
:mod:`designer.engines.tensors.linear_scan`: in log space in chunks of ``SCAN_CHUNK``
(:func:`log_terms` gives log a and log b without leaving log space; b is positive), or on the CPU
each chunk's steps in turn in plain arithmetic (``method="linear"``; the default there, ``"log"``
elsewhere). Both compute the same function (tested against each other and the unrolled net). The
starting state enters outside the logarithm, so it may be zero or negative (the paper's log-space
code takes a logarithm of its start, which must then be positive).

Everything here uses torch alone: the PyTorch export copies these functions, and the scan's that
they call, into ``model.py``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from designer.engines.tensors.linear_scan import SCAN_CHUNK, scan_steps


def g(v):
    """The paper's candidate activation: v + 0.5 for v >= 0, sigmoid(v) below."""
    return torch.where(v >= 0, v + 0.5, torch.sigmoid(v))


def log_g(v):
    """log g(v), computed without leaving log space below 0 (its slope at 0 is g's, 1/g)."""
    pos = v >= 0
    return torch.where(pos, torch.log(torch.where(pos, v, 0.0) + 0.5), -F.softplus(-v))


def terms(kind, xw):
    """a_t and b_t of ``h_t = a_t h_{t-1} + b_t`` from the input transform xw."""
    if kind == "MinGRU":
        k, v = xw.chunk(2, -1)
        z = torch.sigmoid(k)
        return 1 - z, z * g(v)
    kf, ki, v = xw.chunk(3, -1)
    f, i = torch.sigmoid(kf), torch.sigmoid(ki)
    return f / (f + i), i / (f + i) * g(v)


def log_terms(kind, xw):
    """log a_t and log b_t, computed in log space."""
    if kind == "MinGRU":
        k, v = xw.chunk(2, -1)
        return -F.softplus(k), -F.softplus(-k) + log_g(v)  # log(1 - z), log z + log g(v)
    kf, ki, v = xw.chunk(3, -1)
    d = F.softplus(-kf) - F.softplus(-ki)  # log i - log f
    return -F.softplus(d), -F.softplus(-d) + log_g(v)  # log f', log i' + log g(v)


def min_unit(kind, h_prev, xw):
    """One step in the paper's sequential form: the new h from h_prev and the step's xw."""
    a, b = terms(kind, xw)
    return a * h_prev + b


def scan_direction(kind, xw, h0, lengths=None, reverse=False, chunk=SCAN_CHUNK, method=None):
    """One direction of one level: (every h_t (T, N, H), the final state (N, H)).

    ``xw`` (T, N, G*H) is the input transform, ``lengths`` (N) each sequence's valid steps on
    xw's device (None: all). Padded steps output zero and keep the state: the final state is
    the one after each sequence's last valid step (the backward direction's: after step 0), a
    sequence of length 0 keeps h0. Computes in float32 at least (float64 stays); ``method``:
    ``log`` or ``linear`` (see the module doc; None: by device).
    """
    return scan_steps(xw, h0, lambda v: terms(kind, v), lambda v: log_terms(kind, v), lengths,
                      reverse, chunk, method)


def min_layers(kind, weights, x, h0, levels, directions=1, lengths=None, dropout=0.0,
               training=False, chunk=SCAN_CHUNK, method=None):
    """A whole MinGRU or MinLSTM layer on time-major x (T, N, E).

    ``weights`` holds ``W_xc_l{k}`` and ``b_c_l{k}`` per level k (``..._reverse`` for the
    backward direction), ``h0`` (levels * directions, N, H) the starting state (index
    ``directions * level + direction``). Returns y (T, N, directions * H) and the final state.
    """
    finals = []
    for k in range(levels):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:directions]):
            xw = F.linear(x, weights[f"W_xc_l{k}{sfx}"], weights[f"b_c_l{k}{sfx}"])
            hs, last = scan_direction(kind, xw, h0[k * directions + d], lengths, d == 1, chunk,
                                      method)
            outs.append(hs)
            finals.append(last)
        x = outs[0] if directions == 1 else torch.cat(outs, -1)
        if dropout and k < levels - 1:
            x = F.dropout(x, dropout, training)
    return x, torch.stack(finals)
