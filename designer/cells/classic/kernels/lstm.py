"""Fused LSTM_UNIT kernels for CUDA, written in Triton (used by ``lstm_steps`` when present).

Forward: one kernel reads the gate pre-activations [i, f, o, g] and c_{t-1}, writes the activated
gates (kept for backward), c_t, h_t and the next step's h_conted = cont_{t+1} x h_t.
Backward: one kernel adds the gradient arriving through the next step's SCALE, runs the unit's
backward, clips the gate gradients when asked (LSTMSimple) and leaves the gradient of c_{t-1}.
"""
from __future__ import annotations

import inspect
import os

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
    def await_previous_step(GDC: tl.constexpr):
        """With programmatic dependent launch (GDC), a step's kernel is launched while the
        previous step's still runs: it waits here, before touching memory, until that one has
        finished and its writes are visible, then lets the next step's kernel launch."""
        if GDC:
            tl.extra.cuda.gdc_wait()
            tl.extra.cuda.gdc_launch_dependents()

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


_PDL: dict = {}


def chain_launch(t: torch.Tensor, chained: bool) -> dict:
    """Launch options for a step's kernel: programmatic dependent launch (Hopper and newer)
    where the kernel before it on the stream is the previous step's (``chained``), so its
    launch overlaps that kernel's run. RNN_DESIGNER_PDL=0 turns it off (comparisons)."""
    if not (chained and t.is_cuda):
        return {"GDC": False}
    dev = t.device.index if t.device.index is not None else torch.cuda.current_device()
    if dev not in _PDL:
        _PDL[dev] = (os.environ.get("RNN_DESIGNER_PDL", "1") != "0"
                     and torch.cuda.get_device_capability(dev)[0] >= 9)
    return {"GDC": True, "launch_pdl": True} if _PDL[dev] else {"GDC": False}


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


