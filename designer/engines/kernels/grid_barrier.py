"""What the persistent Triton kernels share: the grid-wide barrier that ends each time step.

A persistent kernel's programs, at most one per streaming multiprocessor and all resident at
once, wait for one another with a counter in global memory (release/acquire), so that every
program reads the whole of the state the others stored in the step before.
"""
from __future__ import annotations

try:
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001 - no Triton: the engines that need it keep their fallbacks
    triton = None


if triton is not None:

    @triton.jit
    def grid_sync(BAR, target):
        """Wait until every program has arrived: ``target`` = P x (barriers so far)."""
        tl.debug_barrier()  # the whole program's stores are issued before it says it arrived
        tl.atomic_add(BAR, 1, sem="release", scope="gpu")
        seen = tl.atomic_add(BAR, 0, sem="acquire", scope="gpu")
        while seen < target:
            seen = tl.atomic_add(BAR, 0, sem="acquire", scope="gpu")
        tl.debug_barrier()
