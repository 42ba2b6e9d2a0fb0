"""The fast executors of unrolled GRU and RNN levels: the per-step net with fused kernels.

The unrolled GRU holds, for every step t, SCALE (h_conted = cont_t x h_{t-1}), INNER_PRODUCT
(W_hc x h_conted + b_hc) and GRU_UNIT (r, z, n from that and the step's slice of the input
transform); the plain RNN holds SCALE, INNER_PRODUCT (no bias), ELTWISE SUM (+ the input
transform) and TANH or RELU. These executors run exactly those layers, in that order, but

- the INNER_PRODUCT is one ``addmm`` per step (for the RNN, the ELTWISE SUM is its C operand);
- the unit is one fused kernel that also applies the next step's SCALE;
- backward runs the same layers in reverse (one fused kernel and one GEMM per step) and
  accumulates the shared W_hc (and b_hc) gradient in one GEMM over all steps at the end.

On CUDA the fused units are Triton kernels (``triton_gru``) when Triton is available; elsewhere a
few torch ops. Under autocast the GEMMs run in the autocast type (bf16) and the units compute in
float32: h is kept in float32 between steps and rounded once per step for the GEMM.
"""
from __future__ import annotations

import torch

_TRITON = None


def _triton():
    """The Triton kernels module, or ``False`` when Triton cannot be used."""
    global _TRITON
    if _TRITON is None:
        try:
            from designer.cells.classic.kernels import gru as triton_gru
            _TRITON = triton_gru if triton_gru.available() else False
        except Exception:  # noqa: BLE001 - any import problem means: use the torch ops
            _TRITON = False
    return _TRITON


def _kernels(t: torch.Tensor):
    return (_triton() or _TorchUnits) if t.is_cuda else _TorchUnits


def _fused(k, gemm_dtype) -> bool:
    """The step's product and unit as one Triton kernel (see ``lstm_steps.fused_steps``)."""
    from designer.cells.classic.engines.lstm_steps import fused_steps
    return k is not _TorchUnits and fused_steps(gemm_dtype)


def _gemm_dtype(x: torch.Tensor) -> torch.dtype:
    """The type the step GEMMs run in: the autocast type when autocast is on for x's device."""
    if torch.is_autocast_enabled(x.device.type):
        return torch.get_autocast_dtype(x.device.type)
    return torch.promote_types(x.dtype, torch.float32)


