"""The arithmetic of the sLSTM (Beck et al., 2024, "xLSTM: Extended Long Short-Term Memory").

One step (:func:`slstm_unit`) from the pre-activations ``pre = W_xc x_t + b_c + R h_{t-1}``,
gate blocks [i, f, z, o], and the state (c, n, m) it found:

- log i = i~ (the input gate is exponential), log f = logsigmoid(f~) (or f~ for an exp forget
  gate);
- the stabiliser m = max(log f + m_prev, log i); where the normaliser n_prev is zero (a state
  that starts or restarts), m = log i, as the xLSTM code does when it starts;
- i' = exp(log i - m), f' = exp(log f + m_prev - m) (0 where n_prev is zero);
- c = f' c_prev + i' tanh(z~), n = f' n_prev + i', h = sigmoid(o~) * c / n.

m cancels in c / n, so h is the unstabilised cell's; after the first step n >= 1 (one of i' and
f' is 1), so the division is safe. The recurrent matrix R is block-diagonal: per head its own
(4d x d) block ``W_hc[k]`` (rows [i, f, z, o], d each) reads that head's d units of h.

:func:`slstm_direction` runs one direction of one level with the heads side by side: the
input transform is permuted once to (T, heads, N, 4d), and each step is one batched matrix
product over the heads (``baddbmm``) and the unit, no copy of the state. Everything here uses
torch alone: the PyTorch export copies these functions into ``model.py``.

:class:`KernelGradUnit` is :func:`slstm_unit` with the persistent kernels' gradient, written
out (:func:`designer.engines.triton_slstm._cell_backward`) rather than autograd's through the
unit: the FUSED engine's step loop runs it, so on every device the FUSED engine's gradient is
its own computation, which ``parity`` measures against autograd's through the unrolled net.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def slstm_unit(pre, c, n, m, exp_forget=False):
    """One step: (h, c, n, m) from the pre-activations ``pre`` (..., 4d), gate blocks
    [i, f, z, o] along the last axis, and the state c, n, m (..., d) it found."""
    i_t, f_t, z_t, o_t = pre.chunk(4, -1)
    log_f = f_t if exp_forget else F.logsigmoid(f_t)
    fresh = n == 0
    m_new = torch.where(fresh, i_t, torch.maximum(log_f + m, i_t))
    i_p = torch.exp(i_t - m_new)
    f_p = torch.exp(torch.where(fresh, float("-inf"), log_f + m - m_new))
    c_new = f_p * c + i_p * torch.tanh(z_t)
    n_new = f_p * n + i_p
    return torch.sigmoid(o_t) * c_new / n_new, c_new, n_new, m_new


class KernelGradUnit(torch.autograd.Function):
    """:func:`slstm_unit` forward; backward the persistent kernels' equations, from the saved
    pre-activations and the state the step read: with ``gc = dc + dh o / n`` and ``gn = dn -
    dh h / n`` (the totals on the step's c and n), ``gm = dm - gc c - gn n`` goes to the
    stabiliser's winner (``log f + m_prev`` or ``i~``; half to each on a tie, as
    ``torch.maximum``; all to ``i~`` where the step starts fresh); ``da = (gc c_prev + gn
    n_prev) f'`` plus what the winner ``log f + m_prev`` takes is the gradient of ``log f``
    and of ``m_prev``; ``dc_prev = gc f'``, ``dn_prev = gn f'``."""

    @staticmethod
    def forward(ctx, pre, c, n, m, exp_forget=False):
        ctx.save_for_backward(pre, c, n, m)
        ctx.exp_forget = exp_forget
        return slstm_unit(pre, c, n, m, exp_forget)

    @staticmethod
    def backward(ctx, dh, dc, dn, dm):
        pre, c, n, m = ctx.saved_tensors
        i_t, f_t = pre.chunk(4, -1)[:2]
        a = (f_t if ctx.exp_forget else F.logsigmoid(f_t)) + m
        i_p, f_p, z, o = gates(pre, n, m, ctx.exp_forget)
        c_new, n_new = f_p * c + i_p * z, f_p * n + i_p
        r = c_new / n_new  # h = o r
        gc = dc + dh * o / n_new
        gn = dn - dh * o * r / n_new
        gm = dm - gc * c_new - gn * n_new
        to_a = torch.where((n == 0) | (a < i_t), 0.0, torch.where(a > i_t, gm, 0.5 * gm))
        da = (gc * c + gn * n) * f_p + to_a
        d_pre = torch.cat([(gc * z + gn) * i_p + gm - to_a,
                           da if ctx.exp_forget else da * torch.sigmoid(-f_t),
                           gc * i_p * (1 - z * z), dh * r * o * (1 - o)], -1)
        return d_pre, gc * f_p, gn * f_p, da, None


def kernel_grad_unit(pre, c, n, m, exp_forget=False):
    """:class:`KernelGradUnit` as a function, in :func:`slstm_unit`'s place."""
    return KernelGradUnit.apply(pre, c, n, m, exp_forget)


def gates(pre, n, m, exp_forget=False):
    """The gates of one step as the unit uses them: i', f' (stabilised), z and o."""
    i_t, f_t, z_t, o_t = pre.chunk(4, -1)
    log_f = f_t if exp_forget else F.logsigmoid(f_t)
    fresh = n == 0
    m_new = torch.where(fresh, i_t, torch.maximum(log_f + m, i_t))
    f_p = torch.exp(torch.where(fresh, float("-inf"), log_f + m - m_new))
    return torch.exp(i_t - m_new), f_p, torch.tanh(z_t), torch.sigmoid(o_t)


