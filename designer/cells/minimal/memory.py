"""What a MinGRU or MinLSTM layer keeps for the backward pass, per engine and device: the rule
:mod:`designer.graph.memory_layers` applies to them.

Per level, direction and time step, counted with ``torch.autograd.graph.saved_tensors_hooks``
on the CPU (``tests/engines/net/test_memory.py``): on the **SCAN engine** what the terms keep (in
log space on a GPU: 5.25 H for MinGRU, its input transform among them, 6.25 H for MinLSTM;
step by step on the CPU: 3.25 H and 7.25 H) and what the scan keeps per step of its chunks,
the last one filled up to 16 steps (4.125 H in log space, 4 H step by step); on the
**unrolled engine** each step's gates, candidate and products (5.25 H for MinGRU, 9.25 H for
MinLSTM). On top, what the forward holds at its peak (:func:`designer.graph.memory_layers.held`):
on SCAN its input transform and the scan's temporaries over the filled chunks (5 H), on the
unrolled net each level's step blobs no backward reads (1 H).
"""
from __future__ import annotations

from designer.cells.minimal.spec import CELLS
from designer.graph.memory_layers import Context, Kept, chains, held, memory_rule, stacked

# (values per step, values per step of the chunks the scan fills up to SCAN_CHUNK steps) per
# H, level and direction, by engine and device (see the module doc)
PER_LEVEL = {("SCAN", "cuda"): {"MinGRU": (5.25, 4.125), "MinLSTM": (6.25, 4.125)},
             ("SCAN", "cpu"): {"MinGRU": (3.25, 4.0), "MinLSTM": (7.25, 4.0)},
             "CAFFE": {"MinGRU": (5.25, 0.0), "MinLSTM": (9.25, 0.0)}}
SCAN_CHUNK = 16  # designer.cells.minimal.arithmetic.SCAN_CHUNK (a memory rule imports no torch)
UNROLLED_HELD, FUSED_HELD = 1.0, 5.0  # per H, on top of the input transform (see above)


@memory_rule(*CELLS)
def minimal_kept(ctx: Context, params: int) -> Kept:
    """Per level and direction what its engine keeps (see the module doc), the inputs of the
    levels above the first and the dropout masks between them."""
    c = chains(ctx)
    filled = -(-c.steps // SCAN_CHUNK) * SCAN_CHUNK * c.batch * c.hidden  # over whole chunks
    scan = ("SCAN", "cuda" if ctx.device == "cuda" else "cpu")
    per_step, per_chunk_step = PER_LEVEL["CAFFE" if ctx.engine == "CAFFE" else scan][ctx.type]
    gates = len(CELLS[ctx.type].gates)
    return stacked(ctx, c, per_step * c.seq + per_chunk_step * filled, gates,
                   held(ctx, c, gates, UNROLLED_HELD, FUSED_HELD))
