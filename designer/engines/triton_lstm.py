"""Fused LSTM_UNIT kernels for CUDA, written in Triton (used by ``lstm_steps`` when present).

Forward: one kernel reads the gate pre-activations [i, f, o, g] and c_{t-1}, writes the activated
gates (kept for backward), c_t, h_t and the next step's h_conted = cont_{t+1} x h_t.
Backward: one kernel adds the gradient arriving through the next step's SCALE, runs the unit's
backward, clips the gate gradients when asked (LSTMSimple) and leaves the gradient of c_{t-1}.
"""
from __future__ import annotations

import torch

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001 - no Triton: the torch ops are used instead
    triton = None


def available() -> bool:
    return triton is not None and torch.cuda.is_available()


if triton is not None:

    @triton.jit
    def _tanh(x):
        return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)

    @triton.jit
    def _fwd_kernel(G, CP, CONT, CONTN, ACTS, C, HO, HCN, HCNG, H, HAS_NEXT: tl.constexpr,
                    WRITE_G: tl.constexpr, BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        row = n * 4 * H
        zi = tl.load(G + row + offs, mask=m, other=0.0).to(tl.float32)
        zf = tl.load(G + row + H + offs, mask=m, other=0.0).to(tl.float32)
        zo = tl.load(G + row + 2 * H + offs, mask=m, other=0.0).to(tl.float32)
        zg = tl.load(G + row + 3 * H + offs, mask=m, other=0.0).to(tl.float32)
        cp = tl.load(CP + n * H + offs, mask=m, other=0.0).to(tl.float32)
        k = tl.load(CONT + n).to(tl.float32)
        i = tl.sigmoid(zi)
        f = tl.sigmoid(zf)
        o = tl.sigmoid(zo)
        g = _tanh(zg)
        c = f * (k * cp) + i * g
        hv = o * _tanh(c)
        tl.store(ACTS + row + offs, i, mask=m)
        tl.store(ACTS + row + H + offs, f, mask=m)
        tl.store(ACTS + row + 2 * H + offs, o, mask=m)
        tl.store(ACTS + row + 3 * H + offs, g, mask=m)
        tl.store(C + n * H + offs, c, mask=m)
        tl.store(HO + n * H + offs, hv, mask=m)
        if HAS_NEXT:
            kn = tl.load(CONTN + n).to(tl.float32)
            tl.store(HCN + n * H + offs, hv * kn, mask=m)
            if WRITE_G:  # the same, in the type the next step's GEMM reads (bf16)
                tl.store(HCNG + n * H + offs, hv * kn, mask=m)

    @triton.jit
    def _bwd_kernel(DHO, DHC, CONTN, DC, ACTS, C, CP, CONT, DG, H, clip,
                    HAS_NEXT: tl.constexpr, CLIP: tl.constexpr, BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        row = n * 4 * H
        hrow = n * H
        dh = tl.load(DHO + hrow + offs, mask=m, other=0.0)
        if HAS_NEXT:
            kn = tl.load(CONTN + n)
            dh += kn * tl.load(DHC + hrow + offs, mask=m, other=0.0)
        i = tl.load(ACTS + row + offs, mask=m, other=0.0)
        f = tl.load(ACTS + row + H + offs, mask=m, other=0.0)
        o = tl.load(ACTS + row + 2 * H + offs, mask=m, other=0.0)
        g = tl.load(ACTS + row + 3 * H + offs, mask=m, other=0.0)
        c = tl.load(C + hrow + offs, mask=m, other=0.0)
        cp = tl.load(CP + hrow + offs, mask=m, other=0.0)
        k = tl.load(CONT + n)
        tc = _tanh(c)
        dc = tl.load(DC + hrow + offs, mask=m, other=0.0) + dh * o * (1.0 - tc * tc)
        di = dc * g * i * (1.0 - i)
        df = dc * (k * cp) * f * (1.0 - f)
        do = dh * tc * o * (1.0 - o)
        dg = dc * i * (1.0 - g * g)
        if CLIP:
            di = tl.minimum(tl.maximum(di, -clip), clip)
            df = tl.minimum(tl.maximum(df, -clip), clip)
            do = tl.minimum(tl.maximum(do, -clip), clip)
            dg = tl.minimum(tl.maximum(dg, -clip), clip)
        tl.store(DG + row + offs, di, mask=m)
        tl.store(DG + row + H + offs, df, mask=m)
        tl.store(DG + row + 2 * H + offs, do, mask=m)
        tl.store(DG + row + 3 * H + offs, dg, mask=m)
        tl.store(DC + hrow + offs, dc * f * k, mask=m)


def _grid(n: int, h: int):
    block = min(1024, triton.next_power_of_2(h))
    return (n, triton.cdiv(h, block)), block


def unit_forward(gates, c_prev, cont_t, cont_next, acts, c_out, h_out, hc_next,
                 hc_next_g=None):
    n, h = c_prev.shape
    grid, block = _grid(n, h)
    nxt = hc_next is not None
    g = nxt and hc_next_g is not None and hc_next_g is not hc_next
    _fwd_kernel[grid](gates, c_prev, cont_t, cont_next if nxt else cont_t, acts, c_out, h_out,
                      hc_next if nxt else h_out, hc_next_g if g else h_out, h, HAS_NEXT=nxt,
                      WRITE_G=g, BLOCK=block)


def unit_backward(dh_out, dhc_next, cont_next, dc, acts, c, c_prev, cont_t, dgates, clip):
    n, h = c.shape
    grid, block = _grid(n, h)
    nxt = dhc_next is not None
    _bwd_kernel[grid](dh_out, dhc_next if nxt else dh_out, cont_next if nxt else cont_t, dc,
                      acts, c, c_prev, cont_t, dgates, h, float(clip), HAS_NEXT=nxt,
                      CLIP=clip > 0, BLOCK=block)
