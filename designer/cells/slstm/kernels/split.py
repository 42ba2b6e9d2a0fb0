"""The sLSTM's persistent kernels with a head's units split across programs: what
:mod:`steps` computes, for heads too wide for one SM to stream in time.

In :mod:`steps` one program runs a whole head; at 4 heads of 128 and a batch of 16
that is 4 programs on 132 SMs, each streaming its head's ``4d x d`` block of ``W_hc`` every
step. Here a head is ``S`` programs (its "group", for one block of ``BN`` batch rows): program
``(k*S + s, b)`` owns the ``U = D/S`` units ``s*U ..`` of head ``k`` (all four gate rows of
them: ``4U x d`` of ``W_hc``, which stay in its SM's L1 for the whole sequence) and their
state. The heads stay independent: only a group meets, at a barrier of its own (a counter in
global memory, release/acquire: :mod:`designer.engines.kernels.grid_barrier`), so every program of
a launch must be resident at once: :func:`launch.plan` keeps a launch to at most one
program per SM, and splits only on a GPU (Triton's CPU interpreter runs one program after
another, and a barrier would wait for ever).

Forward, per step t (:func:`steps._unit_forward` on the program's units): the
pre-activations of the program's units from the head's whole ``h_{t-1}`` (``.cg`` loads: other
programs of the group wrote it), the stabilised unit, the program's units of ``h_t`` (and c, n,
m, pre) stored; then the group's barrier.

Backward, per step T-1 .. 0, one barrier:
  A. the unit's gradient for the program's units (:func:`steps._unit_backward`, as
     :func:`steps._backward`'s phase A): ``dpre[t]`` of its units' four gate rows, its
     units' carried gradients of c, n, m and the part of ``dh_{t-1}`` that skips the step;
  B. after the barrier, ``dh_{t-1}[own units] += keep dpre[t] W_hc[k][:, own units]`` over
     the head's 4d rows (:func:`steps._dh_chunk`; ``.cg``: the group's other programs
     wrote them). B writes only the program's own units of ``dh``, which only it reads in the
     next step's A, and the next step's A writes ``dpre[t-1]``, not the ``dpre[t]`` that B
     reads: no second barrier.
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl

    from designer.cells.slstm.kernels.steps import (_dh_chunk, _rows, _step, _unit_backward,
                                                    _unit_forward)
    from designer.engines.kernels.grid_barrier import grid_sync as _grid_sync
except Exception:  # noqa: BLE001 - no Triton: the FUSED engine keeps its step loop
    triton = None


if triton is not None:

    @triton.jit
    def _group(BAR, S: tl.constexpr, U: tl.constexpr):
        """The program's place: its head, its first unit ``u0`` (of the head's S groups of U),
        its batch block and its group's barrier counter."""
        head = tl.program_id(0) // S
        u0 = (tl.program_id(0) % S) * U
        blk = tl.program_id(1)
        bar = BAR + head * tl.num_programs(1) + blk
        return head, u0, blk, bar

    @triton.jit
    def _forward_split(XW, W, HS, CS, NS, MS, PRE, Y, KEEP, LENS, BAR, T, N, H, d,
                       EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                       HAS_LENS: tl.constexpr, D: tl.constexpr, S: tl.constexpr,
                       BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                       DOT: tl.constexpr, PREC: tl.constexpr):
        """:func:`steps._forward` on a grid of (heads x S, batch blocks); BAR (heads x
        batch blocks) int32, zero: the groups' barrier counters."""
        U: tl.constexpr = D // S
        head, u0, blk, bar = _group(BAR, S, U)
        n, nm, w_head, lens = _rows(head, blk, W, LENS, N, d, HAS_LENS, BN)
        for t in range(T):
            row, prev, x_row, keep = _step(KEEP, t, n, nm, head, N, H, d, HAS_KEEP, BN)
            for j0 in range(u0, u0 + U, JC):   # h_{t-1}: .cg, the group's programs wrote it
                _unit_forward(XW, w_head, HS, CS, NS, MS, PRE, Y, j0, t, row, prev, x_row, keep,
                              nm, lens, N, H, d, EXP_FORGET, HAS_LENS, D, BN, JC, KC, DOT, PREC,
                              ".cg")
            if t + 1 < T:
                _grid_sync(bar, (t + 1) * S)   # the head's h_t is stored before step t+1

    @triton.jit
    def _backward_split(DY, W, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, KEEP, LENS, BAR,
                        T, N, H, d, EXP_FORGET: tl.constexpr, HAS_KEEP: tl.constexpr,
                        HAS_LENS: tl.constexpr, D: tl.constexpr, S: tl.constexpr,
                        BN: tl.constexpr, JC: tl.constexpr, KC: tl.constexpr,
                        DOT: tl.constexpr, PREC: tl.constexpr):
        """:func:`steps._backward` on the forward's grid; BAR as the forward's."""
        U: tl.constexpr = D // S
        head, u0, blk, bar = _group(BAR, S, U)
        n, nm, w_head, lens = _rows(head, blk, W, LENS, N, d, HAS_LENS, BN)
        for s in range(T):
            t = T - 1 - s
            row, _, x_row, keep = _step(KEEP, t, n, nm, head, N, H, d, HAS_KEEP, BN)
            for j0 in range(u0, u0 + U, JC):  # A: through the program's units
                _unit_backward(DY, PRE, CS, NS, MS, DPRE, DH, DC, DN, DM, j0, t, row, x_row,
                               keep, nm, lens, N, H, d, EXP_FORGET, HAS_LENS, BN, JC)
            _grid_sync(bar, (s + 1) * S)   # the head's dpre[t] is stored before B reads it
            for j0 in range(u0, u0 + U, JC):  # B: dh_{t-1}[own] += keep dpre[t] W[:, own]
                _dh_chunk(w_head, DPRE, DH, j0, row, x_row, keep, nm, H, d, D, BN, JC, KC, DOT,
                          PREC, ".cg")
            tl.debug_barrier()  # dh_{t-1} is stored before step t-1's A reads it
