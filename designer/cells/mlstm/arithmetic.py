"""The arithmetic of the mLSTM (Beck et al., 2024, "xLSTM"), in its two forms.

A level reads the input transform ``xw_t = W_xc x_t + b_c`` of each step, blocks
[q (H), k (H), v (H), o (H), i~ (NH), f~ (NH)] (:func:`terms`: the key is divided by sqrt(d),
d = H/NH, and log f is logsigmoid(f~) or f~ itself for an exponential forget gate). Per head,
stabilised as in the paper's appendix:

    m_t = max(log f_t + m_{t-1}, i~_t)
    C_t = exp(log f_t + m_{t-1} - m_t) C_{t-1} + exp(i~_t - m_t) v_t k_t^T
    n_t = exp(log f_t + m_{t-1} - m_t) n_{t-1} + exp(i~_t - m_t) k_t
    h_t = o_t * norm((C_t q_t) / max(|n_t^T q_t|, exp(-m_t)))

``norm`` (the layer's ``cell_norm``): "head" normalises each head's d values to zero mean and
unit variance (the xLSTM package's per-head layer norm, without its learned scale), "none" is
the identity.

:func:`mlstm_unit` is one step of it (the unrolled engine's MLSTM_UNIT, and generation).
:func:`chunk_level` computes the same function chunkwise: with b_t the sum of log f over the
chunk up to t, the decay matrix log D[t, s] = b_t - b_s + i~_s (s <= t) and the carried
state's weight g_t = b_t + m_start, the stabiliser m_t = max(g_t, max_s log D[t, s]) is the
recurrent one exactly, and

    h_t = o_t * (sum_s exp(log D[t,s] - m_t) (q_t.k_s) v_s + exp(g_t - m_t) C_start q_t) / den

with den from the normaliser alike. The states at the chunks' starts are carried one chunk
after another (a few small products per chunk); the outputs of every chunk then come at once,
as batched matrix products. Padded steps (past a sequence's length, and the last chunk's
fill) get log f = 0 and i~ = -inf: they keep the state exactly and pass no gradient.

States are flattened per sequence so that they are carried as any recurrent state is: C as
(N, NH*d*d) (per head, rows the value's index and columns the key's), n (N, H), m (N, NH).

Everything here uses torch alone: the PyTorch export copies these functions into ``model.py``.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

CHUNK = 64  # steps of a chunk on the CHUNK engine
NORM_EPS = 1e-5  # the per-head normalisation's epsilon (the xLSTM package's)


def head_norm(h, norm: str = "head"):
    """h (..., NH, d) normalised over each head's d values (``norm`` "head"), or as it is."""
    return F.layer_norm(h, h.shape[-1:], eps=NORM_EPS) if norm == "head" else h


def terms(xw, heads: int, forget: str = "sigmoid"):
    """(q, k, v, o, i~, log f) from the input transform xw (..., 4H + 2NH): q, k, v of shape
    (..., NH, d), the key divided by sqrt(d); o = sigmoid (..., H); i~ and log f (..., NH)."""
    h = (xw.shape[-1] - 2 * heads) // 4
    d = h // heads
    q, k, v, o, ig, fg = xw.split((h, h, h, h, heads, heads), -1)
    lead = xw.shape[:-1]
    q, k, v = (t.reshape(*lead, heads, d) for t in (q, k, v))
    # log sigmoid as -softplus(-x): torch's logsigmoid takes milliseconds on a strided CPU view
    log_f = -F.softplus(-fg) if forget == "sigmoid" else fg
    return q, k / math.sqrt(d), v, torch.sigmoid(o), ig, log_f


def mlstm_unit(c_prev, n_prev, m_prev, xw, cont=None, heads: int = 1,
               forget_gate: str = "sigmoid", norm: str = "head"):
    """One step of the recurrent form: (C_t, n_t, m_t, h_t) from the state the step finds and
    the step's input transform; ``cont`` (0: the sequence restarts here) zeroes that state."""
    if cont is not None:
        keep = cont.unsqueeze(-1)
        c_prev, n_prev, m_prev = c_prev * keep, n_prev * keep, m_prev * keep
    q, k, v, o, ig, log_f = terms(xw, heads, forget_gate)
    d = q.shape[-1]
    lead = xw.shape[:-1]
    c = c_prev.reshape(*lead, heads, d, d)
    n = n_prev.reshape(*lead, heads, d)
    m = torch.maximum(log_f + m_prev, ig)
    f_, i_ = torch.exp(log_f + m_prev - m), torch.exp(ig - m)
    c = f_[..., None, None] * c + i_[..., None, None] * (v.unsqueeze(-1) * k.unsqueeze(-2))
    n = f_.unsqueeze(-1) * n + i_.unsqueeze(-1) * k
    num = (c @ q.unsqueeze(-1)).squeeze(-1)
    den = torch.maximum((n * q).sum(-1).abs(), torch.exp(-m))
    h = o * head_norm(num / den.unsqueeze(-1), norm).reshape(o.shape)
    return c.reshape(c_prev.shape), n.reshape(n_prev.shape), m, h


