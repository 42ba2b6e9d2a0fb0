"""The gradient of the sLSTM's recurrent weights, ``dW_hc[k] = sum over steps and rows of
dpre[t, n, k's gate rows]^T (keep_t h_{t-1})[n, k's units]``, in one Triton launch.

As a torch ``einsum`` over the ``(T, N, 4H)`` pre-activation gradients this was a permuted copy
of them and a batched GEMM of tiny tiles with the whole sum (``T x N`` long) in each: at 8
heads of 64, T=256 and a batch of 64, 0.9 ms of a 2.6 ms bf16 training step on an H100
(tests/benchmarks/RESULTS.md). Here program ``(k*4 + g, s)`` reads one gate's ``d`` columns of
head ``k`` straight from the gradients for its share ``s`` of the steps and rows (coalesced rows
of ``d`` values), multiplies them into a ``d x d`` sum on the tensor cores, and writes it as a
partial; the partials of the shares are added after. Enough shares are taken to give every SM a
few programs.
"""
from __future__ import annotations

import math

import torch

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001
    triton = None

ROWS = 64   # the steps-and-rows a product of the sum takes at once


if triton is not None:

    @triton.jit
    def _dw_part(DPRE, HS, KEEP, PART, R, H, d, per,
                 HAS_KEEP: tl.constexpr, D: tl.constexpr, BR: tl.constexpr,
                 LOW: tl.constexpr, PREC: tl.constexpr):
        """PART[s, k, g*d + j, l] = sum over rows r of share s (``per`` of the R = T x N) of
        DPRE[r, g*H + k*d + j] (keep[r] HS[r, k*d + l]); DPRE (R, 4H) fp32, HS (R, H) fp32 (the
        state each step read), KEEP (R) fp32 (read where HAS_KEEP). LOW: the product's type
        (bf16 under autocast, else fp32, in PREC)."""
        kg = tl.program_id(0)
        share = tl.program_id(1)
        head = kg // 4
        g = kg % 4
        j = tl.arange(0, D)
        jm = j < d
        acc = tl.zeros((D, D), dtype=tl.float32)
        r_end = tl.minimum(share * per + per, R)
        for r0 in range(share * per, r_end, BR):
            r = r0 + tl.arange(0, BR)
            rm = r < r_end
            m2 = rm[:, None] & jm[None, :]
            a = tl.load(DPRE + r[:, None] * 4 * H + g * H + head * d + j[None, :], mask=m2,
                        other=0.0)
            h = tl.load(HS + r[:, None] * H + head * d + j[None, :], mask=m2, other=0.0)
            if HAS_KEEP:
                h = h * tl.load(KEEP + r, mask=rm, other=0.0)[:, None]
            acc += tl.dot(tl.trans(a.to(LOW)), h.to(LOW), input_precision=PREC)
        out = PART + ((share * tl.num_programs(0) + kg) * d + j[:, None]) * d + j[None, :]
        tl.store(out, acc, mask=jm[:, None] & jm[None, :])


def dw_hc(dpre: torch.Tensor, hs: torch.Tensor, keep, heads: int, d: int, width: int,
          low: torch.dtype, precision: str, sms: int) -> torch.Tensor:
    """``dW_hc`` (heads, 4d, d) fp32 from ``dpre`` (T, N, 4H) fp32 and ``hs`` (T+1, N, H): the
    state each step read is ``hs[:-1]`` (times ``keep`` (T, N) where given). ``width``: d
    padded to a power of two of at least 16 (``tl.dot``'s blocks); ``low``: the product's type
    (bf16 or fp32), ``precision``: fp32's (``"tf32x3"``, ``"tf32"``, ``"ieee"``); ``sms``: the
    GPU's SMs (0: one share, as under the interpreter)."""
    steps, batch, four_h = dpre.shape
    hidden, rows = four_h // 4, steps * batch
    shares = max(1, min(math.ceil(rows / ROWS), sms // heads)) if sms else 1
    per = math.ceil(math.ceil(rows / shares) / ROWS) * ROWS
    shares = math.ceil(rows / per)
    part = torch.empty(shares, heads * 4, d, d, device=dpre.device, dtype=torch.float32)
    kept = keep is not None
    _dw_part[(heads * 4, shares)](
        dpre, hs, keep if kept else hs, part, rows, hidden, d, per, HAS_KEEP=kept, D=width,
        BR=ROWS, LOW=tl.bfloat16 if low == torch.bfloat16 else tl.float32, PREC=precision,
        num_warps=4)
    return part.sum(0).view(heads, 4 * d, d)
