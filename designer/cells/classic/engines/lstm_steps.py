"""The fast executor of an unrolled LSTM level: the per-step net with fused kernels.

For every time step t the unrolled net holds SCALE (h_conted = cont_t x h_{t-1}), INNER_PRODUCT
(W_hc x h_conted), ELTWISE SUM (+ the step's slice of the input transform) and LSTM_UNIT. This
executor runs exactly those layers, in that order, but

- the INNER_PRODUCT and the ELTWISE SUM are one ``addmm`` (the sum is the GEMM's C operand),
- the LSTM_UNIT is one fused kernel that also applies the next step's SCALE,
- the backward pass runs the same layers in reverse (one fused unit kernel and one GEMM per step)
  and accumulates the shared W_hc gradient in a single GEMM over all steps at the end, as Caffe
  accumulates the diffs of a shared weight.

On CUDA the fused units are Triton kernels (``triton_lstm``) when Triton is available; elsewhere
they are a few torch ops. ``UnrolledLSTMSteps`` is checked against the node-by-node reference
executor and against ``torch.nn.LSTM`` (tests/engines).
"""
from __future__ import annotations

import os

import torch

_TRITON = None


def _triton():
    """The Triton kernels module, or ``False`` when Triton cannot be used."""
    global _TRITON
    if _TRITON is None:
        try:
            from designer.cells.classic.kernels import lstm as triton_lstm
            _TRITON = triton_lstm if triton_lstm.available() else False
        except Exception:  # noqa: BLE001 - any import problem means: use the torch ops
            _TRITON = False
    return _TRITON


def use_triton(t: torch.Tensor) -> bool:
    return t.is_cuda and bool(_triton())


def fused_steps(gemm_dtype: torch.dtype) -> bool:
    """Whether the step's product and unit run as one Triton kernel: for products on the
    tensor cores (bf16, fp16, or TF32 when allowed). An IEEE float32 product is faster as
    cuBLAS's GEMM followed by the unit (measured on the H200: RESULTS.md).
    RNN_DESIGNER_FUSED_STEPS=0 turns the fused kernels off, =1 forces them (comparisons)."""
    env = os.environ.get("RNN_DESIGNER_FUSED_STEPS", "")
    if env in ("0", "1"):
        return env == "1"
    return gemm_dtype in (torch.bfloat16, torch.float16) or (
        gemm_dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32)


# ---------------------------------------------------------------------------- torch units --
def unit_forward(gates, c_prev, cont_t, cont_next, acts, c_out, h_out, hc_next,
                 hc_next_g=None):
    """LSTM_UNIT (gates [i, f, o, g]) plus the next step's SCALE, writing into the outputs
    (``hc_next_g``: the next h_conted again, in the type the next step's GEMM reads)."""
    h = c_prev.shape[-1]
    gates = gates.to(acts.dtype)
    torch.sigmoid(gates[:, :3 * h], out=acts[:, :3 * h])
    torch.tanh(gates[:, 3 * h:], out=acts[:, 3 * h:])
    i, f, o, g = acts.split(h, 1)
    torch.mul(c_prev, cont_t.unsqueeze(1), out=c_out)
    c_out.mul_(f).addcmul_(i, g)
    torch.tanh(c_out, out=h_out)
    h_out.mul_(o)
    if hc_next is not None:
        torch.mul(h_out, cont_next.unsqueeze(1), out=hc_next)
        if hc_next_g is not None and hc_next_g is not hc_next:
            hc_next_g.copy_(hc_next)


def _gemm_dtype(x: torch.Tensor) -> torch.dtype:
    """The type the step GEMMs run in: the autocast type when autocast is on for x's device."""
    if torch.is_autocast_enabled(x.device.type):
        return torch.get_autocast_dtype(x.device.type)
    return torch.promote_types(x.dtype, torch.float32)