def _by_chunks(t, chunk: int, fill: float):
    """(T, N, NH, ...) -> (N, NH, chunks, chunk, ...), the last chunk filled with ``fill``."""
    steps = t.shape[0]
    pieces = -(-steps // chunk)
    if pieces * chunk > steps:
        pad = t.new_full((pieces * chunk - steps,) + tuple(t.shape[1:]), fill)
        t = torch.cat([t, pad], 0)
    t = t.reshape(pieces, chunk, *t.shape[1:])
    return t.permute(2, 3, 0, 1, *range(4, t.dim())).contiguous()


def chunk_level(xw, state, heads: int, forget: str = "sigmoid", lengths=None,
                chunk: int = CHUNK, norm: str = "head"):
    """One level on time-major xw (T, N, 4H + 2NH), chunkwise: (every h_t (T, N, H), the
    final (C, n, m)). ``state`` is (C, n, m) as (N, ...) each; ``lengths`` (N) each
    sequence's valid steps (None: all): padded steps output zero and keep the state."""
    steps, batch = xw.shape[0], xw.shape[1]
    chunk = min(chunk, steps)  # a short call (a step of generation) is one chunk of its own
    q, k, v, o, ig, log_f = terms(xw, heads, forget)
    d = q.shape[-1]
    if lengths is not None:
        valid = (torch.arange(steps, device=xw.device).view(steps, 1, 1)
                 < lengths.view(1, batch, 1))
        ig = torch.where(valid, ig, -math.inf)
        log_f = torch.where(valid, log_f, 0.0)
    q, k, v = (_by_chunks(t, chunk, 0.0) for t in (q, k, v))  # (N, NH, P, L, d)
    ig, log_f = _by_chunks(ig, chunk, -math.inf), _by_chunks(log_f, chunk, 0.0)  # (N, NH, P, L)
    b = log_f.cumsum(-1)
    causal = torch.ones(chunk, chunk, dtype=torch.bool, device=xw.device).tril()
    log_d = torch.where(causal, b.unsqueeze(-1) - b.unsqueeze(-2) + ig.unsqueeze(-2),
                        -math.inf)  # (N, NH, P, L, L): row t, column s
    to_end = log_d[..., -1, :]  # log D[L, s]: step s's weight at the chunk's end
    c0, n0, m0 = state
    c = c0.reshape(batch, heads, d, d)
    n, m = n0.reshape(batch, heads, d), m0
    starts = []
    for p in range(q.shape[2]):  # the state at each chunk's start, one chunk after another
        starts.append((c, n, m))
        m_new = torch.maximum(b[:, :, p, -1] + m, to_end[:, :, p].amax(-1))
        decay = torch.exp(b[:, :, p, -1] + m - m_new)
        w = torch.exp(to_end[:, :, p] - m_new.unsqueeze(-1))  # (N, NH, L)
        c = decay[..., None, None] * c + (v[:, :, p] * w.unsqueeze(-1)).transpose(-1, -2) \
            @ k[:, :, p]
        n = decay.unsqueeze(-1) * n + (w.unsqueeze(-1) * k[:, :, p]).sum(-2)
        m = m_new
    cs, ns, ms = (torch.stack(s, 2) for s in zip(*starts))  # (N, NH, P, ...)
    g = b + ms.unsqueeze(-1)  # the carried state's log weight at each step
    m_t = torch.maximum(g, log_d.amax(-1))
    s = (q @ k.transpose(-1, -2)) * torch.exp(log_d - m_t.unsqueeze(-1))
    carried = torch.exp(g - m_t)
    num = s @ v + carried.unsqueeze(-1) * (q @ cs.transpose(-1, -2))
    nq = s.sum(-1) + carried * (q * ns.unsqueeze(-2)).sum(-1)
    den = torch.maximum(nq.abs(), torch.exp(-m_t))
    hs = head_norm(num / den.unsqueeze(-1), norm)  # (N, NH, P, L, d)
    hs = hs.permute(2, 3, 0, 1, 4).reshape(-1, batch, heads * d)[:steps] * o
    if lengths is not None:
        hs = torch.where(valid.view(steps, batch, 1), hs, 0.0)
    return hs, (c.reshape(c0.shape), n.reshape(n0.shape), m)


def mlstm_layers(weights, x, state, levels: int, heads: int, forget: str = "sigmoid",
                 lengths=None, dropout: float = 0.0, training: bool = False,
                 chunk: int = CHUNK, norm: str = "head"):
    """A whole mLSTM layer on time-major x (T, N, E), chunkwise.

    ``weights`` holds ``W_xc_l{k}`` and ``b_c_l{k}`` per level k, ``state`` (C, n, m) each
    (levels, N, ...). Returns y (T, N, H) and the final state in the same layout.
    """
    finals = []
    for k in range(levels):
        xw = F.linear(x, weights[f"W_xc_l{k}"], weights[f"b_c_l{k}"])
        x, last = chunk_level(xw, tuple(s[k] for s in state), heads, forget, lengths, chunk,
                              norm)
        finals.append(last)
        if dropout and k < levels - 1:
            x = F.dropout(x, dropout, training)
    return x, tuple(torch.stack(s) for s in zip(*finals))
