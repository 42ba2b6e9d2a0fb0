"""What an RG-LRU layer keeps for the backward pass, per engine: the rule
:mod:`designer.graph.memory_layers` applies to it.

Per level, direction and time step, counted with ``torch.autograd.graph.saved_tensors_hooks``
on the CPU (``tests/cells/rglru/test_rglru_memory.py``): on the **SCAN engine** what the
terms keep (5 H: the input transform, whose blocks they read, the two gates, the decay and
its square-root normaliser) and what the scan keeps per step of its chunks, the last one filled
up to 16 steps (7 H); on the **unrolled engine** each step's input transform slice, gates,
decay and products (10.25 H). The scan runs in plain arithmetic on every device, so a GPU
keeps what the CPU does. On top, what the forward holds at its peak
(:func:`designer.graph.memory_layers.held`): on SCAN its input transform and the scan's
temporaries over the filled chunks (5 H), on the unrolled net each level's step blobs no
backward reads (1 H); the unrolled net's input transform is among what it keeps (the input
gate's product keeps u, a slice of it), so it is not counted again. Measured against a
training step's peak on the CPU (``tests/cells/rglru/test_rglru_memory.py``).
"""
from __future__ import annotations

from designer.cells.rglru.spec import CELL, KIND
from designer.graph.memory_layers import Context, Kept, chains, held, memory_rule, stacked

# (values per step, values per step of the chunks the scan fills up to SCAN_CHUNK steps) per
# H, level and direction, by engine (see the module doc)
PER_LEVEL = {"SCAN": (5.0, 7.0), "CAFFE": (10.25, 0.0)}
SCAN_CHUNK = 16  # designer.engines.tensors.linear_scan.SCAN_CHUNK (a memory rule imports no torch)
UNROLLED_HELD, FUSED_HELD = 1.0, 5.0  # per H, beside the input transform (see above)


@memory_rule(KIND)
def rglru_kept(ctx: Context, params: int) -> Kept:
    """Per level and direction what its engine keeps (see the module doc), the inputs of the
    levels above the first and the dropout masks between them."""
    c = chains(ctx)
    filled = -(-c.steps // SCAN_CHUNK) * SCAN_CHUNK * c.batch * c.hidden  # over whole chunks
    per_step, per_chunk_step = PER_LEVEL["CAFFE" if ctx.engine == "CAFFE" else "SCAN"]
    gates = len(CELL.gates)  # the input transform's blocks: kept by the unrolled net
    return stacked(ctx, c, per_step * c.seq + per_chunk_step * filled, gates,
                   held(ctx, c, 0, UNROLLED_HELD, gates + FUSED_HELD))