# ------------------------------------------------------------------------- fused steps --
# One kernel per step instead of two: the recurrent INNER_PRODUCT (W_hc x h_conted, a tiled
# matrix product) and the LSTM_UNIT after it. A program owns a tile of BN sequences x BH hidden
# units and computes the four gate pre-activations of that tile itself, so the unit needs no
# other program's result. Backward likewise fuses the product that carries the next step's gate
# gradients back to h_t (dgates_{t+1} x W_hc) with the unit's backward at step t.
if triton is not None:

    # Tiles of BN sequences x BH units, BK of the reduction a stage. The narrow ones (BH = 16)
    # and the long stages (BK = 128, 256) are for small batches, where a step has few tiles and
    # each program's chain of stages is the step's latency; the autotuner picks per (N, H).
    STEP_TILES = ((16, 32, 64, 4), (16, 64, 32, 4), (32, 32, 64, 4), (64, 32, 32, 4),
                  (32, 64, 64, 8), (16, 16, 64, 4), (16, 16, 128, 4), (16, 16, 256, 4),
                  (16, 32, 128, 4), (32, 16, 128, 4), (64, 16, 64, 4), (16, 16, 128, 2))
    _CONFIGS = [triton.Config({"BN": bn, "BH": bh, "BK": bk}, num_warps=w)
                for bn, bh, bk, w in STEP_TILES]

    def step_autotune(**kwargs):
        """Autotune a step kernel over STEP_TILES per (N, H, IEEE), the timings kept on disk
        (Triton's cache) where this Triton can: choosing among the tiles costs 5-25 s the
        first time a shape trains, and nothing after (RESULTS.md, round 5)."""
        if "cache_results" in inspect.signature(triton.autotune).parameters:
            kwargs["cache_results"] = True
        return triton.autotune(configs=_CONFIGS, key=["N", "H", "IEEE"], **kwargs)

    @step_autotune()
    @triton.jit
    def _step_fwd(XW, HC, W, CP, CONT, CONTN, ACTS, C, HO, HCN, HCNG, N, H,
                  HAS_NEXT: tl.constexpr, WRITE_G: tl.constexpr, IEEE: tl.constexpr,
                  GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr, BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        acc_i = tl.zeros((BN, BH), dtype=tl.float32)
        acc_f = tl.zeros((BN, BH), dtype=tl.float32)
        acc_o = tl.zeros((BN, BH), dtype=tl.float32)
        acc_g = tl.zeros((BN, BH), dtype=tl.float32)
        for k0 in range(0, H, BK):
            rk = k0 + tl.arange(0, BK)
            mk = rk < H
            a = tl.load(HC + rn[:, None] * H + rk[None, :], mask=mn[:, None] & mk[None, :],
                        other=0.0)
            wm = mk[:, None] & mh[None, :]
            wp = W + rh[None, :] * H + rk[:, None]  # W_hc is (4H, H): gate q row q*H + j
            acc_i += tl.dot(a, tl.load(wp, mask=wm, other=0.0),
                            input_precision="ieee" if IEEE else "tf32")
            acc_f += tl.dot(a, tl.load(wp + H * H, mask=wm, other=0.0),
                            input_precision="ieee" if IEEE else "tf32")
            acc_o += tl.dot(a, tl.load(wp + 2 * H * H, mask=wm, other=0.0),
                            input_precision="ieee" if IEEE else "tf32")
            acc_g += tl.dot(a, tl.load(wp + 3 * H * H, mask=wm, other=0.0),
                            input_precision="ieee" if IEEE else "tf32")
        m2 = mn[:, None] & mh[None, :]
        row = rn[:, None] * 4 * H + rh[None, :]
        zi = acc_i + tl.load(XW + row, mask=m2, other=0.0).to(tl.float32)
        zf = acc_f + tl.load(XW + row + H, mask=m2, other=0.0).to(tl.float32)
        zo = acc_o + tl.load(XW + row + 2 * H, mask=m2, other=0.0).to(tl.float32)
        zg = acc_g + tl.load(XW + row + 3 * H, mask=m2, other=0.0).to(tl.float32)
        hrow = rn[:, None] * H + rh[None, :]
        cp = tl.load(CP + hrow, mask=m2, other=0.0).to(tl.float32)
        k = tl.load(CONT + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
        i = tl.sigmoid(zi)
        f = tl.sigmoid(zf)
        o = tl.sigmoid(zo)
        g = _tanh(zg)
        c = f * (k * cp) + i * g
        hv = o * _tanh(c)
        tl.store(ACTS + row, i, mask=m2)
        tl.store(ACTS + row + H, f, mask=m2)
        tl.store(ACTS + row + 2 * H, o, mask=m2)
        tl.store(ACTS + row + 3 * H, g, mask=m2)
        tl.store(C + hrow, c, mask=m2)
        tl.store(HO + hrow, hv, mask=m2)
        if HAS_NEXT:
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            tl.store(HCN + hrow, hv * kn, mask=m2)
            if WRITE_G:
                tl.store(HCNG + hrow, hv * kn, mask=m2)

    @step_autotune(restore_value=["DC"])
    @triton.jit
    def _step_bwd(DGN, W, DHO, CONTN, DC, ACTS, C, CP, CONT, DG, DGG, N, H, clip,
                  HAS_NEXT: tl.constexpr, CLIP: tl.constexpr, WRITE_G: tl.constexpr,
                  IEEE: tl.constexpr, GDC: tl.constexpr, BN: tl.constexpr, BH: tl.constexpr,
                  BK: tl.constexpr):
        await_previous_step(GDC)
        rn = tl.program_id(0) * BN + tl.arange(0, BN)
        rh = tl.program_id(1) * BH + tl.arange(0, BH)
        mn, mh = rn < N, rh < H
        m2 = mn[:, None] & mh[None, :]
        hrow = rn[:, None] * H + rh[None, :]
        dh = tl.load(DHO + hrow, mask=m2, other=0.0).to(tl.float32)
        if HAS_NEXT:  # grad of h_conted_{t+1} = dgates_{t+1} x W_hc, then its SCALE
            acc = tl.zeros((BN, BH), dtype=tl.float32)
            for k0 in range(0, 4 * H, BK):
                rk = k0 + tl.arange(0, BK)
                mk = rk < 4 * H
                a = tl.load(DGN + rn[:, None] * 4 * H + rk[None, :],
                            mask=mn[:, None] & mk[None, :], other=0.0)
                b = tl.load(W + rk[:, None] * H + rh[None, :], mask=mk[:, None] & mh[None, :],
                            other=0.0)
                acc += tl.dot(a, b, input_precision="ieee" if IEEE else "tf32")
            kn = tl.load(CONTN + rn, mask=mn, other=0.0).to(tl.float32)[:, None]
            dh += kn * acc
        row = rn[:, None] * 4 * H + rh[None, :]
        i = tl.load(ACTS + row, mask=m2, other=0.0)
        f = tl.load(ACTS + row + H, mask=m2, other=0.0)
        o = tl.load(ACTS + row + 2 * H, mask=m2, other=0.0)
        g = tl.load(ACTS + row + 3 * H, mask=m2, other=0.0)
        c = tl.load(C + hrow, mask=m2, other=0.0)
        cp = tl.load(CP + hrow, mask=m2, other=0.0)
        k = tl.load(CONT + rn, mask=mn, other=0.0)[:, None]
        tc = _tanh(c)
        dc = tl.load(DC + hrow, mask=m2, other=0.0) + dh * o * (1.0 - tc * tc)
        di = dc * g * i * (1.0 - i)
        df = dc * (k * cp) * f * (1.0 - f)
        do = dh * tc * o * (1.0 - o)
        dg = dc * i * (1.0 - g * g)
        if CLIP:
            di = tl.minimum(tl.maximum(di, -clip), clip)
            df = tl.minimum(tl.maximum(df, -clip), clip)
            do = tl.minimum(tl.maximum(do, -clip), clip)
            dg = tl.minimum(tl.maximum(dg, -clip), clip)
        tl.store(DG + row, di, mask=m2)
        tl.store(DG + row + H, df, mask=m2)
        tl.store(DG + row + 2 * H, do, mask=m2)
        tl.store(DG + row + 3 * H, dg, mask=m2)
        if WRITE_G:  # the gate gradients again, in the type the next product reads (bf16)
            tl.store(DGG + row, di, mask=m2)
            tl.store(DGG + row + H, df, mask=m2)
            tl.store(DGG + row + 2 * H, do, mask=m2)
            tl.store(DGG + row + 3 * H, dg, mask=m2)
        tl.store(DC + hrow, dc * f * k, mask=m2)


def _step_grid(n: int, h: int):
    return lambda meta: (triton.cdiv(n, meta["BN"]), triton.cdiv(h, meta["BH"]))


def step_forward(xw_t, hc_g, w, c_prev, cont_t, cont_next, acts, c_out, h_out, hc_next,
                 hc_next_g, chained=False):
    """One step: gates = xw_t + hc_g x W^T and LSTM_UNIT (+ the next SCALE), one kernel
    (``chained``: the previous step's kernel was the last launched on the stream)."""
    n, h = c_prev.shape
    nxt = hc_next is not None
    g = nxt and hc_next_g is not None and hc_next_g is not hc_next
    _step_fwd[_step_grid(n, h)](
        xw_t, hc_g, w, c_prev, cont_t, cont_next if nxt else cont_t, acts, c_out, h_out,
        hc_next if nxt else h_out, hc_next_g if g else h_out, n, h, HAS_NEXT=nxt, WRITE_G=g,
        IEEE=w.dtype == torch.float32 and not torch.backends.cuda.matmul.allow_tf32,
        **chain_launch(w, chained))


def step_backward(dg_next_g, w, dh_out, cont_next, dc, acts, c, c_prev, cont_t, dgates,
                  dgates_g, clip, chained=False):
    """One step back: dh = dh_out + cont_{t+1} (dgates_{t+1} x W) and LSTM_UNIT's backward."""
    n, h = c.shape
    nxt = dg_next_g is not None
    g = dgates_g is not None and dgates_g is not dgates
    _step_bwd[_step_grid(n, h)](
        dg_next_g if nxt else dgates, w, dh_out, cont_next if nxt else cont_t, dc, acts, c,
        c_prev, cont_t, dgates, dgates_g if g else dgates, n, h, float(clip), HAS_NEXT=nxt,
        CLIP=clip > 0, WRITE_G=g,
        IEEE=w.dtype == torch.float32 and not torch.backends.cuda.matmul.allow_tf32,
        **chain_launch(w, chained))
