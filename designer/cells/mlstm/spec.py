"""mLSTM (Beck et al., 2024, "xLSTM: Extended Long Short-Term Memory"): a long short-term memory
whose cell is a matrix per head, written with exponential input gates and read by a query.

Every gate and projection reads only the current input, so the whole sequence has a parallel
form: the CHUNK engine computes it chunk by chunk (within a chunk the quadratic parallel form
with the log-space stabilised decay matrix, across chunks the recurrent state carried), the
CAFFE engine step by step as its unrolled net (one MLSTM_UNIT per step). Both hold the same
tensors per level, ``W_xc`` ((4H + 2NH) x E) and ``b_c`` (4H + 2NH), in blocks
[q (H), k (H), v (H), o (H), i (NH), f (NH)] with NH the heads.

The state of a level is (C, n, m): the matrix memory C (NH heads of H/NH x H/NH values), the
normaliser n (H values) and the stabiliser m (one per head), each flattened to
``(levels, N, values)`` so that it is carried, cut and checkpointed as any recurrent state is.

The causal parallel form runs forwards only (the paper's mLSTM has no backward direction): a
layer asked to run bidirectional is an error whose fix turns it off; a head count that does not
divide the hidden size is an error whose fix sets the nearest head count that does.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.cell import CellSpec
from designer.graph.spec import LayerSpec, ParamSpec
from designer.graph.layers.common import bias_filler, num_output, weight_filler
from designer.graph.layers.recurrent import (BATCH_FIRST, INPUTS, OUTPUTS, STACK_DROPOUT, infer,
                                             levels)

FORGET_GATES = ("sigmoid", "exp")
CELL_NORMS = ("head", "none")
# element-wise FLOPs per hidden value of one step outside the matrix products (gates,
# normaliser, division, output gate), and per head (stabiliser, exponentials)
UNIT_FLOPS_H, UNIT_FLOPS_HEAD = 12, 10
NORM_FLOPS_H = 6  # the per-head normalisation: mean, variance, subtract, scale


def rows(h: int, heads: int) -> int:
    """Rows of W_xc: q, k, v and o (H each), the input and forget gates (one per head)."""
    return 4 * h + 2 * heads


def state_sizes(h: int, heads: int) -> tuple[int, int, int]:
    """Values per sequence and level of C, n and m."""
    return h * h // heads, h, heads


# W_xc's blocks [q, k, v, o] of H rows, then [i, f] of one row per head; the state (C, n, m);
# the same tensors on both engines: CHUNK holds the unrolled net's
CELL = CellSpec(gates=("q", "k", "v", "o", "i", "f"), states=("C", "n", "m"),
                engines=("CHUNK", "CAFFE"), holds={"CHUNK": "CAFFE"}, fused="CHUNK",
                fused_words="its chunkwise form", unit="MLSTM_UNIT",
                state_sizes=lambda p: state_sizes(p["num_output"], p.get("num_heads", 1)))


def nearest_divisor(h: int, heads: int) -> int:
    """The head count nearest ``heads`` that divides ``h`` (the smaller one on a tie)."""
    divisors = [d for d in range(1, h + 1) if h % d == 0]
    return min(divisors, key=lambda d: (abs(d - heads), d))


def _check(ctx) -> None:
    """The mLSTM's own problems, each with the one change that mends it."""
    name, p = ctx.layer, ctx.params
    h, heads = p["num_output"], p["num_heads"]
    if D.known(h) and h % heads:
        good = nearest_divisor(h, heads)
        raise ShapeError(name, (
            f"{name} splits its {h} hidden units into {heads} heads, but {heads} does not "
            f"divide {h}: every head holds an equal share of q, k and v")).mended(
                "num_heads", good)
    if p.get("bidirectional", False):
        raise ShapeError(name, (
            f"{name} is an mLSTM asked to run bidirectional, which it cannot: its parallel "
            "form is causal, forwards only, as in the paper")).mended("bidirectional", False)


def _infer_mlstm(ctx):
    _check(ctx)
    return infer(ctx)


def _count(ctx, outs):
    e = ctx.input("x").shape[2]
    if not D.known(e):
        return None
    h, heads = ctx.params["num_output"], ctx.params["num_heads"]
    total = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else h
        total += rows(h, heads) * (inp + 1)
    return total


