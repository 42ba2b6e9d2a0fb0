"""A linear recurrence over every step at once: ``h_t = a_t * h_{t-1} + b_t``, element by
element, with a_t and b_t known for every step before the first is computed (a cell whose
gates read only the input). The SCAN engines of such cells run on it.

:func:`scan_log` computes all steps at once in log space, after Heinsen (2023): with a*_t =
sum of log a up to t, ``log h_t = a*_t + logcumsumexp(log b - a*)_t``; it needs a positive
b_t. In float32 that sum loses about 6e-8 x |a*_t| of log h (5e-5 of h after 1,000 steps of an
untrained layer, and more in the gradients, which torch's logcumsumexp takes as the difference
of two log-space sums), so the steps are scanned in chunks of ``SCAN_CHUNK``: every chunk at
once, from a zero state, then the chunks chained one after another in plain arithmetic, ``h =
local_t + decay_t * h_start`` (a positive decay, nothing cancels). Chunks of 16 keep outputs
and gradients within about 3e-6 of float64 (chunks of 32 let gradients stray past 1e-5). The
starting state enters the same way, outside the logarithm, so it may be zero or negative.

:func:`scan_linear` computes the same from a_t and b_t of any sign: the chunks side by side,
each chunk's steps one after another, in plain arithmetic. On the CPU, torch's logcumsumexp
costs twenty times its exp, log and cumsum, and two cores gain nothing from a chunk's steps
at once, so it is the default there.

:func:`scan_steps` is one direction of one level over padded sequences (``lengths``), either
way round. Everything here uses torch alone: the PyTorch export copies these functions into
``model.py`` with the cell's arithmetic that calls them.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

SCAN_CHUNK = 16  # steps scanned at once (log space in float32: errors of about 3e-6 of h)


def chunked(t, size, value):
    """(T, ...) -> (chunks, size, ...), the last chunk filled up with ``value``."""
    pieces = -(-t.shape[0] // size)
    pad = pieces * size - t.shape[0]
    if pad:  # steps after the last: finite, and never read
        t = F.pad(t, (0, 0) * (t.dim() - 1) + (0, pad), value=value)
    return t.reshape(pieces, size, *t.shape[1:])


def chain(local, decay, h0, steps):
    """Every h_t from each chunk's run from a zero state (``local``) and the product of its a
    since the chunk began (``decay``): the chunks' starting states one after another."""
    starts, h = [], h0
    for end, kept in zip(local[:, -1].unbind(0), decay[:, -1].unbind(0)):
        starts.append(h)
        h = torch.addcmul(end, kept, h)
    hs = local + decay * torch.stack(starts).unsqueeze(1)
    return hs.reshape(-1, *hs.shape[2:])[:steps]


def scan_log(log_a, log_b, h0, chunk=SCAN_CHUNK):
    """Every h_t of ``h_t = a_t h_{t-1} + b_t`` from log a, log b (T, N, H) and h0 (N, H):
    each chunk in log space, all at once."""
    size = min(chunk, log_a.shape[0])
    a_star = chunked(log_a, size, 0.0).cumsum(1)
    log_b = chunked(log_b, size, 0.0)
    local = torch.exp(a_star + torch.logcumsumexp(log_b - a_star, 1))  # from a zero state
    return chain(local, torch.exp(a_star), h0, log_a.shape[0])


def scan_linear(a, b, h0, chunk=SCAN_CHUNK):
    """The same from a, b (T, N, H): the chunks side by side, each one's steps in turn."""
    size = min(chunk, a.shape[0])
    a4, b4 = chunked(a, size, 1.0), chunked(b, size, 1.0)
    a_t, b_t = a4.unbind(1), b4.unbind(1)  # one backward node each, not one per step
    local = [b_t[0]]
    for t in range(1, size):
        local.append(torch.addcmul(b_t[t], a_t[t], local[-1]))
    return chain(torch.stack(local, 1), torch.cumprod(a4, 1), h0, a.shape[0])


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


def scan_steps(xw, h0, terms, log_terms=None, lengths=None, reverse=False, chunk=SCAN_CHUNK,
               method=None):
    """One direction of one level: (every h_t (T, N, H), the final state (N, H)).

    ``xw`` (T, N, ...) is what a_t and b_t are made of, step by step: ``terms(xw)`` gives a
    and b, ``log_terms(xw)`` log a and log b (None: b may be negative, the scan stays
    linear). ``lengths`` (N) holds each sequence's valid steps on xw's device (None: all).
    Padded steps output zero and keep the state: the final state is the one after each
    sequence's last valid step (the backward direction's: after step 0), a sequence of length
    0 keeps h0. Computes in float32 at least (float64 stays); ``method``: ``log`` or
    ``linear`` (see the module doc; None: linear on the CPU, else log); without log_terms
    always linear.
    """
    wide = torch.promote_types(xw.dtype, torch.float32)
    xw, h0 = xw.to(wide), h0.to(wide)
    steps, n = xw.shape[0], xw.shape[1]
    if reverse:
        xw = reverse_valid(xw, lengths)
    if log_terms is not None and (method or ("linear" if xw.device.type == "cpu" else
                                              "log")) == "log":
        hs = scan_log(*log_terms(xw), h0, chunk)
    else:
        hs = scan_linear(*terms(xw), h0, chunk)
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
