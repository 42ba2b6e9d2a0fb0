"""What an mLSTM layer keeps for the backward pass, per engine: the rule
:mod:`designer.graph.memory_layers` applies to it.

Counted with ``torch.autograd.graph.saved_tensors_hooks`` on the CPU
(``tests/cells/mlstm/test_engines.py``) over sizes, heads and chunk lengths, in values per level
(T steps, N sequences, H units, NH heads, d = H/NH):

- the **CHUNK engine**: per step 1.25H (the output gate); per step of the chunks, the last
  one filled up to ``MLSTM_CHUNK`` steps, the decay and score matrices, 4 NH L values with L
  the chunk, and 7H + 11.5 NH (q, k, v by chunks, the gates, the stabilisers);
  per chunk the state it starts from, 2 NH d^2;
- the **unrolled engine**: per step 10.75H + 10.5NH and three copies of the matrix memory,
  3 NH d^2 (the state it reads, the update and the state it writes);

the matrix memory the level starts from and the one it ends with, 2 NH d^2 (of fixed size: it
counts most in short sequences of wide heads), and the input of every level above the first.
On top, while the forward runs: on CHUNK one level's input transform, on the unrolled net the
step blobs it holds to its end (``CHUNK_HELD``, ``UNROLLED_HELD``). The allocator's peak on a
GPU is checked by ``tests/benchmarks/bench_mlstm.py``.
"""
from __future__ import annotations

from designer.graph.memory_layers import Context, Kept, memory_rule

MLSTM_CHUNK = 64  # designer.cells.mlstm.arithmetic.CHUNK (the graph imports no engine)
CHUNK_PER_STEP = (1.25, 0.0)              # x H, x NH
CHUNK_PER_FILLED_STEP = (4.0, 7.0, 11.5)   # x NH L, x H, x NH
CHUNK_PER_CHUNK = 2.0                      # x NH d^2
UNROLLED_PER_STEP = (10.75, 10.5, 3.0)     # x H, x NH, x NH d^2
# what the forward holds at once beyond what it keeps: on CHUNK one level's input transform
# (4H + 2NH a step) and per filled step the decay matrix's temporaries (x NH L, x H); the
# unrolled net each level's step blobs no backward reads (x H) and the output
CHUNK_HELD = (4.0, 0.0)
# the matrix memory the level starts from (carried from the last batch, or zeros) and the one
# it ends with, alive through the step on either engine: a term of fixed size, whatever T is
STATE_COPIES = 2
UNROLLED_HELD = 1.0


def mlstm_kept(ctx) -> tuple[int, int, int]:
    """(bytes the layer alone holds, bytes its backward needs at once, bytes its forward
    holds at once on top of what it keeps) for the engine ``ctx.engine`` (CAFFE: the
    unrolled net; anything else: the chunkwise form)."""
    p = ctx.params
    x = ctx.inputs[0][0]
    t_, n = (x[1], x[0]) if p.get("batch_first", False) else (x[0], x[1])
    h, heads, levels = p["num_output"], p["num_heads"], p.get("num_layers", 1)
    memory = h * h // heads  # values of one sequence's matrix memory (all heads)
    if ctx.engine == "CAFFE":
        a, b, c = UNROLLED_PER_STEP
        per_level = t_ * n * (a * h + b * heads + c * memory)
        held = (levels * UNROLLED_HELD + 1) * t_ * n * h
    else:
        chunk = min(MLSTM_CHUNK, t_)  # a shorter sequence is one chunk
        pieces = -(-t_ // chunk)
        filled = pieces * chunk
        a, b = CHUNK_PER_STEP
        fa, fb, fc = CHUNK_PER_FILLED_STEP
        per_level = (t_ * n * (a * h + b * heads)
                     + filled * n * (fa * heads * chunk + fb * h + fc * heads)
                     + pieces * n * CHUNK_PER_CHUNK * memory)
        ha, hb = CHUNK_HELD
        held = t_ * n * (4 * h + 2 * heads) + filled * n * (ha * heads * chunk + hb * h)
    per_level += STATE_COPIES * n * memory  # fixed-size: whatever T is
    seq = t_ * n * h
    masks = (levels - 1) * seq * ctx.mask_bytes() if p.get("dropout_ratio", 0.0) else 0
    extra = 4 * (levels * per_level + (levels - 1) * seq) + masks
    backward = 4 * (seq * 6 + t_ * n * x[2])  # the output's and input's gradients, dq/dk/dv/do
    return int(extra), int(backward), int(4 * held)


@memory_rule("mLSTM")
def mlstm_rule(ctx: Context, params: int) -> Kept:
    """The mLSTM on its engine (see the module doc)."""
    extra, backward, forward = mlstm_kept(ctx)
    return Kept(inputs=[0], extra=extra, backward=backward, forward=forward)