def head_matmul(h, w_hc):
    """R h for h (..., N, H) and the heads' blocks ``w_hc`` (heads, 4d, d): (..., N, 4H),
    gate blocks [i, f, z, o] of H each (the heads side by side within a block)."""
    heads, g, d = w_hc.shape
    lead = h.shape[:-1]
    hh = h.reshape(-1, heads, d).transpose(0, 1)  # (heads, M, d)
    out = torch.bmm(hh, w_hc.transpose(1, 2))  # (heads, M, 4d)
    out = out.view(heads, -1, 4, d).permute(1, 2, 0, 3)  # (M, 4, heads, d)
    return out.reshape(*lead, 4 * heads * d)


def to_heads(t, heads, blocks=1):
    """(..., N, blocks * heads * d), ``blocks`` blocks of the heads side by side ->
    (..., heads, N, blocks * d)."""
    *lead, n, width = t.shape
    d = width // (blocks * heads)
    t = t.reshape(*lead, n, blocks, heads, d).movedim(-2, -4)  # (..., heads, N, blocks, d)
    return t.reshape(*lead, heads, n, blocks * d)


def from_heads(t):
    """(..., heads, N, d) -> (..., N, heads * d)."""
    t = t.movedim(-3, -2)
    return t.reshape(*t.shape[:-2], -1)


def reverse_valid(x, lengths):
    """x (T, N, ...) with each sequence's first ``lengths[n]`` steps in reverse order, its
    padding left in place (all steps reversed when lengths is None)."""
    if lengths is None:
        return x.flip(0)
    steps, n = x.shape[0], x.shape[1]
    t = torch.arange(steps, device=x.device).unsqueeze(1)
    lens = lengths.view(1, n)
    idx = torch.where(t < lens, lens - 1 - t, t)
    return x.gather(0, idx.view(steps, n, *([1] * (x.dim() - 2))).expand_as(x))


def slstm_direction(xw, w_hc, state, cont=None, lengths=None, reverse=False,
                    exp_forget=False, unit=slstm_unit):
    """One direction of one level: (every h_t (T, N, H), the final state (h, c, n, m)).

    ``xw`` (T, N, 4H) is the input transform, ``w_hc`` (heads, 4d, d) the recurrent blocks,
    ``state`` four (N, H) tensors, ``cont`` (T, N) or None (0: the state is zeroed before the
    step), ``lengths`` (N) each sequence's valid steps or None. Padded steps output zero and
    keep the state; the backward direction reads each sequence from its last valid step.
    ``unit`` computes a step as :func:`slstm_unit` does.
    """
    steps, n = xw.shape[0], xw.shape[1]
    heads = w_hc.shape[0]
    if reverse:
        xw = reverse_valid(xw, lengths)
    xh = to_heads(xw, heads, 4)  # (T, heads, N, 4d): one copy, then contiguous steps
    rt = w_hc.transpose(1, 2)  # (heads, d, 4d)
    h, c, nn_, m = (to_heads(s, heads) for s in state)
    valid = None
    if lengths is not None:
        valid = (torch.arange(steps, device=xw.device).view(steps, 1) <
                 lengths.view(1, n)).view(steps, 1, n, 1)
    keep = None if cont is None else cont.to(xw.dtype).view(steps, 1, n, 1)
    outs = []
    for t in range(steps):
        hk, ck, nk, mk = h, c, nn_, m
        if keep is not None:  # a restart zeroes the state the step reads (held, if padded)
            k = keep[t]
            hk, ck, nk, mk = h * k, c * k, nn_ * k, m * k
        pre = torch.baddbmm(xh[t], hk, rt)
        h2, c2, n2, m2 = unit(pre, ck, nk, mk, exp_forget)
        if valid is not None:
            v = valid[t]
            h, c, nn_, m = (torch.where(v, a, b) for a, b in
                            zip((h2, c2, n2, m2), (h, c, nn_, m)))
            outs.append(torch.where(v, h2, 0.0))
        else:
            h, c, nn_, m = h2, c2, n2, m2
            outs.append(h2)
    hs = from_heads(torch.stack(outs))
    if reverse:
        hs = reverse_valid(hs, lengths)
    return hs, tuple(from_heads(s) for s in (h, c, nn_, m))


def slstm_layers(weights, x, state, levels, directions=1, cont=None, lengths=None,
                 dropout=0.0, training=False, exp_forget=False, direction=slstm_direction):
    """A whole sLSTM layer on time-major x (T, N, E).

    ``weights`` holds ``W_xc_l{k}``, ``b_c_l{k}`` and ``W_hc_l{k}`` per level k
    (``..._reverse`` for the backward direction), ``state`` four (levels * directions, N, H)
    tensors (index ``directions * level + direction``). Returns y (T, N, directions * H) and
    the final state. ``direction`` runs one direction of one level (the FUSED engine passes
    its persistent kernels' on a GPU).
    """
    finals = []
    for k in range(levels):
        outs = []
        for d, sfx in enumerate(("", "_reverse")[:directions]):
            xw = F.linear(x, weights[f"W_xc_l{k}{sfx}"], weights[f"b_c_l{k}{sfx}"])
            i = k * directions + d
            hs, last = direction(xw, weights[f"W_hc_l{k}{sfx}"], tuple(s[i] for s in state),
                                 cont, lengths, d == 1, exp_forget)
            outs.append(hs)
            finals.append(last)
        x = outs[0] if directions == 1 else torch.cat(outs, -1)
        if dropout and k < levels - 1:
            x = F.dropout(x, dropout, training)
    return x, tuple(torch.stack([f[j] for f in finals]) for j in range(4))
