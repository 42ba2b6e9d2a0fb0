"""Normalisation over channels: BatchNorm and LayerNorm, for sequences (T, N, C) (or (N, T, C)
when batch-first) and for vectors (N, C), such as SequenceLast gives.

The channels are always the last axis. BatchNorm's statistics run over the batch and the steps
(over the valid steps only when it reads the sequences' ``lengths``); LayerNorm's over each
step's own channels, so padded steps never touch the valid ones.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.spec import FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec

# forward FLOPs per value: the statistics (a sum for the mean; a difference, a square and a
# sum for the variance) and the normalisation (a difference and a product); the affine scale
# and shift add two more
STAT_FLOPS, AFFINE_FLOPS = 5, 2


def channels(ctx) -> object:
    """The input's channel count C (its last dim), a number or a symbol."""
    return ctx.input("x").shape[-1]


def _bn_infer(ctx):
    first = ctx.params["batch_first"]
    x = ctx.need_float("x")
    if x.rank not in (2, 3):
        ctx.fail("x", "a sequence of vectors, " + ("(N, T, C)" if first else "(T, N, C)")
                 + ", or one vector per sequence, (N, C)")
    batch = 0 if x.rank == 2 or first else 1
    if x.batch is not None and x.batch != batch:
        if x.rank == 2:
            raise ShapeError(ctx.layer, (
                f"{ctx.layer} reads {x} as (N, C), but axis {x.batch} is the batch (N): it "
                f"would normalise across the channels instead of across the batch"), port="x")
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} reads {x} as {'(N, T, C)' if first else '(T, N, C)'}, but axis "
            f"{x.batch} is the batch (N): it would mask the wrong padded steps; set "
            f"batch_first to {'false' if first else 'true'}"), port="x")
    lengths = ctx.input("lengths")
    if lengths is not None:
        if x.rank != 3:
            ctx.fail("x", "a sequence of vectors when 'lengths' is connected",
                     "one vector per sequence has no padded steps")
        n = x.shape[batch]
        if lengths.rank != 1 or not D.same(lengths.shape[0], n):
            ctx.fail("lengths", f"one length per sequence, ({n},)", want=(n,))
    return [x.derive(x.shape, FLOAT, values=None, batch=batch)]


def _ln_infer(ctx):
    x = ctx.need_float("x")
    if x is None or x.rank < 2:
        ctx.fail("x", "vectors to normalise: (T, N, C), (N, T, C) or (N, C)")
    return [x.derive(x.shape, FLOAT, values=None)]


def _count(ctx, outs):
    """Learned values: a scale and a shift per channel when affine (the running mean and
    variance of a BatchNorm are buffers, not learned: see ``memory_layers``)."""
    c = channels(ctx)
    if not ctx.params["affine"]:
        return 0
    return 2 * c if D.known(c) else None


def _flops(ctx, outs):
    per_value = STAT_FLOPS + (AFFINE_FLOPS if ctx.params["affine"] else 0)
    return D.mul(D.numel(outs[0].shape), per_value)


X = PortSpec("x", "the input: (T, N, C) steps, (N, T, C) when batch-first, or (N, C) "
             "vectors; C, the last axis, holds the channels")
Y = PortSpec("y", "the normalised input, of the same shape")
EPS = ParamSpec("eps", "float", 1e-5, "added to the variance before its square root, so that "
                "a channel that hardly varies is not blown up", minimum=1e-12, maximum=1.0)
AFFINE = ParamSpec("affine", "bool", True, "learn a scale and a shift per channel, applied "
                   "after normalising (2C parameters)")

BATCH_NORM = LayerSpec(
    id="BatchNorm",
    category="Core",
    caffe_type="BATCHNORM",
    summary="Normalises each channel over the batch and the steps",
    help=(
        "While training, each channel is shifted and scaled to mean 0 and variance 1 using "
        "the mean and variance of that channel over the whole batch and all its steps; a "
        "running average of those statistics is kept and used instead at evaluation and "
        "export, so that one sequence's output does not depend on the others. When "
        "'lengths' is connected, only the valid steps count: padded steps change neither the "
        "statistics nor the valid outputs. Needs several sequences a batch: with one, its "
        "statistics are those of a single sequence; LayerNorm has no such need."
    ),
    inputs=(X, PortSpec("lengths", "each sequence's number of valid steps, (N,) (optional): "
                        "the statistics then ignore the padding", INDEX, optional=True)),
    outputs=(Y,),
    params=(
        ParamSpec("momentum", "float", 0.1, "how far each training batch moves the running "
                  "mean and variance (torch's momentum; Caffe's moving_average_fraction is "
                  "1 - momentum)", minimum=0.0, maximum=1.0),
        EPS,
        AFFINE,
        ParamSpec("batch_first", "bool", False, "the input is (N, T, C) (it tells which "
                  "steps 'lengths' marks as padding)", shaping=True),
    ),
    infer=_bn_infer,
    count_params=_count,
    flops=_flops,
)

LAYER_NORM = LayerSpec(
    id="LayerNorm",
    category="Core",
    caffe_type="LAYERNORM",
    summary="Normalises each step's channels on their own",
    help=(
        "Shifts and scales each step's vector of C channels to mean 0 and variance 1 using "
        "that vector's own mean and variance, then applies a learned scale and shift per "
        "channel. Nothing is shared between steps or sequences, so it works the same in "
        "training and evaluation, on any batch size, and padded steps never affect valid ones."
    ),
    inputs=(X,),
    outputs=(Y,),
    params=(EPS, AFFINE),
    infer=_ln_infer,
    count_params=_count,
    flops=_flops,
)

SPECS = (BATCH_NORM, LAYER_NORM)
