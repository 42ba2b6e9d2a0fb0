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
    from designer.cells.classic.kernels.lstm import await_previous_step, chain_launch, step_autotune
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


# ------------------------------------------------------------------------- fused steps --
# As for the LSTM (triton_lstm): the recurrent product and the unit of a step in one kernel,
# each program computing the G gate pre-activations of its tile itself; backward fuses the
# product carrying the next step's gradients back to h_conted with the unit's backward.
if triton is not None:

    @triton.jit
    def _tile_product(A, W, rn, rh, mn, mh, N, H, K, q, IEEE: tl.constexpr, BN: tl.constexpr,
                      BH: tl.constexpr, BK: tl.constexpr, TRANS: tl.constexpr):
        """acc[n, j] = sum_k A[n, k] W'[k, j]: W' = rows q*H.. of W (G*H, H) transposed
        (TRANS), or W (K, H) as it is."""
        acc = tl.zeros((BN, BH), dtype=tl.float32)
        for k0 in range(0, K, BK):
            rk = k0 + tl.arange(0, BK)
            mk = rk < K
            a = tl.load(A + rn[:, None] * K + rk[None, :], mask=mn[:, None] & mk[None, :],
                        other=0.0)
            if TRANS:
                wp = W + (q * H + rh[None, :]) * H + rk[:, None]
            else:
                wp = W + rk[:, None] * H + rh[None, :]
            b = tl.load(wp, mask=mk[:, None] & mh[None, :], other=0.0)
            acc += tl.dot(a, b, input_precision="ieee" if IEEE else "tf32")
        return acc

    @step_autotune()
    @triton.jit
    def _gru_step_fwd(XW, HCG, W, B, HC, CONTN, ACTS, HNK, HO, HCN, HCNG, N, H,
                      HAS_NEXT: tl.constexpr, WRITE_G: tl.constexpr, IEEE: tl.constexpr,
                      GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr,
                      BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        m2 = mn[:, None] & mh[None, :]
        hr = _tile_product(HCG, W, rn, rh, mn, mh, N, H, H, 0, IEEE, BN, BH, BK, True)
        hz = _tile_product(HCG, W, rn, rh, mn, mh, N, H, H, 1, IEEE, BN, BH, BK, True)
        hn = _tile_product(HCG, W, rn, rh, mn, mh, N, H, H, 2, IEEE, BN, BH, BK, True)
        hr += tl.load(B + rh, mask=mh, other=0.0).to(tl.float32)[None, :]
        hz += tl.load(B + H + rh, mask=mh, other=0.0).to(tl.float32)[None, :]
        hn += tl.load(B + 2 * H + rh, mask=mh, other=0.0).to(tl.float32)[None, :]
        row = rn[:, None] * 3 * H + rh[None, :]
        hrow = rn[:, None] * H + rh[None, :]
        r = tl.sigmoid(tl.load(XW + row, mask=m2, other=0.0).to(tl.float32) + hr)
        z = tl.sigmoid(tl.load(XW + row + H, mask=m2, other=0.0).to(tl.float32) + hz)
        nn = _tanh(tl.load(XW + row + 2 * H, mask=m2, other=0.0).to(tl.float32) + r * hn)
        hc = tl.load(HC + hrow, mask=m2, other=0.0).to(tl.float32)
        hv = (1.0 - z) * nn + z * hc
        tl.store(ACTS + row, r, mask=m2)
        tl.store(ACTS + row + H, z, mask=m2)
        tl.store(ACTS + row + 2 * H, nn, mask=m2)
        tl.store(HNK + hrow, hn, mask=m2)
        tl.store(HO + hrow, hv, mask=m2)
        if HAS_NEXT:
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            tl.store(HCN + hrow, hv * kn, mask=m2)
            if WRITE_G:
                tl.store(HCNG + hrow, hv * kn, mask=m2)

    @step_autotune()
    @triton.jit
    def _gru_step_bwd(DHLN, W, DIRN, DHO, CONTN, ACTS, HN, HC, DX, DHL, DHLG, DIRECT, N, H,
                      HAS_NEXT: tl.constexpr, WRITE_G: tl.constexpr, IEEE: tl.constexpr,
                      GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr,
                      BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        m2 = mn[:, None] & mh[None, :]
        hrow = rn[:, None] * H + rh[None, :]
        dh = tl.load(DHO + hrow, mask=m2, other=0.0).to(tl.float32)
        if HAS_NEXT:  # grad of h_conted_{t+1}: the unit's own part + dhl_{t+1} x W_hc
            acc = _tile_product(DHLN, W, rn, rh, mn, mh, N, H, 3 * H, 0, IEEE, BN, BH, BK,
                                False)
            acc += tl.load(DIRN + hrow, mask=m2, other=0.0)
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            dh += kn * acc
        row = rn[:, None] * 3 * H + rh[None, :]
        r = tl.load(ACTS + row, mask=m2, other=0.0)
        z = tl.load(ACTS + row + H, mask=m2, other=0.0)
        nn = tl.load(ACTS + row + 2 * H, mask=m2, other=0.0)
        hn = tl.load(HN + hrow, mask=m2, other=0.0)
        hc = tl.load(HC + hrow, mask=m2, other=0.0)
        dn = dh * (1.0 - z) * (1.0 - nn * nn)
        dz = dh * (hc - nn) * z * (1.0 - z)
        dr = dn * hn * r * (1.0 - r)
        tl.store(DX + row, dr, mask=m2)
        tl.store(DX + row + H, dz, mask=m2)
        tl.store(DX + row + 2 * H, dn, mask=m2)
        tl.store(DHL + row, dr, mask=m2)
        tl.store(DHL + row + H, dz, mask=m2)
        tl.store(DHL + row + 2 * H, dn * r, mask=m2)
        if WRITE_G:
            tl.store(DHLG + row, dr, mask=m2)
            tl.store(DHLG + row + H, dz, mask=m2)
            tl.store(DHLG + row + 2 * H, dn * r, mask=m2)
        tl.store(DIRECT + hrow, dh * z, mask=m2)

    @step_autotune()
    @triton.jit
    def _rnn_step_fwd(XW, HCG, W, CONTN, HO, HCN, HCNG, N, H, HAS_NEXT: tl.constexpr,
                      WRITE_G: tl.constexpr, RELU: tl.constexpr, IEEE: tl.constexpr,
                      GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr,
                      BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        m2 = mn[:, None] & mh[None, :]
        hrow = rn[:, None] * H + rh[None, :]
        x = _tile_product(HCG, W, rn, rh, mn, mh, N, H, H, 0, IEEE, BN, BH, BK, True)
        x += tl.load(XW + hrow, mask=m2, other=0.0).to(tl.float32)
        if RELU:
            hv = tl.maximum(x, 0.0)
        else:
            hv = _tanh(x)
        tl.store(HO + hrow, hv, mask=m2)
        if HAS_NEXT:
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            tl.store(HCN + hrow, hv * kn, mask=m2)
            if WRITE_G:
                tl.store(HCNG + hrow, hv * kn, mask=m2)

    @step_autotune()
    @triton.jit
    def _rnn_step_bwd(DPN, W, DHO, CONTN, HV, DPRE, DPREG, N, H, HAS_NEXT: tl.constexpr,
                      WRITE_G: tl.constexpr, RELU: tl.constexpr, IEEE: tl.constexpr,
                      GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr,
                      BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        m2 = mn[:, None] & mh[None, :]
        hrow = rn[:, None] * H + rh[None, :]
        dh = tl.load(DHO + hrow, mask=m2, other=0.0).to(tl.float32)
        if HAS_NEXT:
            acc = _tile_product(DPN, W, rn, rh, mn, mh, N, H, H, 0, IEEE, BN, BH, BK, False)
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            dh += kn * acc
        hv = tl.load(HV + hrow, mask=m2, other=0.0)
        if RELU:
            d = tl.where(hv > 0.0, dh, 0.0)
        else:
            d = dh * (1.0 - hv * hv)
        tl.store(DPRE + hrow, d, mask=m2)
        if WRITE_G:
            tl.store(DPREG + hrow, d, mask=m2)


def _step_grid(n: int, h: int):
    return lambda meta: (triton.cdiv(n, meta["BN"]), triton.cdiv(h, meta["BH"]))


def _ieee(w) -> bool:
    return w.dtype == torch.float32 and not torch.backends.cuda.matmul.allow_tf32


def gru_step_forward(xw, hc_g, w, b, hc, cont_next, acts, hn_keep, h_out, hc_next, hc_next_g,
                     chained=False):
    n, h = hc.shape
    nxt = hc_next is not None
    g = nxt and hc_next_g is not None and hc_next_g is not hc_next
    _gru_step_fwd[_step_grid(n, h)](
        xw, hc_g, w, b, hc, cont_next if nxt else hc, acts, hn_keep, h_out,
        hc_next if nxt else h_out, hc_next_g if g else h_out, n, h, HAS_NEXT=nxt, WRITE_G=g,
        IEEE=_ieee(w), **chain_launch(w, chained))


def gru_step_backward(dhl_next_g, w, direct_next, dh_out, cont_next, acts, hn, hc, dx, dhl,
                      dhl_g, direct, chained=False):
    n, h = hc.shape
    nxt = dhl_next_g is not None
    g = dhl_g is not None and dhl_g is not dhl
    _gru_step_bwd[_step_grid(n, h)](
        dhl_next_g if nxt else dhl, w, direct_next if nxt else direct, dh_out,
        cont_next if nxt else dh_out, acts, hn, hc, dx, dhl, dhl_g if g else dhl, direct, n, h,
        HAS_NEXT=nxt, WRITE_G=g, IEEE=_ieee(w), **chain_launch(w, chained))


def rnn_step_forward(xw, hc_g, w, cont_next, h_out, hc_next, hc_next_g, relu: bool,
                     chained=False):
    n, h = h_out.shape
    nxt = hc_next is not None
    g = nxt and hc_next_g is not None and hc_next_g is not hc_next
    _rnn_step_fwd[_step_grid(n, h)](
        xw, hc_g, w, cont_next if nxt else h_out, h_out, hc_next if nxt else h_out,
        hc_next_g if g else h_out, n, h, HAS_NEXT=nxt, WRITE_G=g, RELU=relu, IEEE=_ieee(w),
        **chain_launch(w, chained))


def rnn_step_backward(dpre_next_g, w, dh_out, cont_next, h, dpre, dpre_g, relu: bool,
                      chained=False):
    n, hh = h.shape
    nxt = dpre_next_g is not None
    g = dpre_g is not None and dpre_g is not dpre
    _rnn_step_bwd[_step_grid(n, hh)](
        dpre_next_g if nxt else dpre, w, dh_out, cont_next if nxt else dh_out, h, dpre,
        dpre_g if g else dpre, n, hh, HAS_NEXT=nxt, WRITE_G=g, RELU=relu, IEEE=_ieee(w),
        **chain_launch(w, chained))