# ------------------------------------------------------------------------------ torch units --
class _TorchUnits:
    """The units as torch ops (CPU, or CUDA without Triton): the definition the kernels match."""

    @staticmethod
    def gru_forward(xw, hl, hc, cont_next, acts, hn_keep, h_out, hc_next, hc_next_g):
        h = hc.shape[-1]
        xr, xz, xn = xw.to(acts.dtype).split(h, 1)
        hr, hz, hn = hl.to(acts.dtype).split(h, 1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        hv = (1 - z) * n + z * hc
        acts.copy_(torch.cat([r, z, n], 1))
        hn_keep.copy_(hn)
        h_out.copy_(hv)
        if hc_next is not None:
            torch.mul(hv, cont_next.unsqueeze(1), out=hc_next)
            hc_next_g.copy_(hc_next)

    @staticmethod
    def gru_backward(dh_out, dhc_next, cont_next, acts, hn, hc, dx, dhl, dhc_direct):
        h = hc.shape[-1]
        dh = dh_out if dhc_next is None else dh_out + dhc_next * cont_next.unsqueeze(1)
        r, z, n = acts.split(h, 1)
        dn = dh * (1 - z) * (1 - n * n)
        dz = dh * (hc - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        dx.copy_(torch.cat([dr, dz, dn], 1))
        dhl.copy_(torch.cat([dr, dz, dn * r], 1))
        torch.mul(dh, z, out=dhc_direct)

    @staticmethod
    def rnn_forward(pre, cont_next, h_out, hc_next, hc_next_g, relu: bool):
        pre = pre.to(h_out.dtype)
        hv = torch.relu(pre) if relu else torch.tanh(pre)
        h_out.copy_(hv)
        if hc_next is not None:
            torch.mul(hv, cont_next.unsqueeze(1), out=hc_next)
            hc_next_g.copy_(hc_next)

    @staticmethod
    def rnn_backward(dh_out, dhc_next, cont_next, h, dpre, relu: bool):
        dh = dh_out if dhc_next is None else dh_out + dhc_next * cont_next.unsqueeze(1)
        dpre.copy_(dh * (h > 0) if relu else dh * (1 - h * h))


# ------------------------------------------------------------------------------------- GRU --
class UnrolledGRUSteps(torch.autograd.Function):
    """All T steps of one unrolled GRU level after its input transform.

    Inputs: ``xw`` (T, N, 3H) = W_xc x + b_c, ``cont`` (T, N), ``h0`` (N, H), ``w_hc`` (3H, H),
    ``b_hc`` (3H). Outputs: every h_t (T, N, H) (the CONCAT; its last row is h_T).
    """

    @staticmethod
    def forward(ctx, xw, cont, h0, w_hc, b_hc):
        gd = _gemm_dtype(xw)
        with torch.autocast(xw.device.type, enabled=False):
            return UnrolledGRUSteps._forward(ctx, xw.to(gd).contiguous(), cont, h0, w_hc, b_hc,
                                             gd)

    @staticmethod
    def _forward(ctx, xw, cont, h0, w_hc, b_hc, gd):
        t_, n, g3 = xw.shape
        h = g3 // 3
        sd = torch.promote_types(gd, torch.float32)  # the state's type: fp32 (fp64 stays)
        cont = cont.to(sd).contiguous()
        k = _kernels(xw)
        acts = xw.new_empty(t_, n, g3, dtype=sd)
        hns = xw.new_empty(t_, n, h, dtype=sd)
        hs = xw.new_empty(t_, n, h, dtype=sd)
        hcs = xw.new_empty(t_, n, h, dtype=sd)     # h_conted per step, in the state's type
        hcs_g = hcs if gd == sd else xw.new_empty(t_, n, h, dtype=gd)  # as the GEMM reads it
        torch.mul(h0.to(sd), cont[0].unsqueeze(1), out=hcs[0])
        hcs_g[0].copy_(hcs[0])
        w, b = w_hc.to(gd), b_hc.to(gd)
        w_t = w.t()
        hl = xw.new_empty(n, g3, dtype=gd)
        fused = _fused(k, gd)
        for t in range(t_):
            nxt = t + 1 < t_
            args = (cont[t + 1] if nxt else None, acts[t], hns[t], hs[t],
                    hcs[t + 1] if nxt else None, hcs_g[t + 1] if nxt else None)
            if fused:  # INNER_PRODUCT (with b_hc) + GRU_UNIT (+ next SCALE), one kernel
                k.gru_step_forward(xw[t], hcs_g[t], w, b, hcs[t], *args, chained=t > 0)
            else:
                torch.addmm(b, hcs_g[t], w_t, out=hl)  # INNER_PRODUCT (with b_hc)
                k.gru_forward(xw[t], hl, hcs[t], *args)
        ctx.fused = fused
        ctx.save_for_backward(acts, hns, hcs, hcs_g, cont, w)
        ctx.dtypes = (xw.dtype, h0.dtype, w_hc.dtype)
        return hs.to(h0.dtype) if h0.dtype != sd else hs

    @staticmethod
    def backward(ctx, d_hs):
        acts, hns, hcs, hcs_g, cont, w = ctx.saved_tensors
        x_dt, h_dt, w_dt = ctx.dtypes
        with torch.autocast(acts.device.type, enabled=False):
            t_, n, h = hcs.shape
            sd, gd = hcs.dtype, w.dtype
            d_hs = torch.zeros_like(hcs) if d_hs is None else d_hs.to(sd).contiguous()
            k = _kernels(acts)
            dx = acts.new_empty(t_, n, 3 * h, dtype=sd)
            dhl = acts.new_empty(t_, n, 3 * h, dtype=sd)
            dhl_g = dhl if gd == sd else acts.new_empty(n, 3 * h, dtype=gd)
            direct = acts.new_empty(n, h, dtype=sd)
            dhc = acts.new_empty(n, h, dtype=sd)
            if ctx.fused:
                return _gru_fused_backward(ctx, k, d_hs, dx, dhl)
            for t in range(t_ - 1, -1, -1):
                nxt = t + 1 < t_
                k.gru_backward(d_hs[t], dhc if nxt else None, cont[t + 1] if nxt else None,
                               acts[t], hns[t], hcs[t], dx[t], dhl[t], direct)
                if gd == sd:  # grad of h_conted: the unit's own part + back through W_hc
                    torch.addmm(direct, dhl[t], w, out=dhc)
                else:
                    torch.add(direct, dhl_g.copy_(dhl[t]).mm(w), out=dhc)
            dh0 = dhc * cont[0].unsqueeze(1)
            flat = dhl.view(t_ * n, 3 * h)
            d_w = flat.to(gd).t().mm(hcs_g.view(t_ * n, h)).to(sd)
            d_b = flat.sum(0)
        return dx.to(x_dt), None, dh0.to(h_dt), d_w.to(w_dt), d_b.to(w_dt)


# ------------------------------------------------------------------------------------- RNN --
class UnrolledRNNSteps(torch.autograd.Function):
    """All T steps of one unrolled RNN level (tanh or relu) after its input transform.

    Inputs: ``xw`` (T, N, H) = W_xc x + b_c, ``cont`` (T, N), ``h0`` (N, H), ``w_hc`` (H, H),
    ``relu``. Output: every h_t (T, N, H).
    """

    @staticmethod
    def forward(ctx, xw, cont, h0, w_hc, relu: bool):
        gd = _gemm_dtype(xw)
        with torch.autocast(xw.device.type, enabled=False):
            return UnrolledRNNSteps._forward(ctx, xw.to(gd).contiguous(), cont, h0, w_hc,
                                             relu, gd)

    @staticmethod
    def _forward(ctx, xw, cont, h0, w_hc, relu, gd):
        t_, n, h = xw.shape
        sd = torch.promote_types(gd, torch.float32)  # the state's type: fp32 (fp64 stays)
        cont = cont.to(sd).contiguous()
        k = _kernels(xw)
        hs = xw.new_empty(t_, n, h, dtype=sd)
        hcs = xw.new_empty(t_, n, h, dtype=sd)
        hcs_g = hcs if gd == sd else xw.new_empty(t_, n, h, dtype=gd)
        torch.mul(h0.to(sd), cont[0].unsqueeze(1), out=hcs[0])
        hcs_g[0].copy_(hcs[0])
        w = w_hc.to(gd)
        w_t = w.t()
        pre = xw.new_empty(n, h, dtype=gd)
        fused = _fused(k, gd)
        for t in range(t_):
            nxt = t + 1 < t_
            args = (cont[t + 1] if nxt else None, hs[t], hcs[t + 1] if nxt else None,
                    hcs_g[t + 1] if nxt else None, relu)
            if fused:  # INNER_PRODUCT + ELTWISE SUM + TANH/RELU (+ next SCALE), one kernel
                k.rnn_step_forward(xw[t], hcs_g[t], w, *args, chained=t > 0)
            else:
                torch.addmm(xw[t], hcs_g[t], w_t, out=pre)  # INNER_PRODUCT + ELTWISE SUM
                k.rnn_forward(pre, *args)
        ctx.fused = fused
        ctx.save_for_backward(hs, hcs_g, cont, w)
        ctx.relu, ctx.dtypes = relu, (xw.dtype, h0.dtype, w_hc.dtype)
        return hs.to(h0.dtype) if h0.dtype != sd else hs

    @staticmethod
    def backward(ctx, d_hs):
        hs, hcs_g, cont, w = ctx.saved_tensors
        x_dt, h_dt, w_dt = ctx.dtypes
        with torch.autocast(hs.device.type, enabled=False):
            t_, n, h = hs.shape
            sd, gd = hs.dtype, w.dtype
            d_hs = torch.zeros_like(hs) if d_hs is None else d_hs.to(sd).contiguous()
            k = _kernels(hs)
            dpre = hs.new_empty(t_, n, h, dtype=sd)
            dhc = hs.new_empty(n, h, dtype=sd)
            if ctx.fused:
                return _rnn_fused_backward(ctx, k, d_hs, dpre)
            for t in range(t_ - 1, -1, -1):
                nxt = t + 1 < t_
                k.rnn_backward(d_hs[t], dhc if nxt else None, cont[t + 1] if nxt else None,
                               hs[t], dpre[t], ctx.relu)
                if gd == sd:
                    torch.mm(dpre[t], w, out=dhc)
                else:
                    dhc.copy_(dpre[t].to(gd).mm(w))
            dh0 = dhc * cont[0].unsqueeze(1)
            d_w = dpre.view(t_ * n, h).to(gd).t().mm(hcs_g.view(t_ * n, h)).to(sd)
        return dpre.to(x_dt), None, dh0.to(h_dt), d_w.to(w_dt), None


# ----------------------------------------------------------------- fused-step backwards --
def _gru_fused_backward(ctx, k, d_hs, dx, dhl):
    acts, hns, hcs, hcs_g, cont, w = ctx.saved_tensors
    x_dt, h_dt, w_dt = ctx.dtypes
    t_, n, h = hcs.shape
    gd = w.dtype
    dhl_g = dhl if gd == dhl.dtype else torch.empty_like(dhl, dtype=gd)
    direct = [hcs.new_empty(n, h), hcs.new_empty(n, h)]  # ping-pong: step t and t+1
    for t in range(t_ - 1, -1, -1):
        nxt = t + 1 < t_
        k.gru_step_backward(dhl_g[t + 1] if nxt else None, w, direct[(t + 1) % 2], d_hs[t],
                            cont[t + 1] if nxt else None, acts[t], hns[t], hcs[t], dx[t],
                            dhl[t], dhl_g[t], direct[t % 2], chained=nxt)
    dhc = direct[0] + dhl_g[0].mm(w).to(hcs.dtype)
    dh0 = dhc * cont[0].unsqueeze(1)
    d_w = dhl_g.view(t_ * n, 3 * h).t().mm(hcs_g.view(t_ * n, h))
    d_b = dhl.view(t_ * n, 3 * h).sum(0)
    return dx.to(x_dt), None, dh0.to(h_dt), d_w.to(w_dt), d_b.to(w_dt)


def _rnn_fused_backward(ctx, k, d_hs, dpre):
    hs, hcs_g, cont, w = ctx.saved_tensors
    x_dt, h_dt, w_dt = ctx.dtypes
    t_, n, h = hs.shape
    gd = w.dtype
    dpre_g = dpre if gd == dpre.dtype else torch.empty_like(dpre, dtype=gd)
    for t in range(t_ - 1, -1, -1):
        nxt = t + 1 < t_
        k.rnn_step_backward(dpre_g[t + 1] if nxt else None, w, d_hs[t],
                            cont[t + 1] if nxt else None, hs[t], dpre[t], dpre_g[t], ctx.relu,
                            chained=nxt)
    dh0 = dpre_g[0].mm(w).to(hs.dtype) * cont[0].unsqueeze(1)
    d_w = dpre_g.view(t_ * n, h).t().mm(hcs_g.view(t_ * n, h))
    return dpre.to(x_dt), None, dh0.to(h_dt), d_w.to(w_dt), None