def _flops(ctx, outs):
    x = ctx.input("x").shape
    e, h, heads = x[2], ctx.params["num_output"], ctx.params["num_heads"]
    if not D.known(e):
        return None
    per_step = 0
    for level in range(levels(ctx)):
        inp = e if level == 0 else h
        # the input transform; C's update (f C + i v k^T) and read (C q): 5 dk dv per head
        per_step += 2 * rows(h, heads) * inp + 5 * h * h // heads
        per_step += UNIT_FLOPS_H * h + UNIT_FLOPS_HEAD * heads
        if ctx.params.get("cell_norm", "head") == "head":
            per_step += NORM_FLOPS_H * h
    return D.mul(x[0], x[1], per_step)


PARAMS = (
    num_output(512, "hidden units per layer (H): the value size, and the query and key size; "
               "each of the NH heads holds H/NH of them"),
    ParamSpec("num_heads", "int", 4, "heads (NH): each keeps its own H/NH x H/NH matrix memory "
              "and its own input and forget gate; must divide num_output", minimum=1,
              maximum=1024),
    ParamSpec("num_layers", "int", 1, "stacked layers, each reading the outputs of the one "
              "below", minimum=1, maximum=16),
    STACK_DROPOUT,
    BATCH_FIRST,
    ParamSpec("bidirectional", "bool", False,
              "not for an mLSTM: its parallel form is causal, forwards only (an error with "
              "its fix)", shaping=True),
    ParamSpec("forget_gate", "choice", "sigmoid",
              "sigmoid: f = sigmoid(f~), which never exceeds 1 (the paper's choice for the "
              "mLSTM); exp: f = exp(f~), which may", choices=FORGET_GATES),
    ParamSpec("cell_norm", "choice", "head",
              "head (default): each head's read-out (C q) / max(|n^T q|, 1) is normalised to "
              "zero mean and unit variance over its H/NH values before the output gate, as the "
              "xLSTM package's cell does (its per-head layer norm, here without a learned "
              "scale). Without it the read-out grows without bound when n^T q is small, and "
              "training at usual learning rates diverges; none: the paper's equations as "
              "written", choices=CELL_NORMS),
    ParamSpec("engine", "choice", "CHUNK",
              "CHUNK: the chunkwise-parallel form, chunks of 64 steps, each at once as matrix "
              "products (the decay matrix in log space, stabilised per row), the state (C, n, "
              "m) carried from chunk to chunk, on any device; CAFFE: the unrolled net, one "
              "MLSTM_UNIT per time step, run one step after another. Both hold the same "
              "tensors, so a checkpoint of one loads into the other", choices=CELL.engines),
    weight_filler("uniform"),
    bias_filler(),
)

MLSTM = LayerSpec(
    id="mLSTM", category="Recurrent", caffe_type="MLSTM",
    summary="mLSTM (xLSTM): a matrix memory per head, exponential input gate, parallel form",
    help=(
        "mLSTM (Beck et al., 2024, \"xLSTM\"): a long short-term memory whose cell is a matrix "
        "per head. Each step, from the input alone: the query q = W_q x + b_q, the key k = (W_k x "
        "+ b_k) / sqrt(d) and the value v = W_v x + b_v (d = H/NH per head), the output gate o = "
        "sigmoid(W_o x + b_o), and per head the input gate i = exp(i~) and the forget gate f = "
        "sigmoid(f~) (or exp(f~)), i~ and f~ one number each from x. The matrix memory takes the "
        "value at the key, C_t = f C_{t-1} + i v k^T, the normaliser sums the keys, n_t = f "
        "n_{t-1} + i k, and the output reads the memory at the query: h~ = (C q) / max(|n^T q|, "
        "1), normalised per head (zero mean, unit variance over its d values; cell_norm 'none' "
        "leaves it as it is), then gated: h = o * h~. An exponential overflows, so a stabiliser "
        "m_t = max(log f + m_{t-1}, i~) is kept and C and n are stored divided by exp(m): i "
        "becomes exp(i~ - m_t), f becomes exp(log f + m_{t-1} - m_t) and the bound 1 becomes "
        "exp(-m_t); the outputs are the same. No recurrent matrix: (4H + 2NH) x E weights per "
        "level (blocks q, k, v, o, i, f). The state starts at zero and 'cont' = 0 sets it to "
        "zero. Sequences of different lengths come padded at the end with their 'lengths': a "
        "padded step keeps (C, n, m), outputs zero and passes no gradient, on both engines."
    ),
    inputs=INPUTS, outputs=OUTPUTS, params=PARAMS,
    infer=_infer_mlstm, count_params=_count, flops=_flops, cell=CELL,
)

SPECS = (MLSTM,)
