"""The sLSTM's persistent kernels with a head's recurrent block held in registers: what
:mod:`steps` computes, for heads narrow enough that the block fits.

:mod:`steps` keeps only one chunk of units in registers and reads the head's ``4d x d``
block of ``W_hc`` and its state ``h_{t-1}`` back from memory every step (so any width runs);
:mod:`split` spreads a wide head over programs that meet at a barrier each step.
Where the block is small (``d`` <= 64, or 128 in bf16: at most 128 KB) one program of a head
and batch block loads it once, as four ``d x d`` tiles, and carries the state (h, c, n, m:
``[BN, d]`` fp32 each) in registers from step to step. A step then touches memory only for
what it must: the input transform of the next step, loaded while this one computes (one step
ahead), and the stores backward reads (the pre-activations and the state after the step) and
the output. No barrier, no read of what the step before wrote.

Backward carries the gradients of h, c, n, m the same way, with the block's tiles as
``dh_{t-1} = sum_g dpre_g[t] W_hc[k]_g`` wants them, and reads each step's pre-activations and
state one step ahead. ``dW_hc`` is summed after the kernel (:mod:`dw_hc`):
summing it in registers a step would double the block.

The unit's arithmetic is :mod:`steps`'s (:func:`steps._stabilised` and the
same expressions as :func:`steps._unit_forward` and :func:`steps._unit_backward`),
so the buffers in and out are the same and :class:`launch._Direction` runs either.
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl

    from designer.cells.slstm.kernels.steps import (_cell, _cell_backward, _keep, _put_gates,
                                                _skip_padded)
except Exception:  # noqa: BLE001 - no Triton: the FUSED engine keeps its step loop
    triton = None

BYTES = 128 * 1024  # the largest block (4 d x d in the product's type) a program holds


def fits(width: int, low_bytes: int) -> bool:
    """Whether a head padded to ``width`` units is held in registers: its block in
    ``low_bytes`` a weight is at most :data:`BYTES`."""
    return 4 * width * width * low_bytes <= BYTES


if triton is not None:

    @triton.jit
    def _tiles(w_head, d, D: tl.constexpr, TRANSPOSED: tl.constexpr):
        """The head's four gate blocks ``W_hc[k]_g`` (``[D, D]``, zero past d): transposed
        (``[k, j] = W[g d + j, k]``, forward's ``h W^T``) or as stored (``[j, k]``)."""
        a = tl.arange(0, D)
        b = tl.arange(0, D)
        mask = (a[:, None] < d) & (b[None, :] < d)
        if TRANSPOSED:
            p = w_head + b[None, :] * d + a[:, None]
        else:
            p = w_head + a[:, None] * d + b[None, :]
        return (tl.load(p, mask=mask, other=0.0), tl.load(p + d * d, mask=mask, other=0.0),
                tl.load(p + 2 * d * d, mask=mask, other=0.0),
                tl.load(p + 3 * d * d, mask=mask, other=0.0))

    @triton.jit
    def _within(n, t, T):
        """``[BN, 1]``: whether step t is one of the T (a block, as the interpreter wants a
        mask to be)."""
        return ((n * 0 + t) < T)[:, None] & ((n * 0 + t) >= 0)[:, None]

    @triton.jit
    def _four(P, off, m2, H, t_ok):
        """The four gate blocks ``[BN, D]`` at ``off`` of a (T, N, 4H) tensor as fp32 (zero
        where masked, or where ``t_ok`` (``[BN, 1]``) is false: past either end of the
        sequence)."""
        mk = m2 & t_ok
        return (tl.load(P + off, mask=mk, other=0.0).to(tl.float32),
                tl.load(P + off + H, mask=mk, other=0.0).to(tl.float32),
                tl.load(P + off + 2 * H, mask=mk, other=0.0).to(tl.float32),
                tl.load(P + off + 3 * H, mask=mk, other=0.0).to(tl.float32))

    @triton.jit
    def _program(W, LENS, N, H, d, HAS_LENS: tl.constexpr, D: tl.constexpr,
                 BN: tl.constexpr, TRANSPOSED: tl.constexpr):
        """A program's set-up: its rows (n, [BN]) and their mask, the mask of its ``[BN, D]``
        blocks, its head's four tiles (:func:`_tiles`), its rows' lengths (0 without
        HAS_LENS), and the offsets of its units in a (N, H) tensor and of their gate i in a
        (N, 4H) row."""
        head = tl.program_id(0)
        n = tl.program_id(1) * BN + tl.arange(0, BN)
        nm = n < N
        j = tl.arange(0, D)
        m2 = nm[:, None] & (j < d)[None, :]
        wi, wf, wz, wo = _tiles(W + head * 4 * d * d, d, D, TRANSPOSED)
        lens = tl.load(LENS + n, mask=nm, other=0) if HAS_LENS else 0
        sr = n[:, None] * H + head * d + j[None, :]
        xr = n[:, None] * 4 * H + head * d + j[None, :]
        return n, nm, m2, wi, wf, wz, wo, lens, sr, xr

    @triton.jit
    def _blocks(A, B, C, E, off, m2):
        """The ``[BN, D]`` blocks at ``off`` of four (N, H) tensors."""
        return (tl.load(A + off, mask=m2, other=0.0), tl.load(B + off, mask=m2, other=0.0),
                tl.load(C + off, mask=m2, other=0.0), tl.load(E + off, mask=m2, other=0.0))

    @triton.jit
    def _forward_resident(XW, W, HS, CS, NS, MS, PRE, Y, KEEP, LENS, T, N, H, d,
                          EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                          HAS_LENS: tl.constexpr, D: tl.constexpr, BN: tl.constexpr,
                          PREC: tl.constexpr):
        """:func:`steps._forward`'s arguments and grid (heads, batch blocks), the state
        carried in registers."""
        n, nm, m2, wi, wf, wz, wo, lens, sr, xr = _program(W, LENS, N, H, d, HAS_LENS, D, BN,
                                                           True)
        h, c, nn, m = _blocks(HS, CS, NS, MS, sr, m2)
        xi, xf, xz, xo = _four(XW, xr, m2, H, _within(n, 0, T))
        for t in range(T):
            # step t+1's input transform, on its way while step t computes
            ni, nf, nz, no = _four(XW, (t + 1) * N * 4 * H + xr, m2, H, _within(n, t + 1, T))
            keep = _keep(KEEP, t, n, nm, N, HAS_KEEP, BN)
            hk = (h * keep).to(wi.dtype)
            gi = xi + tl.dot(hk, wi, input_precision=PREC)
            gf = xf + tl.dot(hk, wf, input_precision=PREC)
            gz = xz + tl.dot(hk, wz, input_precision=PREC)
            go = xo + tl.dot(hk, wo, input_precision=PREC)
            _put_gates(PRE, t * N * 4 * H + xr, gi, gf, gz, go, H, m2)
            h_new, c_new, n_new, m_new = _cell(gi, gf, gz, go, c * keep, nn * keep, m * keep,
                                               EXP_FORGET)
            y = h_new
            if HAS_LENS:
                v = (t < lens)[:, None]
                h_new = tl.where(v, h_new, h)
                c_new = tl.where(v, c_new, c)
                n_new = tl.where(v, n_new, nn)
                m_new = tl.where(v, m_new, m)
                y = tl.where(v, y, 0.0)
            h, c, nn, m = h_new, c_new, n_new, m_new
            sp = (t + 1) * N * H + sr
            tl.store(HS + sp, h, mask=m2)
            tl.store(CS + sp, c, mask=m2)
            tl.store(NS + sp, nn, mask=m2)
            tl.store(MS + sp, m, mask=m2)
            tl.store(Y + t * N * H + sr, y.to(Y.dtype.element_ty), mask=m2)
            xi, xf, xz, xo = ni, nf, nz, no

    @triton.jit
    def _state(CS, NS, MS, sp, m2, t_ok):
        """c, n and m ``[BN, D]`` at ``sp`` (zero where ``t_ok`` is false)."""
        mk = m2 & t_ok
        return (tl.load(CS + sp, mask=mk, other=0.0), tl.load(NS + sp, mask=mk, other=0.0),
                tl.load(MS + sp, mask=mk, other=0.0))

    @triton.jit
    def _backward_resident(DY, W, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, KEEP, LENS, T, N, H,
                           d, EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                           HAS_LENS: tl.constexpr, D: tl.constexpr, BN: tl.constexpr,
                           PREC: tl.constexpr):
        """:func:`steps._backward`'s arguments and grid, the carried gradients in
        registers; the step's arithmetic is :func:`steps._unit_backward`'s (its
        docstring gives it) and ``dh_{t-1} += keep_t dpre[t] W_hc[k]``."""
        n, nm, m2, wi, wf, wz, wo, lens, sr, xr = _program(W, LENS, N, H, d, HAS_LENS, D, BN,
                                                           False)
        dh, dc, dn, dm = _blocks(DH, DC, DN, DM, sr, m2)
        last = T - 1
        ok = _within(n, last, T)
        pi, pf, pz, po = _four(PRE, last * N * 4 * H + xr, m2, H, ok)
        c_o, n_o, m_o = _state(CS, NS, MS, last * N * H + sr, m2, ok)
        dy = tl.load(DY + last * N * H + sr, mask=m2 & ok, other=0.0).to(tl.float32)
        for s in range(T):
            t = T - 1 - s
            # step t-1's reads, on their way while step t computes
            ok = _within(n, t - 1, T)
            qi, qf, qz, qo = _four(PRE, (t - 1) * N * 4 * H + xr, m2, H, ok)
            qc, qn, qm = _state(CS, NS, MS, (t - 1) * N * H + sr, m2, ok)
            qy = tl.load(DY + (t - 1) * N * H + sr, mask=m2 & ok, other=0.0)
            keep = _keep(KEEP, t, n, nm, N, HAS_KEEP, BN)
            dh_new = dh + dy
            dh_old, dc_old, dn_old, dm_old, dh_new, dc, dn, dm = _skip_padded(
                t, lens, dh, dc, dn, dm, dh_new, HAS_LENS, BN, D)
            d_i, d_f, d_z, d_o, to_c, to_n, d_a = _cell_backward(
                pi, pf, pz, po, c_o * keep, n_o * keep, m_o * keep, dh_new, dc, dn, dm,
                EXP_FORGET)
            _put_gates(DPRE, t * N * 4 * H + xr, d_i, d_f, d_z, d_o, H, m2)
            back = tl.dot(d_i.to(wi.dtype), wi, input_precision=PREC)
            back += tl.dot(d_f.to(wi.dtype), wf, input_precision=PREC)
            back += tl.dot(d_z.to(wi.dtype), wz, input_precision=PREC)
            back += tl.dot(d_o.to(wi.dtype), wo, input_precision=PREC)
            dh = dh_old + keep * back
            dc = dc_old + keep * to_c
            dn = dn_old + keep * to_n
            dm = dm_old + keep * d_a
            pi, pf, pz, po = qi, qf, qz, qo
            c_o, n_o, m_o = qc, qn, qm
            dy = qy.to(tl.float32)
        tl.store(DH + sr, dh, mask=m2)
        tl.store(DC + sr, dc, mask=m2)
        tl.store(DN + sr, dn, mask=m2)
        tl.store(DM + sr, dm, mask=m2)
