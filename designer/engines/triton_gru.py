"""Fused GRU_UNIT and TANH/RELU step kernels for CUDA, written in Triton (used by ``gru_steps``).

GRU forward: one kernel reads the step's input transform [x_r, x_z, x_n] and the recurrent
product [h_r, h_z, h_n] (with b_hc), computes r, z, n and h_t = (1 - z) n + z h_conted, keeps
r, z, n and h_n for backward, and writes the next step's h_conted = cont_{t+1} x h_t (in the
state's type and in the GEMM's). GRU backward: one kernel adds the gradient arriving through the
next step's SCALE and leaves the gradients of the input transform, of the recurrent product and
of h_conted through the unit. The RNN kernels do the same for h_t = tanh (or relu) of the sum.
Every kernel computes in float32 whatever the storage types (bf16 GEMM operands under autocast).
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
    def _gru_fwd(XW, HL, HC, CONTN, ACTS, HNK, HO, HCN, HCNG, H, HAS_NEXT: tl.constexpr,
                 BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        row, hrow = n * 3 * H, n * H
        xr = tl.load(XW + row + offs, mask=m, other=0.0).to(tl.float32)
        xz = tl.load(XW + row + H + offs, mask=m, other=0.0).to(tl.float32)
        xn = tl.load(XW + row + 2 * H + offs, mask=m, other=0.0).to(tl.float32)
        hr = tl.load(HL + row + offs, mask=m, other=0.0).to(tl.float32)
        hz = tl.load(HL + row + H + offs, mask=m, other=0.0).to(tl.float32)
        hn = tl.load(HL + row + 2 * H + offs, mask=m, other=0.0).to(tl.float32)
        hc = tl.load(HC + hrow + offs, mask=m, other=0.0).to(tl.float32)
        r = tl.sigmoid(xr + hr)
        z = tl.sigmoid(xz + hz)
        nn = _tanh(xn + r * hn)
        hv = (1.0 - z) * nn + z * hc
        tl.store(ACTS + row + offs, r, mask=m)
        tl.store(ACTS + row + H + offs, z, mask=m)
        tl.store(ACTS + row + 2 * H + offs, nn, mask=m)
        tl.store(HNK + hrow + offs, hn, mask=m)
        tl.store(HO + hrow + offs, hv, mask=m)
        if HAS_NEXT:
            k = tl.load(CONTN + n).to(tl.float32)
            tl.store(HCN + hrow + offs, hv * k, mask=m)
            tl.store(HCNG + hrow + offs, hv * k, mask=m)

    @triton.jit
    def _gru_bwd(DHO, DHC, CONTN, ACTS, HN, HC, DX, DHL, DIRECT, H, HAS_NEXT: tl.constexpr,
                 BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        row, hrow = n * 3 * H, n * H
        dh = tl.load(DHO + hrow + offs, mask=m, other=0.0)
        if HAS_NEXT:
            k = tl.load(CONTN + n)
            dh += k * tl.load(DHC + hrow + offs, mask=m, other=0.0)
        r = tl.load(ACTS + row + offs, mask=m, other=0.0)
        z = tl.load(ACTS + row + H + offs, mask=m, other=0.0)
        nn = tl.load(ACTS + row + 2 * H + offs, mask=m, other=0.0)
        hn = tl.load(HN + hrow + offs, mask=m, other=0.0)
        hc = tl.load(HC + hrow + offs, mask=m, other=0.0)
        dn = dh * (1.0 - z) * (1.0 - nn * nn)
        dz = dh * (hc - nn) * z * (1.0 - z)
        dr = dn * hn * r * (1.0 - r)
        tl.store(DX + row + offs, dr, mask=m)
        tl.store(DX + row + H + offs, dz, mask=m)
        tl.store(DX + row + 2 * H + offs, dn, mask=m)
        tl.store(DHL + row + offs, dr, mask=m)
        tl.store(DHL + row + H + offs, dz, mask=m)
        tl.store(DHL + row + 2 * H + offs, dn * r, mask=m)
        tl.store(DIRECT + hrow + offs, dh * z, mask=m)

    @triton.jit
    def _rnn_fwd(PRE, CONTN, HO, HCN, HCNG, H, HAS_NEXT: tl.constexpr, RELU: tl.constexpr,
                 BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        x = tl.load(PRE + n * H + offs, mask=m, other=0.0).to(tl.float32)
        if RELU:
            hv = tl.maximum(x, 0.0)
        else:
            hv = _tanh(x)
        tl.store(HO + n * H + offs, hv, mask=m)
        if HAS_NEXT:
            k = tl.load(CONTN + n).to(tl.float32)
            tl.store(HCN + n * H + offs, hv * k, mask=m)
            tl.store(HCNG + n * H + offs, hv * k, mask=m)

    @triton.jit
    def _rnn_bwd(DHO, DHC, CONTN, HV, DPRE, H, HAS_NEXT: tl.constexpr, RELU: tl.constexpr,
                 BLOCK: tl.constexpr):
        n = tl.program_id(0)
        offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        m = offs < H
        dh = tl.load(DHO + n * H + offs, mask=m, other=0.0)
        if HAS_NEXT:
            k = tl.load(CONTN + n)
            dh += k * tl.load(DHC + n * H + offs, mask=m, other=0.0)
        hv = tl.load(HV + n * H + offs, mask=m, other=0.0)
        if RELU:
            d = tl.where(hv > 0.0, dh, 0.0)
        else:
            d = dh * (1.0 - hv * hv)
        tl.store(DPRE + n * H + offs, d, mask=m)


def _grid(n: int, h: int):
    block = min(1024, triton.next_power_of_2(h))
    return (n, triton.cdiv(h, block)), block


def gru_forward(xw, hl, hc, cont_next, acts, hn_keep, h_out, hc_next, hc_next_g):
    n, h = hc.shape
    grid, block = _grid(n, h)
    nxt = hc_next is not None
    _gru_fwd[grid](xw, hl, hc, cont_next if nxt else hc, acts, hn_keep, h_out,
                   hc_next if nxt else h_out, hc_next_g if nxt else h_out, h, HAS_NEXT=nxt,
                   BLOCK=block)


def gru_backward(dh_out, dhc_next, cont_next, acts, hn, hc, dx, dhl, dhc_direct):
    n, h = hc.shape
    grid, block = _grid(n, h)
    nxt = dhc_next is not None
    _gru_bwd[grid](dh_out, dhc_next if nxt else dh_out, cont_next if nxt else dh_out, acts, hn,
                   hc, dx, dhl, dhc_direct, h, HAS_NEXT=nxt, BLOCK=block)


def rnn_forward(pre, cont_next, h_out, hc_next, hc_next_g, relu: bool):
    n, h = h_out.shape
    grid, block = _grid(n, h)
    nxt = hc_next is not None
    _rnn_fwd[grid](pre, cont_next if nxt else h_out, h_out, hc_next if nxt else h_out,
                   hc_next_g if nxt else h_out, h, HAS_NEXT=nxt, RELU=relu, BLOCK=block)


def rnn_backward(dh_out, dhc_next, cont_next, h, dpre, relu: bool):
    n, hh = h.shape
    grid, block = _grid(n, hh)
    nxt = dhc_next is not None
    _rnn_bwd[grid](dh_out, dhc_next if nxt else dh_out, cont_next if nxt else dh_out, h, dpre,
                   hh, HAS_NEXT=nxt, RELU=relu, BLOCK=block)