def unit_backward(dh_out, dhc_next, cont_next, dc, acts, c, c_prev, cont_t, dgates, clip):
    """Backward of LSTM_UNIT at one step; ``dc`` (grad of c_t) is replaced by grad of c_{t-1}.

    ``dh_out`` is the gradient of h_t from the layer's output; ``dhc_next`` the gradient of the
    next step's h_conted, which reaches h_t through that step's SCALE by ``cont_next``.
    """
    h = c.shape[-1]
    dh = dh_out if dhc_next is None else dh_out + dhc_next * cont_next.unsqueeze(1)
    i, f, o, g = acts.split(h, 1)
    tc = torch.tanh(c)
    dc.addcmul_(dh * o, 1 - tc * tc)
    di, df, do, dg = dgates.split(h, 1)
    torch.mul(dc * g, i * (1 - i), out=di)
    torch.mul(dc * c_prev * cont_t.unsqueeze(1), f * (1 - f), out=df)
    torch.mul(dh * tc, o * (1 - o), out=do)
    torch.mul(dc * i, 1 - g * g, out=dg)
    if clip > 0:
        dgates.clamp_(-clip, clip)
    dc.mul_(f).mul_(cont_t.unsqueeze(1))


def infer_steps(xw, cont, h0, c0, w_hc):
    """The same per-step net without autograd bookkeeping (generation, validation)."""
    t_, n, g4 = xw.shape
    h = g4 // 4
    cont = cont.to(xw.dtype)
    hs = xw.new_empty(t_, n, h)
    acts, hc, gates = xw.new_empty(n, g4), xw.new_empty(n, h), xw.new_empty(n, g4)
    c_prev = c0
    torch.mul(h0, cont[0].unsqueeze(1), out=hc)
    w_t = w_hc.t()
    tri = _triton() if xw.is_cuda else False
    for t in range(t_):
        torch.addmm(xw[t], hc, w_t, out=gates)
        nxt = t + 1 < t_
        c_new = xw.new_empty(n, h)
        (tri.unit_forward if tri else unit_forward)(
            gates, c_prev, cont[t], cont[t + 1] if nxt else None, acts, c_new, hs[t],
            hc if nxt else None)
        c_prev = c_new
    return hs, c_prev


