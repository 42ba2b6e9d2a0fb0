"""The sLSTM's persistent kernels with a head's units split across programs: what
:mod:`triton_slstm` computes, for heads too wide for one SM to stream in time.

In :mod:`triton_slstm` one program runs a whole head; at 4 heads of 128 and a batch of 16
that is 4 programs on 132 SMs, each streaming its head's ``4d x d`` block of ``W_hc`` every
step. Here a head is ``S`` programs (its "group", for one block of ``BN`` batch rows): program
``(k*S + s, b)`` owns the ``U = D/S`` units ``s*U ..`` of head ``k`` (all four gate rows of
them: ``4U x d`` of ``W_hc``, which stay in its SM's L1 for the whole sequence) and their
state. The heads stay independent: only a group meets, at a barrier of its own (a counter in
global memory, release/acquire, as :mod:`triton_persist`'s grid barrier), so every program of
a launch must be resident at once: :func:`slstm_kernel.plan` keeps a launch to at most one
program per SM, and splits only on a GPU (Triton's CPU interpreter runs one program after
another, and a barrier would wait for ever).

Forward, per step t: the pre-activations of the program's units from the head's whole
``h_{t-1}`` (``.cg`` loads: other programs of the group wrote it), the stabilised unit, the
program's units of ``h_t`` (and c, n, m, pre) stored; then the group's barrier.

Backward, per step T-1 .. 0, one barrier:
  A. the unit's gradient for the program's units (as :func:`triton_slstm._backward`'s phase
     A): ``dpre[t]`` of its units' four gate rows, its units' carried gradients of c, n, m
     and the part of ``dh_{t-1}`` that skips the step;
  B. after the barrier, ``dh_{t-1}[own units] += keep dpre[t] W_hc[k][:, own units]`` over
     the head's 4d rows (``.cg``: the group's other programs wrote them). B writes only the
     program's own units of ``dh``, which only it reads in the next step's A, and the next
     step's A writes ``dpre[t-1]``, not the ``dpre[t]`` that B reads: no second barrier.
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl

    from .triton_persist import _grid_sync
    from .triton_slstm import _mm, _stabilised, _tanh
except Exception:  # noqa: BLE001 - no Triton: the FUSED engine keeps its step loop
    triton = None


if triton is not None:

    @triton.jit
    def _forward_split(XW, W, HS, CS, NS, MS, PRE, Y, KEEP, LENS, BAR, T, N, H, d,
                       EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                       HAS_LENS: tl.constexpr, D: tl.constexpr, S: tl.constexpr,
                       BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                       DOT: tl.constexpr, PREC: tl.constexpr):
        """:func:`triton_slstm._forward` on a grid of (heads x S, batch blocks); BAR (heads x
        batch blocks) int32, zero: the groups' barrier counters."""
        U: tl.constexpr = D // S
        head = tl.program_id(0) // S
        u0 = (tl.program_id(0) % S) * U
        blk = tl.program_id(1)
        bar = BAR + head * tl.num_programs(1) + blk
        n = blk * BN + tl.arange(0, BN)
        nm = n < N
        w_head = W + head * 4 * d * d
        if HAS_LENS:
            lens = tl.load(LENS + n, mask=nm, other=0)
        for t in range(T):
            row = n[:, None] * H + head * d
            prev = t * N * H + row
            x_row = (t * N + n[:, None]) * 4 * H + head * d
            keep = tl.full((BN, 1), 1.0, tl.float32)
            if HAS_KEEP:
                keep = tl.load(KEEP + t * N + n, mask=nm, other=1.0).to(tl.float32)[:, None]
            for j0 in range(u0, u0 + U, JC):
                j = j0 + tl.arange(0, JC)
                jm = j < d
                m2 = nm[:, None] & jm[None, :]
                gi = tl.zeros((BN, JC), dtype=tl.float32)
                gf = tl.zeros((BN, JC), dtype=tl.float32)
                gz = tl.zeros((BN, JC), dtype=tl.float32)
                go = tl.zeros((BN, JC), dtype=tl.float32)
                for k0 in range(0, D, KC):
                    k = k0 + tl.arange(0, KC)
                    km = k < d
                    h = tl.load(HS + prev + k[None, :], mask=nm[:, None] & km[None, :],
                                other=0.0, cache_modifier=".cg") * keep
                    wp = w_head + j[None, :] * d + k[:, None]       # [KC, JC]: W[g*d + j, k]
                    wm = km[:, None] & jm[None, :]
                    gi += _mm(h, tl.load(wp, mask=wm, other=0.0), DOT, PREC)
                    gf += _mm(h, tl.load(wp + d * d, mask=wm, other=0.0), DOT, PREC)
                    gz += _mm(h, tl.load(wp + 2 * d * d, mask=wm, other=0.0), DOT, PREC)
                    go += _mm(h, tl.load(wp + 3 * d * d, mask=wm, other=0.0), DOT, PREC)
                xp = XW + x_row + j[None, :]
                gi += tl.load(xp, mask=m2, other=0.0).to(tl.float32)
                gf += tl.load(xp + H, mask=m2, other=0.0).to(tl.float32)
                gz += tl.load(xp + 2 * H, mask=m2, other=0.0).to(tl.float32)
                go += tl.load(xp + 3 * H, mask=m2, other=0.0).to(tl.float32)
                pp = PRE + x_row + j[None, :]
                tl.store(pp, gi, mask=m2)
                tl.store(pp + H, gf, mask=m2)
                tl.store(pp + 2 * H, gz, mask=m2)
                tl.store(pp + 3 * H, go, mask=m2)
                sp = prev + j[None, :]
                c_old = tl.load(CS + sp, mask=m2, other=0.0)
                n_old = tl.load(NS + sp, mask=m2, other=0.0)
                m_old = tl.load(MS + sp, mask=m2, other=0.0)
                m_new, i_p, f_p, _ = _stabilised(gi, gf, n_old * keep, m_old * keep,
                                                 EXP_FORGET)
                c_new = f_p * (c_old * keep) + i_p * _tanh(gz)
                n_new = f_p * (n_old * keep) + i_p
                h_new = tl.sigmoid(go) * c_new / n_new
                y = h_new
                if HAS_LENS:
                    v = (t < lens)[:, None]
                    h_new = tl.where(v, h_new, tl.load(HS + sp, mask=m2, other=0.0,
                                                       cache_modifier=".cg"))
                    c_new = tl.where(v, c_new, c_old)
                    n_new = tl.where(v, n_new, n_old)
                    m_new = tl.where(v, m_new, m_old)
                    y = tl.where(v, y, 0.0)
                tl.store(HS + N * H + sp, h_new, mask=m2)
                tl.store(CS + N * H + sp, c_new, mask=m2)
                tl.store(NS + N * H + sp, n_new, mask=m2)
                tl.store(MS + N * H + sp, m_new, mask=m2)
                tl.store(Y + t * N * H + row + j[None, :], y.to(Y.dtype.element_ty), mask=m2)
            if t + 1 < T:
                _grid_sync(bar, (t + 1) * S)   # the head's h_t is stored before step t+1

    @triton.jit
    def _backward_split(DY, W, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, KEEP, LENS, BAR,
                        T, N, H, d, EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                        HAS_LENS: tl.constexpr, D: tl.constexpr, S: tl.constexpr,
                        BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                        DOT: tl.constexpr, PREC: tl.constexpr):
        """:func:`triton_slstm._backward` on the forward's grid; BAR as the forward's."""
        U: tl.constexpr = D // S
        head = tl.program_id(0) // S
        u0 = (tl.program_id(0) % S) * U
        blk = tl.program_id(1)
        bar = BAR + head * tl.num_programs(1) + blk
        n = blk * BN + tl.arange(0, BN)
        nm = n < N
        w_head = W + head * 4 * d * d
        if HAS_LENS:
            lens = tl.load(LENS + n, mask=nm, other=0)
        for s in range(T):
            t = T - 1 - s
            row = n[:, None] * H + head * d
            x_row = (t * N + n[:, None]) * 4 * H + head * d
            keep = tl.full((BN, 1), 1.0, tl.float32)
            if HAS_KEEP:
                keep = tl.load(KEEP + t * N + n, mask=nm, other=1.0).to(tl.float32)[:, None]
            for j0 in range(u0, u0 + U, JC):  # A: through the program's units
                j = j0 + tl.arange(0, JC)
                m2 = nm[:, None] & (j < d)[None, :]
                cr = row + j[None, :]
                dh = tl.load(DH + cr, mask=m2, other=0.0)
                dc = tl.load(DC + cr, mask=m2, other=0.0)
                dn = tl.load(DN + cr, mask=m2, other=0.0)
                dm = tl.load(DM + cr, mask=m2, other=0.0)
                dh_new = dh + tl.load(DY + t * N * H + cr, mask=m2, other=0.0).to(tl.float32)
                dh_old = tl.zeros((BN, JC), dtype=tl.float32)
                dc_old = tl.zeros((BN, JC), dtype=tl.float32)
                dn_old = tl.zeros((BN, JC), dtype=tl.float32)
                dm_old = tl.zeros((BN, JC), dtype=tl.float32)
                if HAS_LENS:
                    v = (t < lens)[:, None]
                    dh_old = tl.where(v, 0.0, dh)
                    dc_old = tl.where(v, 0.0, dc)
                    dn_old = tl.where(v, 0.0, dn)
                    dm_old = tl.where(v, 0.0, dm)
                    dh_new = tl.where(v, dh_new, 0.0)
                    dc = tl.where(v, dc, 0.0)
                    dn = tl.where(v, dn, 0.0)
                    dm = tl.where(v, dm, 0.0)
                pp = PRE + x_row + j[None, :]
                pi = tl.load(pp, mask=m2, other=0.0)
                pf = tl.load(pp + H, mask=m2, other=0.0)
                pz = tl.load(pp + 2 * H, mask=m2, other=0.0)
                po = tl.load(pp + 3 * H, mask=m2, other=0.0)
                sp = t * N * H + cr
                c_old = tl.load(CS + sp, mask=m2, other=0.0) * keep
                n_old = tl.load(NS + sp, mask=m2, other=0.0) * keep
                m_old = tl.load(MS + sp, mask=m2, other=0.0) * keep
                _, i_p, f_p, a = _stabilised(pi, pf, n_old, m_old, EXP_FORGET)
                z = _tanh(pz)
                o = tl.sigmoid(po)
                c_new = f_p * c_old + i_p * z
                n_new = f_p * n_old + i_p
                h_new = o * c_new / n_new
                dc_tot = dc + dh_new * o / n_new
                dn_tot = dn - dh_new * h_new / n_new
                dm_new = dm - dc_tot * c_new - dn_tot * n_new
                fresh = n_old == 0.0
                to_f = tl.where(fresh, 0.0, tl.where(a > pi, dm_new,
                                                     tl.where(a == pi, 0.5 * dm_new, 0.0)))
                d_a = (dc_tot * c_old + dn_tot * n_old) * f_p + to_f
                d_f = d_a if EXP_FORGET else d_a * tl.sigmoid(-pf)
                dp = DPRE + x_row + j[None, :]
                tl.store(dp, (dc_tot * z + dn_tot) * i_p + dm_new - to_f, mask=m2)
                tl.store(dp + H, d_f, mask=m2)
                tl.store(dp + 2 * H, dc_tot * i_p * (1.0 - z * z), mask=m2)
                tl.store(dp + 3 * H, dh_new * (c_new / n_new) * o * (1.0 - o), mask=m2)
                tl.store(DH + cr, dh_old, mask=m2)
                tl.store(DC + cr, dc_old + keep * dc_tot * f_p, mask=m2)
                tl.store(DN + cr, dn_old + keep * dn_tot * f_p, mask=m2)
                tl.store(DM + cr, dm_old + keep * d_a, mask=m2)
            _grid_sync(bar, (s + 1) * S)   # the head's dpre[t] is stored before B reads it
            for j0 in range(u0, u0 + U, JC):  # B: dh_{t-1}[own] += keep dpre[t] W[:, own]
                j = j0 + tl.arange(0, JC)
                jm = j < d
                m2 = nm[:, None] & jm[None, :]
                acc = tl.zeros((BN, JC), dtype=tl.float32)
                for r0 in range(0, D, KC):
                    r = r0 + tl.arange(0, KC)
                    rm = r < d
                    dp = DPRE + x_row + r[None, :]
                    am = nm[:, None] & rm[None, :]
                    wp = w_head + r[:, None] * d + j[None, :]     # [KC, JC]: W[g*d + r, j]
                    wm = rm[:, None] & jm[None, :]
                    for g in tl.static_range(4):
                        acc += _mm(tl.load(dp + g * H, mask=am, other=0.0, cache_modifier=".cg"),
                                   tl.load(wp + g * d * d, mask=wm, other=0.0), DOT, PREC)
                cr = row + j[None, :]
                tl.store(DH + cr, tl.load(DH + cr, mask=m2, other=0.0) + keep * acc, mask=m2)
            tl.debug_barrier()  # dh_{t-1} is stored before step t-1's A reads it
