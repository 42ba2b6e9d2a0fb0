"""The CAFFE engine: a recurrent layer run as its unrolled net, one small layer per time step.

The net that runs is the :mod:`designer.engines.expansion.expand` of the layer (the same data the
``unroll`` command and the designer's unrolled view show). Two executors walk it:

- the **reference executor** (:mod:`.ops`) runs every node as its own torch op, looked up by
  node type in :data:`UNIT_OPS`, and lets autograd do the backward pass; it is the definition;
- a cell's **fast executor** (:func:`fast_steps`), where the cell has one, first checks that
  the expansion has exactly the per-step pattern it reproduces, then runs the input transform
  as one GEMM over all steps and the steps with fused kernels. A backward chain runs on the
  same kernels over the steps in reverse order. If the check fails the layer runs on the
  reference: so does a layer given ``lengths``, whose HOLD nodes the fused kernels do not
  implement.

Weights follow MyCaffe: per stacked level and chain ``W_xc`` (G x E, a block of rows per gate
in the cell's order) and ``b_c`` (G), and the recurrent weights the cell's chain holds
(``W_hc``...); the backward chain of a bidirectional layer has its own, suffixed ``_reverse``
(``W_xc_l0_reverse``). :class:`UnrolledRecurrent` (:mod:`.module`) holds and runs them.
"""
from designer.engines.unrolled.module import (FAST_STEPS, FILLS, FastSteps,  # noqa: F401
                                              UnrolledRecurrent, fast_steps, fill_chains, fills)
from designer.engines.unrolled.ops import (REFERENCE, UNIT_OPS, Run, run_reference,  # noqa: F401
                                           unit_op, weight_key)
