"""Pooling over time: SequencePool reads every valid step of each sequence into one vector."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.spec import LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.common import LENGTHS, MAX_UNITS, check_lengths, sequence_input

METHODS = ("mean", "max", "attention")


def _pool_infer(ctx):
    x, batch, _ = sequence_input(ctx, "it would pool over the sequences of a batch instead "
                                      "of the steps of one", channels="H")
    n = x.shape[batch]
    check_lengths(ctx, n)
    return [TensorInfo((n, x.shape[2]), x.dtype, None, 0)]


def _steps(ctx):
    """(T, N, H) of the input, whatever its layout."""
    t, n, h = ctx.input("x").shape
    return (n, t, h) if ctx.params["batch_first"] else (t, n, h)


def _pool_count(ctx, outs):
    if ctx.params["method"] != "attention":
        return 0
    h, u = _steps(ctx)[2], ctx.params["attention_units"]
    if not D.known(h):
        return None
    return h if u == 0 else h * u + u + u  # the scoring vector; or W1, b1 and the vector


def _pool_flops(ctx, outs):
    """Per step and sequence: the sum (mean), the comparisons (max), or the scores, the
    softmax and the weighted sum (attention); per sequence the mean's division."""
    t, n, h = _steps(ctx)
    if not D.known(h):
        return None
    method, u = ctx.params["method"], ctx.params["attention_units"]
    per_seq = h if method == "mean" else 0
    if method == "attention":
        score = 2 * h if u == 0 else 2 * h * u + 2 * u + 2 * u  # W1 x + b1, tanh, v . z
        per_step = score + 3 + 2 * h  # exp, sum and divide; weight times step, summed
    else:
        per_step = h
    if D.known(t) and D.known(n):
        return n * (t * per_step + per_seq)
    return D.mul(t, n, per_step)  # symbolic: the leading term


SEQUENCE_POOL = LayerSpec(
    id="SequencePool",
    category="Shape",
    caffe_type="SEQUENCE_POOL",
    summary="Pools every valid step of each sequence: (T, N, H) to (N, H)",
    help=(
        "Reads the whole of each sequence into one vector, from all its steps rather than "
        "only the last one. mean averages the steps (a steady summary, robust to noise); "
        "max keeps each feature's largest value over the steps (picks out a pattern "
        "wherever it occurs); attention learns a score for every step and takes the "
        "softmax-weighted average, so a classifier can weigh the informative steps and "
        "ignore the rest (it starts as the mean and learns where to look). With 'lengths' "
        "connected, only each sequence's valid steps count: padded steps are left out of "
        "the mean, never win the max and get no attention. A sequence of length 0 gives "
        "zeros."
    ),
    inputs=(PortSpec("x", "the outputs at every step, (T, N, H) or (N, T, H) when "
                     "batch-first"),
            LENGTHS),
    outputs=(PortSpec("y", "one vector per sequence, (N, H)"),),
    params=(
        ParamSpec("method", "choice", "attention", "how the steps are combined: mean, max, "
                  "or attention (a learned weighted average)", choices=METHODS),
        ParamSpec("attention_units", "int", 0, "attention only: a hidden tanh layer of this "
                  "size scores each step (0: one learned vector scores it)", minimum=0,
                  maximum=MAX_UNITS),
        ParamSpec("batch_first", "bool", False, "the input is (N, T, H)", shaping=True),
    ),
    infer=_pool_infer,
    count_params=_pool_count,
    flops=_pool_flops,
)

SPECS = (SEQUENCE_POOL,)