class UnrolledLSTMSteps(torch.autograd.Function):
    """All T steps of one unrolled LSTM level after its input transform.

    Inputs: ``xw`` (T, N, 4H) the input transform W_xc x + b_c (its per-step slices are the
    ELTWISE operands), ``cont`` (T, N), ``h0`` and ``c0`` (N, H), ``w_hc`` (4H, H), ``clip`` (the
    gate-gradient clipping threshold of LSTMSimple, 0 for none).
    Outputs: the h_t of every step (T, N, H) (the CONCAT) and c_T (N, H).
    """

    @staticmethod
    def forward(ctx, xw, cont, h0, c0, w_hc, clip: float):
        # under autocast the GEMMs run in the autocast type (bf16) with float32 accumulation,
        # and the units in float32: c and h stay float32 from step to step, and h is rounded
        # once per step for the next GEMM
        ctx.dtypes = (xw.dtype, h0.dtype, c0.dtype, w_hc.dtype)
        gd = _gemm_dtype(xw)
        with torch.autocast(xw.device.type, enabled=False):
            return UnrolledLSTMSteps._forward(ctx, xw.to(gd), cont, h0, c0, w_hc, clip, gd)

    @staticmethod
    def _forward(ctx, xw, cont, h0, c0, w_hc, clip: float, gd):
        t_, n, g4 = xw.shape
        h = g4 // 4
        sd = torch.promote_types(gd, torch.float32)  # the state's type
        xw = xw.contiguous()
        cont = cont.to(sd).contiguous()
        acts = xw.new_empty(t_, n, g4, dtype=sd)
        cs = xw.new_empty(t_, n, h, dtype=sd)
        hs = xw.new_empty(t_, n, h, dtype=sd)
        hcs = xw.new_empty(t_, n, h, dtype=sd)
        hcs_g = hcs if gd == sd else xw.new_empty(t_, n, h, dtype=gd)
        torch.mul(h0.to(sd), cont[0].unsqueeze(1), out=hcs[0])  # SCALE of step 1
        if hcs_g is not hcs:
            hcs_g[0].copy_(hcs[0])
        gates = xw.new_empty(n, g4, dtype=gd)
        w = w_hc.to(gd)
        w_t = w.t()
        tri = _triton() if xw.is_cuda else False
        fused = bool(tri) and fused_steps(gd)
        ctx.fused = fused
        c_prev = c0.to(sd).contiguous()
        for t in range(t_):
            nxt = t + 1 < t_
            hc_next = hcs[t + 1] if nxt else None
            hc_next_g = hcs_g[t + 1] if nxt else None
            if fused:  # INNER_PRODUCT + ELTWISE SUM + LSTM_UNIT (+ next SCALE), one kernel
                tri.step_forward(xw[t], hcs_g[t], w, c_prev, cont[t], cont[t + 1] if nxt else
                                 None, acts[t], cs[t], hs[t], hc_next, hc_next_g, t > 0)
            else:
                torch.addmm(xw[t], hcs_g[t], w_t, out=gates)  # INNER_PRODUCT + ELTWISE SUM
                args = (gates, c_prev, cont[t], cont[t + 1] if nxt else None, acts[t], cs[t],
                        hs[t], hc_next, hc_next_g)
                (tri.unit_forward if tri else unit_forward)(*args)  # LSTM_UNIT (+ SCALE)
            c_prev = cs[t]
        ctx.save_for_backward(acts, cs, hcs_g, cont, c0.to(sd), w)
        ctx.clip = clip
        x_dt, h_dt, c_dt, _ = ctx.dtypes
        return hs.to(h_dt), cs[-1].to(c_dt)

    @staticmethod
    def backward(ctx, d_hs, d_ct):
        with torch.autocast(ctx.saved_tensors[0].device.type, enabled=False):
            dt = ctx.saved_tensors[0].dtype
            dxw, _, dh0, dc0, d_w, _ = UnrolledLSTMSteps._backward(
                ctx, None if d_hs is None else d_hs.to(dt),
                None if d_ct is None else d_ct.to(dt))
        x_dt, h_dt, c_dt, w_dt = ctx.dtypes
        return dxw.to(x_dt), None, dh0.to(h_dt), dc0.to(c_dt), d_w.to(w_dt), None

    @staticmethod
    def _backward(ctx, d_hs, d_ct):
        acts, cs, hcs_g, cont, c0, w = ctx.saved_tensors
        t_, n, h = cs.shape
        sd, gd = cs.dtype, w.dtype
        d_hs = torch.zeros_like(cs) if d_hs is None else d_hs.contiguous()
        dc = torch.zeros_like(c0) if d_ct is None else d_ct.clone().contiguous()
        dgates = torch.empty_like(acts)
        dhc = cs.new_empty(n, h)
        tri = _triton() if cs.is_cuda else False
        if getattr(ctx, "fused", False):
            return UnrolledLSTMSteps._fused_backward(ctx, tri, d_hs, dc, dgates)
        for t in range(t_ - 1, -1, -1):
            nxt = t + 1 < t_
            c_prev = cs[t - 1] if t > 0 else c0
            args = (d_hs[t], dhc if nxt else None, cont[t + 1] if nxt else None, dc, acts[t],
                    cs[t], c_prev, cont[t], dgates[t], ctx.clip)
            (tri.unit_backward if tri else unit_backward)(*args)
            if gd == sd:
                torch.mm(dgates[t], w, out=dhc)  # INNER_PRODUCT backward: grad of h_conted
            else:
                dhc.copy_(dgates[t].to(gd).mm(w))
        dh0 = dhc * cont[0].unsqueeze(1)  # SCALE backward of step 1
        flat = dgates.view(t_ * n, 4 * h)
        d_w = flat.to(gd).t().mm(hcs_g.view(t_ * n, h))  # shared W_hc, all steps
        return dgates, None, dh0, dc, d_w, None

    @staticmethod
    def _fused_backward(ctx, tri, d_hs, dc, dgates):
        """Backward with one kernel per step: the product carrying dgates_{t+1} back to h_t
        and LSTM_UNIT's backward at t."""
        acts, cs, hcs_g, cont, c0, w = ctx.saved_tensors
        t_, n, h = cs.shape
        gd = w.dtype
        dgates_g = dgates if gd == dgates.dtype else torch.empty_like(dgates, dtype=gd)
        for t in range(t_ - 1, -1, -1):
            nxt = t + 1 < t_
            c_prev = cs[t - 1] if t > 0 else c0
            tri.step_backward(dgates_g[t + 1] if nxt else None, w, d_hs[t],
                              cont[t + 1] if nxt else None, dc, acts[t], cs[t], c_prev,
                              cont[t], dgates[t], dgates_g[t], ctx.clip, nxt)
        dh0 = dgates_g[0].mm(w).to(cs.dtype) * cont[0].unsqueeze(1)  # SCALE of step 1
        d_w = dgates_g.view(t_ * n, 4 * h).t().mm(hcs_g.view(t_ * n, h))
        return dgates, None, dh0, dc, d_w, None
