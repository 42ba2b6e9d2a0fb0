"""The PERSIST engine's kernels: one launch runs a whole LSTM level through all its time steps.

A launch has ``P`` programs, at most one per streaming multiprocessor, all resident at once.
Program ``p`` owns the hidden units ``u = p*U .. p*U+U-1``: their rows of the recurrent weights
(the four gates' rows, 4U x H) stay in that SM's L1 cache and registers for the whole sequence,
and their cell state never leaves the program's slice of the state buffers. Each time step ends
with one grid-wide barrier (a counter in global memory, release/acquire), after which every
program reads the full ``h_{t-1}`` from L2 (``.cg`` loads: other SMs wrote it).

Forward, per step t and batch block: ``z = pre[t] + h_{t-1} W_hh[rows]^T`` for the program's
rows; the gates and ``c_t = f c_{t-1} + i g``, ``h_t = o tanh(c_t)`` for its units; the
activated gates and ``c_t`` are kept for backward.

Backward, per step (T-1 .. 0), two phases around one barrier:
  A. each program turns the gradient reaching its units' ``h_t`` and ``c_t`` into the gradients
     of its rows' pre-activations ``dz[t]`` (written out: they are also what ``dW_hh``,
     ``dW_ih`` and ``dx`` are made of, in GEMMs over all steps after the kernel);
  B. after the barrier, ``dh_{t-1}[:, u] = dz[t] W_hh[:, u]`` over all 4H rows, for its units.
Gate order is torch's (i, f, g, o), so the weights are the cuDNN engine's, unconverted.

The accumulation is fp32 whatever the input type (fp32, or bf16 under autocast). Run with
``TRITON_INTERPRET=1`` on a CPU, a launch must have one program (nothing runs alongside it).
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl

    from designer.engines.kernels.grid_barrier import grid_sync as _grid_sync
except Exception:  # noqa: BLE001 - no Triton: the engine falls back to cuDNN
    triton = None


if triton is not None:

    @triton.jit
    def _tanh(x):
        return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)

    @triton.jit
    def _rows_times(A, a_stride, n, nm, W, rows, rm, w_stride, K,
                    BN: tl.constexpr, R: tl.constexpr, KC: tl.constexpr, DOT: tl.constexpr,
                    STAGES: tl.constexpr):
        """``A[n, :K] @ W[rows, :K]^T`` as a [BN, R] fp32 block; ``A`` is read from L2 (other
        programs wrote it), the weights through L1, where they stay between steps."""
        acc = tl.zeros((BN, R), dtype=tl.float32)
        for k0 in tl.range(0, K, KC, num_stages=STAGES):
            k = k0 + tl.arange(0, KC)
            km = k < K
            a = tl.load(A + n[:, None] * a_stride + k[None, :], mask=nm[:, None] & km[None, :],
                        other=0.0, cache_modifier=".cg").to(tl.float32)
            w = tl.load(W + rows[None, :] * w_stride + k[:, None],
                        mask=km[:, None] & rm[None, :], other=0.0).to(tl.float32)  # [KC, R]
            if DOT:
                acc += tl.dot(a, w, input_precision="ieee")
            else:
                acc += tl.sum(a[:, :, None] * w[None, :, :], axis=1)
        return acc

    @triton.jit
    def _forward(PRE, W, HS, CS, ACTS, BAR, T, N, H, ROWS_PER,
                 U: tl.constexpr, BN: tl.constexpr, KC: tl.constexpr, DOT: tl.constexpr,
                 STAGES: tl.constexpr):
        """PRE (T, N, 4H): x W_ih^T + biases. HS (T+1, N, H): HS[0] = h0 in, h_t out at t+1.
        CS (T+1, N, H) fp32 likewise. ACTS (T, N, 4H) fp32: the activated gates. Program
        (p, q) owns units p*U.. and batch rows q*ROWS_PER.. (ROWS_PER a multiple of BN)."""
        p = tl.program_id(0)
        P = tl.num_programs(0) * tl.num_programs(1)
        n_lo = tl.program_id(1) * ROWS_PER
        n_hi = tl.minimum(n_lo + ROWS_PER, N)
        j = tl.arange(0, 4 * U)                 # the program's rows, gate-major: gate*U + unit
        gate = j // U
        rows = gate * H + p * U + (j % U)
        rm = (p * U + (j % U)) < H
        u = p * U + tl.arange(0, U)
        um = u < H
        for t in range(T):
            for n0 in range(n_lo, n_hi, BN):
                n = n0 + tl.arange(0, BN)
                nm = n < n_hi
                z = _rows_times(HS + t * N * H, H, n, nm, W, rows, rm, H, H,
                                BN, 4 * U, KC, DOT, STAGES)
                m4 = nm[:, None] & rm[None, :]
                row_ptr = (t * N + n[:, None]) * 4 * H + rows[None, :]
                z += tl.load(PRE + row_ptr, mask=m4, other=0.0).to(tl.float32)
                tl.store(ACTS + row_ptr, z, mask=m4)
                tl.debug_barrier()  # the four gates of a unit were computed by other threads
                m = nm[:, None] & um[None, :]
                g_ptr = ACTS + (t * N + n[:, None]) * 4 * H + u[None, :]
                i = tl.sigmoid(tl.load(g_ptr, mask=m, other=0.0))
                f = tl.sigmoid(tl.load(g_ptr + H, mask=m, other=0.0))
                g = _tanh(tl.load(g_ptr + 2 * H, mask=m, other=0.0))
                o = tl.sigmoid(tl.load(g_ptr + 3 * H, mask=m, other=0.0))
                s_ptr = (t * N + n[:, None]) * H + u[None, :]
                c = f * tl.load(CS + s_ptr, mask=m, other=0.0) + i * g
                h = o * _tanh(c)
                tl.debug_barrier()  # every thread has read z before it is overwritten
                tl.store(g_ptr, i, mask=m)
                tl.store(g_ptr + H, f, mask=m)
                tl.store(g_ptr + 2 * H, g, mask=m)
                tl.store(g_ptr + 3 * H, o, mask=m)
                tl.store(CS + N * H + s_ptr, c, mask=m)
                tl.store(HS + N * H + s_ptr, h.to(HS.dtype.element_ty), mask=m)
            if t + 1 < T:
                _grid_sync(BAR, (t + 1) * P)

    @triton.jit
    def _backward(DY, ACTS, CS, W, DZ, DH, DC, BAR, T, N, H, ROWS_PER,
                  U: tl.constexpr, BN: tl.constexpr, RC: tl.constexpr, DOT: tl.constexpr,
                  STAGES: tl.constexpr):
        """DY (T, N, H): the loss's gradient on each output h_t. DH, DC (N, H) fp32: in, the
        gradient on the last state; out, on the first. DZ (T, N, 4H) fp32: the gradient of
        each pre-activation (out). The grid is the forward's."""
        p = tl.program_id(0)
        P = tl.num_programs(0) * tl.num_programs(1)
        n_lo = tl.program_id(1) * ROWS_PER
        n_hi = tl.minimum(n_lo + ROWS_PER, N)
        u = p * U + tl.arange(0, U)
        um = u < H
        for s in range(T):
            t = T - 1 - s
            for n0 in range(n_lo, n_hi, BN):  # A: this program's units, through the cell
                n = n0 + tl.arange(0, BN)
                m = (n < n_hi)[:, None] & um[None, :]
                st = n[:, None] * H + u[None, :]
                s_ptr = t * N * H + st
                g_ptr = ACTS + (t * N + n[:, None]) * 4 * H + u[None, :]
                dh = tl.load(DY + s_ptr, mask=m, other=0.0).to(tl.float32) + \
                    tl.load(DH + st, mask=m, other=0.0)
                i = tl.load(g_ptr, mask=m, other=0.0)
                f = tl.load(g_ptr + H, mask=m, other=0.0)
                g = tl.load(g_ptr + 2 * H, mask=m, other=0.0)
                o = tl.load(g_ptr + 3 * H, mask=m, other=0.0)
                c = tl.load(CS + N * H + s_ptr, mask=m, other=0.0)
                cp = tl.load(CS + s_ptr, mask=m, other=0.0)
                tc = _tanh(c)
                dc = tl.load(DC + st, mask=m, other=0.0) + dh * o * (1.0 - tc * tc)
                z_ptr = DZ + (t * N + n[:, None]) * 4 * H + u[None, :]
                tl.store(z_ptr, dc * g * i * (1.0 - i), mask=m)
                tl.store(z_ptr + H, dc * cp * f * (1.0 - f), mask=m)
                tl.store(z_ptr + 2 * H, dc * i * (1.0 - g * g), mask=m)
                tl.store(z_ptr + 3 * H, dh * tc * o * (1.0 - o), mask=m)
                tl.store(DC + st, dc * f, mask=m)
            _grid_sync(BAR, (s + 1) * P)
            for n0 in range(n_lo, n_hi, BN):  # B: dh_{t-1}[:, u] = dz[t] W[:, u], all rows
                n = n0 + tl.arange(0, BN)
                nm = n < n_hi
                acc = tl.zeros((BN, U), dtype=tl.float32)
                for r0 in tl.range(0, 4 * H, RC, num_stages=STAGES):
                    r = r0 + tl.arange(0, RC)
                    rm = r < 4 * H
                    dz = tl.load(DZ + (t * N + n[:, None]) * 4 * H + r[None, :],
                                 mask=nm[:, None] & rm[None, :], other=0.0, cache_modifier=".cg")
                    w = tl.load(W + r[:, None] * H + u[None, :],
                                mask=rm[:, None] & um[None, :], other=0.0).to(tl.float32)
                    if DOT:
                        acc += tl.dot(dz, w, input_precision="ieee")
                    else:
                        acc += tl.sum(dz[:, :, None] * w[None, :, :], axis=1)
                tl.store(DH + n[:, None] * H + u[None, :], acc,
                         mask=nm[:, None] & um[None, :])

    @triton.jit
    def _barriers_only(BAR, T):
        """T grid-wide barriers and nothing else: what one step's synchronisation costs."""
        P = tl.num_programs(0) * tl.num_programs(1)
        for t in range(T):
            _grid_sync(BAR, (t + 1) * P)
