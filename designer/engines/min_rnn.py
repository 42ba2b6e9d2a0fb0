"""The arithmetic of MinGRU and MinLSTM (Feng et al., 2024, "Were RNNs All We Needed?").

A step of either is ``h_t = a_t * h_{t-1} + b_t`` with a_t and b_t made from the step's input
transform ``xw_t = W_xc x_t + b_c`` alone:

- MinGRU, blocks [z, h]: a = 1 - z, b = z * g(v), with z = sigmoid(k);
- MinLSTM, blocks [f, i, h]: a = f' = f / (f + i), b = i' * g(v), with i' = i / (f + i);

where g(v) = v + 0.5 for v >= 0 and sigmoid(v) below (positive everywhere).

:func:`min_unit` is one step in that sequential form (what the unrolled engine's MIN_GRU_UNIT and
MIN_LSTM_UNIT nodes compute). :func:`scan_log` computes all steps at once in log space, after
Heinsen (2023): with a*_t = sum of log a up to t, ``log h_t = a*_t + logcumsumexp(log b - a*)_t``.
In float32 that sum loses about 6e-8 x |a*_t| of log h (5e-5 of h after 1,000 steps of an
untrained layer), so the steps are scanned in chunks of ``SCAN_CHUNK``: every chunk at once,
from a zero state, then the chunks chained one after another in plain arithmetic,
``h = local_t + decay_t * h_start`` (a positive decay, nothing cancels). The starting state
enters the same way, outside the logarithm, so it may be zero or negative (the paper's
log-space code takes log h_0 and needs it positive).

Everything here uses torch alone: the PyTorch export copies these functions into ``model.py``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

SCAN_CHUNK = 32  # steps scanned in log space at once (float32 error about 3e-6 of h)


def g(v):
    """The paper's candidate activation: v + 0.5 for v >= 0, sigmoid(v) below."""
    return torch.where(v >= 0, v + 0.5, torch.sigmoid(v))


def log_g(v):
    """log g(v), computed without leaving log space below 0."""
    return torch.where(v >= 0, torch.log(F.relu(v) + 0.5), -F.softplus(-v))


def log_terms(kind, xw):
    """log a_t and log b_t of ``h_t = a_t h_{t-1} + b_t`` from the input transform xw."""
    if kind == "MinGRU":
        k, v = xw.chunk(2, -1)
        return -F.softplus(k), -F.softplus(-k) + log_g(v)  # log(1 - z), log z + log g(v)
    kf, ki, v = xw.chunk(3, -1)
    d = F.softplus(-kf) - F.softplus(-ki)  # log i - log f
    return -F.softplus(d), -F.softplus(-d) + log_g(v)  # log f', log i' + log g(v)


def min_unit(kind, h_prev, xw):
    """One step in the paper's sequential form: the new h from h_prev and the step's xw."""
    if kind == "MinGRU":
        k, v = xw.chunk(2, -1)
        z = torch.sigmoid(k)
        return (1 - z) * h_prev + z * g(v)
    kf, ki, v = xw.chunk(3, -1)
    f, i = torch.sigmoid(kf), torch.sigmoid(ki)
    return f / (f + i) * h_prev + i / (f + i) * g(v)


def scan_log(log_a, log_b, h0, chunk=SCAN_CHUNK):
    """Every h_t of ``h_t = a_t h_{t-1} + b_t`` from log a, log b (T, N, H) and h0 (N, H)."""
    steps = log_a.shape[0]
    size = min(chunk, steps)
    pieces = -(-steps // size)
    pad = pieces * size - steps
    if pad:  # steps after the last: a = b = 1, finite and never read
        log_a = F.pad(log_a, (0, 0, 0, 0, 0, pad))
        log_b = F.pad(log_b, (0, 0, 0, 0, 0, pad))
    log_a = log_a.reshape(pieces, size, *log_a.shape[1:])
    log_b = log_b.reshape(pieces, size, *log_b.shape[1:])
    a_star = log_a.cumsum(1)
    local = torch.exp(a_star + torch.logcumsumexp(log_b - a_star, 1))  # from a zero state
    decay = torch.exp(a_star)
    starts, h = [], h0
    for c in range(pieces):  # chain the chunks: the state each one starts from
        starts.append(h)
        h = torch.addcmul(local[c, -1], decay[c, -1], h)
    hs = local + decay * torch.stack(starts).unsqueeze(1)
    return hs.reshape(pieces * size, *hs.shape[2:])[:steps]


class ReverseValid(torch.autograd.Function):
    """x (T, N, F) with each sequence's first ``lengths[n]`` steps in reverse order and its
    padding left in place. Reversing twice gives x back, so the gradient is reversed alike
    (and, unlike ``gather``'s, the backward pass keeps no copy of x)."""

    @staticmethod
    def forward(ctx, x, lengths):
        steps, n = x.shape[0], x.shape[1]
        t = torch.arange(steps, device=x.device).unsqueeze(1)
        lens = lengths.view(1, n)
        idx = torch.where(t < lens, lens - 1 - t, t).unsqueeze(-1)
        ctx.save_for_backward(idx)
        return x.gather(0, idx.expand(-1, -1, x.shape[-1]))

    @staticmethod
    def backward(ctx, grad):
        (idx,) = ctx.saved_tensors
        return grad.gather(0, idx.expand(-1, -1, grad.shape[-1])), None


def reverse_valid(x, lengths):
    """x with each sequence's valid steps reversed (all of them when lengths is None)."""
    return x.flip(0) if lengths is None else ReverseValid.apply(x, lengths)


def scan_direction(kind, xw, h0, lengths=None, reverse=False, chunk=SCAN_CHUNK):
    """One direction of one level: (every h_t (T, N, H), the final state (N, H)).

    ``xw`` (T, N, G*H) is the input transform, ``lengths`` (N) each sequence's valid steps on
    xw's device (None: all). Padded steps output zero and keep the state: the final state is
    the one after each sequence's last valid step (the backward direction's: after step 0), a
    sequence of length 0 keeps h0. Computes in float32 at least (float64 stays).
    """
    wide = torch.promote_types(xw.dtype, torch.float32)
    xw, h0 = xw.to(wide), h0.to(wide)
    steps, n = xw.shape[0], xw.shape[1]
    if reverse:
        xw = reverse_valid(xw, lengths)
    log_a, log_b = log_terms(kind, xw)
    hs = scan_log(log_a, log_b, h0, chunk)
    if lengths is None:
        last = hs[-1]
    else:
        at = (lengths - 1).clamp(min=0)
        last = torch.where(lengths.view(n, 1) > 0, hs[at, torch.arange(n, device=at.device)],
                           h0)
        valid = torch.arange(steps, device=xw.device).view(steps, 1, 1) < lengths.view(1, n, 1)
        hs = torch.where(valid, hs, 0.0)
    if reverse:
        hs = reverse_valid(hs, lengths)
    return hs, last


def min_layers(kind, weights, x, h0, levels, directions=1, lengths=None, dropout=0.0,
               training=False, chunk=SCAN_CHUNK):
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
            hs, last = scan_direction(kind, xw, h0[k * directions + d], lengths, d == 1, chunk)
            outs.append(hs)
            finals.append(last)
        x = outs[0] if directions == 1 else torch.cat(outs, -1)
        if dropout and k < levels - 1:
            x = F.dropout(x, dropout, training)
    return x, torch.stack(finals)
