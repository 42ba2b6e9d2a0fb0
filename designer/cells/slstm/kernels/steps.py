"""The sLSTM's persistent kernels: one launch runs one direction of one level through all its
time steps, forward, and one launch runs it backward.

The recurrent matrix is block-diagonal (one ``4d x d`` block ``W_hc[k]`` per head), so a head
reads only its own ``d`` units of ``h_{t-1}``: the heads, and the batch rows, are independent
for the whole sequence. Program ``(k, b)`` owns head ``k`` and the ``BN`` batch rows
``b*BN ..``; it loops over every step with no barrier between programs (so there is no limit on
how many run, and Triton's CPU interpreter, which runs one program after another, computes
what the GPU computes).

Forward, per step t, for each chunk of ``JC`` of the head's units (gate blocks [i, f, z, o];
:func:`_unit_forward`): ``pre = xw[t] + (keep_t h_{t-1}) W_hc[k]^T`` (fp32 accumulation,
``KC`` units of h at a time; ``tl.dot`` where the blocks are 16 wide, a broadcast product for
heads of fewer than 16 units), then the stabilised unit of
:func:`designer.cells.slstm.arithmetic.slstm_unit`. The pre-activations (fp32) and the state after
each step (h, c, n, m, fp32, ``(T+1, N, H)``, row 0 the initial state) are written out: they
are what backward reads, and the next step reads its state back from them (this program wrote
it; a ``debug_barrier`` ends each step), which keeps the registers to one chunk whatever the
head's width.

Backward, per step T-1 .. 0, two phases around a ``debug_barrier``:
  A. for each chunk of units, the unit's gradient (:func:`_unit_backward`): from ``dy_t`` and
     the carried gradients of h, c, n, m, the gradient of each pre-activation ``dpre[t]``
     (written out: it is the input transform's gradient, and ``dW_hc`` is summed from it over
     all steps after the kernel, :mod:`dw_hc`) and the carried gradients of c, n and m at t-1, the
     stabiliser's path included;
  B. ``dh_{t-1} += keep_t dpre[t] W_hc[k]`` over the head's 4d rows (:func:`_dh_chunk`).

The step bodies are ``@triton.jit`` helpers shared with :mod:`split` (Triton
inlines them: the kernels compile as if written out); the two modules differ in the grid, the
barriers and the ``.cg`` loads of what other programs wrote.

``keep`` (``cont``, optional) zeroes the state a step reads; with ``LENS`` a step at or past
a sequence's length keeps the state and outputs zero. Accumulation and state are fp32 whatever
the input type (fp32, or bf16 under autocast, where h and the gradients meet the bf16 weights
in ``tl.dot`` on the tensor cores; fp32 products there too, in three TF32 passes, where the
plan says ``"tf32x3"``, as it does on a GPU).

A head is one program here, which streams the head's whole ``4d x d`` block through one SM
each step: slow where heads are wide and few (4 heads of 128 at batch 16 are 4 programs). On a
GPU :func:`launch.plan` spreads such a head's units over programs that meet at a barrier
each step (:mod:`split`); these kernels run where it does not split (narrow heads,
wide batches, ``TUNE["split"] = 1``) and under the interpreter.
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001 - no Triton: the FUSED engine keeps its step loop
    triton = None


if triton is not None:

    @triton.jit
    def _tanh(x):
        e = tl.exp(-2.0 * tl.abs(x))
        t = (1.0 - e) / (1.0 + e)
        return tl.where(x < 0, -t, t)

    @triton.jit
    def _logsigmoid(x):
        return tl.minimum(x, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(x)))

    @triton.jit
    def _mm(a, w, DOT: tl.constexpr, PREC: tl.constexpr):
        """a [M, K] fp32 @ w [K, J] as fp32: ``tl.dot`` in w's type (a cast to it), else a
        broadcast product in fp32."""
        if DOT:
            return tl.dot(a.to(w.dtype), w, input_precision=PREC)
        else:
            return tl.sum(a[:, :, None] * w.to(tl.float32)[None, :, :], axis=1)

    @triton.jit
    def _stabilised(pi, pf, np_, mp, EXP_FORGET: tl.constexpr):
        """The unit's gates from i~, f~ and the state it read: (m, i', f', log f + m_prev)."""
        log_f = pf if EXP_FORGET else _logsigmoid(pf)
        a = log_f + mp
        fresh = np_ == 0.0
        m = tl.where(fresh, pi, tl.maximum(a, pi))
        i_p = tl.exp(pi - m)
        f_p = tl.where(fresh, 0.0, tl.exp(a - m))
        return m, i_p, f_p, a

    @triton.jit
    def _cell(gi, gf, gz, go, c_old, n_old, m_old, EXP_FORGET: tl.constexpr):
        """The stabilised unit from its pre-activations and the state it read (kept): h, c, n
        and m after the step."""
        m_new, i_p, f_p, _ = _stabilised(gi, gf, n_old, m_old, EXP_FORGET)
        c_new = f_p * c_old + i_p * _tanh(gz)
        n_new = f_p * n_old + i_p
        return tl.sigmoid(go) * c_new / n_new, c_new, n_new, m_new

    @triton.jit
    def _skip_padded(t, lens, dh, dc, dn, dm, dh_new, HAS_LENS: tl.constexpr,
                     BN: tl.constexpr, W: tl.constexpr):
        """What of the carried gradients ``[BN, W]`` skips step t to reach t-1 directly (dh,
        dc, dn, dm: all of it at a padded step, where ``t >= lens``; none without HAS_LENS)
        and what enters the unit (dh_new, dc, dn, dm: none at a padded step)."""
        zero = tl.zeros((BN, W), dtype=tl.float32)
        if HAS_LENS:
            v = (t < lens)[:, None]
            return (tl.where(v, 0.0, dh), tl.where(v, 0.0, dc), tl.where(v, 0.0, dn),
                    tl.where(v, 0.0, dm), tl.where(v, dh_new, 0.0), tl.where(v, dc, 0.0),
                    tl.where(v, dn, 0.0), tl.where(v, dm, 0.0))
        return zero, zero, zero, zero, dh_new, dc, dn, dm

    @triton.jit
    def _cell_backward(pi, pf, pz, po, c_old, n_old, m_old, dh_new, dc, dn, dm,
                       EXP_FORGET: tl.constexpr):
        """The unit's gradient (:func:`_unit_backward` gives the equations) from its
        pre-activations, the state it read (kept) and the gradients on its h (dh_new) and
        carried c, n, m: (d i~, d f~, d z~, d o~; dc_tot f', dn_tot f', d_a), the last three
        what reaches c, n and m at t-1."""
        _, i_p, f_p, a = _stabilised(pi, pf, n_old, m_old, EXP_FORGET)
        z = _tanh(pz)
        o = tl.sigmoid(po)
        c_new = f_p * c_old + i_p * z
        n_new = f_p * n_old + i_p
        h_new = o * c_new / n_new
        dc_tot = dc + dh_new * o / n_new
        dn_tot = dn - dh_new * h_new / n_new
        dm_new = dm - dc_tot * c_new - dn_tot * n_new
        # the max's gradient to its winner, halved on a tie (as torch.maximum's)
        fresh = n_old == 0.0
        to_f = tl.where(fresh, 0.0, tl.where(a > pi, dm_new,
                                             tl.where(a == pi, 0.5 * dm_new, 0.0)))
        d_a = (dc_tot * c_old + dn_tot * n_old) * f_p + to_f
        d_f = d_a if EXP_FORGET else d_a * tl.sigmoid(-pf)
        return ((dc_tot * z + dn_tot) * i_p + dm_new - to_f, d_f, dc_tot * i_p * (1.0 - z * z),
                dh_new * (c_new / n_new) * o * (1.0 - o), dc_tot * f_p, dn_tot * f_p, d_a)

    @triton.jit
    def _rows(head, blk, W, LENS, N, d, HAS_LENS: tl.constexpr, BN: tl.constexpr):
        """A program's set-up: its batch rows ``blk*BN ..`` (n, and nm where they exist), its
        head's block of W and, where HAS_LENS, its rows' lengths (else 0, unread)."""
        n = blk * BN + tl.arange(0, BN)
        nm = n < N
        w_head = W + head * 4 * d * d
        lens = tl.load(LENS + n, mask=nm, other=0) if HAS_LENS else 0
        return n, nm, w_head, lens

    @triton.jit
    def _keep(KEEP, t, n, nm, N, HAS_KEEP: tl.constexpr, BN: tl.constexpr):
        """``keep_t`` of the program's rows, ``[BN, 1]`` (1 without KEEP)."""
        keep = tl.full((BN, 1), 1.0, tl.float32)
        if HAS_KEEP:
            keep = tl.load(KEEP + t * N + n, mask=nm, other=1.0).to(tl.float32)[:, None]
        return keep

    @triton.jit
    def _put_gates(P, off, gi, gf, gz, go, H, mask):
        """Store the four gate blocks at ``off`` of a (T, N, 4H) tensor (gates H apart)."""
        tl.store(P + off, gi, mask=mask)
        tl.store(P + off + H, gf, mask=mask)
        tl.store(P + off + 2 * H, gz, mask=mask)
        tl.store(P + off + 3 * H, go, mask=mask)

    @triton.jit
    def _step(KEEP, t, n, nm, head, N, H, d, HAS_KEEP: tl.constexpr, BN: tl.constexpr):
        """Step t's offsets of the program's rows (``[BN, 1]``): the head's first unit in a
        (N, H) tensor, in the state's row t and in the (T, N, 4H) tensors' row t; and
        ``keep_t`` (1 without KEEP)."""
        row = n[:, None] * H + head * d          # [BN, 1]: the head's first unit
        prev = t * N * H + row
        x_row = (t * N + n[:, None]) * 4 * H + head * d
        return row, prev, x_row, _keep(KEEP, t, n, nm, N, HAS_KEEP, BN)

    @triton.jit
    def _unit_forward(XW, w_head, HS, CS, NS, MS, PRE, Y, j0, t, row, prev, x_row, keep, nm,
                      lens, N, H, d, EXP_FORGET: tl.constexpr, HAS_LENS: tl.constexpr,
                      D: tl.constexpr, BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                      DOT: tl.constexpr, PREC: tl.constexpr, CACHE: tl.constexpr):
        """The forward of step t for the ``JC`` units ``j0 ..`` of the program's head:
        ``pre = xw[t] + (keep_t h_{t-1}) W_hc[k]^T`` (``KC`` units of h at a time), stored, then
        the stabilised unit; h, c, n, m after the step, and y (zero at a padded step, where the
        state is kept), stored. row, prev, x_row: the head's first unit in a (N, H) tensor, in
        the state's row t and in the (T, N, 4H) tensors' row t (``[BN, 1]``). CACHE: the loads
        of h's modifier (``".cg"`` where other programs of the group wrote it, else ``""``)."""
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
                        other=0.0, cache_modifier=CACHE) * keep
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
        _put_gates(PRE, x_row + j[None, :], gi, gf, gz, go, H, m2)
        sp = prev + j[None, :]
        c_old = tl.load(CS + sp, mask=m2, other=0.0)
        n_old = tl.load(NS + sp, mask=m2, other=0.0)
        m_old = tl.load(MS + sp, mask=m2, other=0.0)
        h_new, c_new, n_new, m_new = _cell(gi, gf, gz, go, c_old * keep, n_old * keep,
                                           m_old * keep, EXP_FORGET)
        y = h_new
        if HAS_LENS:
            v = (t < lens)[:, None]
            h_new = tl.where(v, h_new, tl.load(HS + sp, mask=m2, other=0.0,
                                               cache_modifier=CACHE))
            c_new = tl.where(v, c_new, c_old)
            n_new = tl.where(v, n_new, n_old)
            m_new = tl.where(v, m_new, m_old)
            y = tl.where(v, y, 0.0)
        tl.store(HS + N * H + sp, h_new, mask=m2)
        tl.store(CS + N * H + sp, c_new, mask=m2)
        tl.store(NS + N * H + sp, n_new, mask=m2)
        tl.store(MS + N * H + sp, m_new, mask=m2)
        tl.store(Y + t * N * H + row + j[None, :], y.to(Y.dtype.element_ty), mask=m2)

    @triton.jit
    def _unit_backward(DY, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, j0, t, row, x_row, keep, nm,
                       lens, N, H, d, EXP_FORGET: tl.constexpr, HAS_LENS: tl.constexpr,
                       BN: tl.constexpr, JC: tl.constexpr):
        """The backward's phase A for the ``JC`` units ``j0 ..`` at step t: from ``dy_t`` and
        the carried gradients of h, c, n, m (DH, DC, DN, DM), the gradient of each
        pre-activation ``dpre[t]`` (stored) and the carried gradients at t-1 (stored over them;
        DH gets only what skips the step, phase B adds the rest), the stabiliser's path
        included: with ``gc = dc + dh o / n`` and ``gn = dn - dh h / n`` (the totals on this
        step's c and n), ``dm = dm_carry - gc c - gn n`` goes to the max's winner
        (``log f + m_prev`` or ``log i``; half to each on a tie, as ``torch.maximum``; all to
        ``log i`` where the step starts fresh); ``da = (gc c_prev + gn n_prev) f' (+ dm where
        log f + m_prev won)`` is the gradient of both ``log f`` (times ``sigmoid(-f~)`` for a
        sigmoid gate) and ``m_prev``; ``d i~ = (gc z + gn) i' (+ dm where log i won)``;
        ``dc_prev = gc f'``, ``dn_prev = gn f'``."""
        j = j0 + tl.arange(0, JC)
        m2 = nm[:, None] & (j < d)[None, :]
        cr = row + j[None, :]
        dh = tl.load(DH + cr, mask=m2, other=0.0)
        dc = tl.load(DC + cr, mask=m2, other=0.0)
        dn = tl.load(DN + cr, mask=m2, other=0.0)
        dm = tl.load(DM + cr, mask=m2, other=0.0)
        dh_new = dh + tl.load(DY + t * N * H + cr, mask=m2, other=0.0).to(tl.float32)
        dh_old, dc_old, dn_old, dm_old, dh_new, dc, dn, dm = _skip_padded(
            t, lens, dh, dc, dn, dm, dh_new, HAS_LENS, BN, JC)
        pp = PRE + x_row + j[None, :]
        pi = tl.load(pp, mask=m2, other=0.0)
        pf = tl.load(pp + H, mask=m2, other=0.0)
        pz = tl.load(pp + 2 * H, mask=m2, other=0.0)
        po = tl.load(pp + 3 * H, mask=m2, other=0.0)
        sp = t * N * H + cr
        c_old = tl.load(CS + sp, mask=m2, other=0.0) * keep
        n_old = tl.load(NS + sp, mask=m2, other=0.0) * keep
        m_old = tl.load(MS + sp, mask=m2, other=0.0) * keep
        d_i, d_f, d_z, d_o, to_c, to_n, d_a = _cell_backward(pi, pf, pz, po, c_old, n_old,
                                                             m_old, dh_new, dc, dn, dm,
                                                             EXP_FORGET)
        _put_gates(DPRE, x_row + j[None, :], d_i, d_f, d_z, d_o, H, m2)
        tl.store(DH + cr, dh_old, mask=m2)
        tl.store(DC + cr, dc_old + keep * to_c, mask=m2)
        tl.store(DN + cr, dn_old + keep * to_n, mask=m2)
        tl.store(DM + cr, dm_old + keep * d_a, mask=m2)

    @triton.jit
    def _dh_chunk(w_head, DPRE, DH, j0, row, x_row, keep, nm, H, d, D: tl.constexpr,
                  BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr, DOT: tl.constexpr,
                  PREC: tl.constexpr, CACHE: tl.constexpr):
        """The backward's phase B for the ``JC`` units ``j0 ..``: ``dh_{t-1}[j] += keep_t
        dpre[t] W_hc[k][:, j]`` over the head's 4d rows (``KC`` at a time). CACHE: the loads of
        dpre's modifier (``".cg"`` where other programs of the group wrote it, else ``""``)."""
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
                acc += _mm(tl.load(dp + g * H, mask=am, other=0.0, cache_modifier=CACHE),
                           tl.load(wp + g * d * d, mask=wm, other=0.0), DOT, PREC)
        cr = row + j[None, :]
        tl.store(DH + cr, tl.load(DH + cr, mask=m2, other=0.0) + keep * acc, mask=m2)

    @triton.jit
    def _forward(XW, W, HS, CS, NS, MS, PRE, Y, KEEP, LENS, T, N, H, d,
                 EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr, HAS_LENS: tl.constexpr,
                 D: tl.constexpr, BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                 DOT: tl.constexpr, PREC: tl.constexpr):
        """XW (T, N, 4H): the input transform. W (heads, 4d, d). HS, CS, NS, MS (T+1, N, H)
        fp32: row 0 the initial state in, row t+1 the state after step t out. PRE (T, N, 4H)
        fp32: the pre-activations (out). Y (T, N, H): the outputs (zero where padded). KEEP
        (T, N) fp32, LENS (N) int64: read only where HAS_KEEP, HAS_LENS. D: d rounded up to
        a power of two."""
        head = tl.program_id(0)
        # _rows written out: called here beside _step, its inlined scope's debug labels move
        # ptxas' schedule of _backward at bf16, d=64 (same PTX, same registers)
        n = tl.program_id(1) * BN + tl.arange(0, BN)
        nm = n < N
        w_head = W + head * 4 * d * d
        lens = tl.load(LENS + n, mask=nm, other=0) if HAS_LENS else 0
        for t in range(T):
            row, prev, x_row, keep = _step(KEEP, t, n, nm, head, N, H, d, HAS_KEEP, BN)
            for j0 in range(0, D, JC):
                _unit_forward(XW, w_head, HS, CS, NS, MS, PRE, Y, j0, t, row, prev, x_row, keep,
                              nm, lens, N, H, d, EXP_FORGET, HAS_LENS, D, BN, JC, KC, DOT, PREC, "")
            tl.debug_barrier()  # the step's h is stored before the next step reads it

    @triton.jit
    def _backward(DY, W, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, KEEP, LENS, T, N, H, d,
                  EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr, HAS_LENS: tl.constexpr,
                  D: tl.constexpr, BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                  DOT: tl.constexpr, PREC: tl.constexpr):
        """DY (T, N, H): the loss's gradient on each output. DH, DC, DN, DM (N, H) fp32: in,
        the gradient on the final state; out, on the initial one. DPRE (T, N, 4H) fp32: the
        gradient of each pre-activation (out). The rest and the grid are the forward's."""
        head = tl.program_id(0)
        n = tl.program_id(1) * BN + tl.arange(0, BN)   # as _forward's: _rows written out
        nm = n < N
        w_head = W + head * 4 * d * d
        lens = tl.load(LENS + n, mask=nm, other=0) if HAS_LENS else 0
        for s in range(T):
            t = T - 1 - s
            row, _, x_row, keep = _step(KEEP, t, n, nm, head, N, H, d, HAS_KEEP, BN)
            for j0 in range(0, D, JC):  # A: through the unit, chunk by chunk
                _unit_backward(DY, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, j0, t, row, x_row,
                               keep, nm, lens, N, H, d, EXP_FORGET, HAS_LENS, BN, JC)
            tl.debug_barrier()  # dpre[t] and dh_old are stored before B reads them
            for j0 in range(0, D, JC):  # B: dh_{t-1} += keep dpre[t] W_hc[head]
                _dh_chunk(w_head, DPRE, DH, j0, row, x_row, keep, nm, H, d, D, BN, JC, KC, DOT,
                          PREC, "")
            tl.debug_barrier()  # dh_{t-1} is stored before step t-1 reads it
