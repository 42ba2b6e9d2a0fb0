"""What an sLSTM layer keeps for the backward pass, per engine and device: the rule
:mod:`designer.graph.memory_layers` applies to it.

Per level, direction and time step, what autograd keeps of its step, counted from the saved
tensors on the CPU (``tests/cells/test_memory_rules.py``). The unrolled net: the step's
pre-activations, gates, exponentials, c, n, m and h, 16.5 H; of those, 1 H is the buffer the
CPU's logsigmoid (the forget gate) saves for its backward, and torch's CUDA kernel saves an
empty one (aten/src/ATen/native/cuda/LogSigmoid.cu), so it keeps 1 H less there. FUSED's
step loop: its unit saves the pre-activations (4 H) and the state it found (c, n, m), the
heads' product its h, and the states' continuation products about half an H more (fitted to
the measured peaks), 8.5 H; FUSED on CUDA: the persistent kernels' own, 8 H (what
``_Direction`` saves: the pre-activations, 4H, and h, c, n, m at T + 1 steps, fp32 whatever
the run's type), unmeasured on a GPU.

On top, what the forward holds at its peak (:func:`designer.graph.memory_layers.held`): the
unrolled net each level's step blobs no backward reads (6 H); the step loop its input
transform copied by heads (4H) and its stacked outputs (6 H); its CUDA kernels write y (1 H).
"""
from __future__ import annotations

from designer.cells.slstm.spec import CELL, SLSTM
from designer.graph.memory_layers import Context, Kept, chains, held, memory_rule, stacked

PER_LEVEL = {"FUSED": 8.5, "CAFFE": 16.5, "FUSED cuda": 8.0, "CAFFE cuda": 15.5}
UNROLLED_HELD = 6.0
FUSED_HELD = {"cpu": 6.0, "cuda": 1.0}


@memory_rule(SLSTM.id)
def slstm_kept(ctx: Context, params: int) -> Kept:
    """Per level and direction what its engine keeps (``PER_LEVEL``), the inputs of the
    levels above the first and the dropout masks between them."""
    c = chains(ctx)
    gpu = ctx.device == "cuda"
    per = PER_LEVEL[("CAFFE" if ctx.engine == "CAFFE" else "FUSED") + (" cuda" if gpu else "")]
    gates = len(CELL.gates)
    return stacked(ctx, c, per * c.seq, gates,
                   held(ctx, c, gates, UNROLLED_HELD, FUSED_HELD["cuda" if gpu else "cpu"]))
