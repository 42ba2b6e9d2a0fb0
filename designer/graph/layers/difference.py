"""Difference: the change from each step of a sequence to the next, (T, N, C) to (T-1, N, C).

The first difference of a series is what MultiRocket (Tan et al., 2022) adds to MiniRocket's
view: a second set of random convolution features read from it. With ``lengths``, the
differences from each sequence's last valid step on are zeros (a sequence of L valid steps
has L - 1 differences), so padding after the end changes nothing, and the same ``lengths``
still mark each sequence's valid steps for the layers after it.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ShapeError
from designer.graph.layers.common import numel_out
from designer.graph.spec import INDEX, LayerSpec, ParamSpec, PortSpec


def steps_after(t):
    """T - 1: the differences of T steps."""
    return t - 1 if D.known(t) else f"{t}-1"


def _axes(first: bool) -> tuple[int, int]:
    """(batch axis, time axis)."""
    return (0, 1) if first else (1, 0)


def _infer(ctx):
    first = ctx.params["batch_first"]
    layout = "(N, T, C)" if first else "(T, N, C)"
    x = ctx.need_float("x")
    if x is None or x.rank != 3:
        ctx.fail("x", "a sequence of vectors, " + layout)
    batch, time = _axes(first)
    if x.batch is not None and x.batch != batch:
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} reads {x} as {layout}, but axis {x.batch} is the batch (N): it "
            f"would subtract one sequence from the next instead of one step from the next; set "
            f"batch_first to {'false' if first else 'true'}"), port="x")
    t = x.shape[time]
    if D.known(t) and t < 2:
        ctx.fail("x", "at least 2 steps (one difference)", f"it has {t}")
    n = x.shape[batch]
    lengths = ctx.input("lengths")
    if lengths is not None and (lengths.rank != 1 or not D.same(lengths.shape[0], n)):
        ctx.fail("lengths", f"one length per sequence, ({n},)", want=(n,))
    shape = list(x.shape)
    shape[time] = steps_after(t)
    return [x.derive(tuple(shape), batch=batch, values=None)]


DIFFERENCE = LayerSpec(
    id="Difference",
    category="Sequence",
    summary="The change from each step to the next: (T, N, C) to (T-1, N, C)",
    help=(
        "Subtracts each step of a sequence from the step after it: y[t] = x[t+1] - x[t], one "
        "step fewer than the input. A series' first difference shows its slopes and turns "
        "rather than its level; MultiRocket reads random convolution features from it beside "
        "those of the series itself, and on small labelled sets a MiniRocket over it, joined "
        "to one over the series, classifies better than either. Nothing is learned. With "
        "'lengths' connected, the differences from each sequence's last valid step on are "
        "zeros (a sequence of L steps has L - 1), so the padding after its end changes "
        "nothing."
    ),
    inputs=(PortSpec("x", "the input sequence, (T, N, C) or (N, T, C) when batch-first"),
            PortSpec("lengths", "each sequence's number of valid steps, (N,) (optional: "
                     "connect it for padded sequences)", INDEX, optional=True)),
    outputs=(PortSpec("y", "the differences, (T-1, N, C) or (N, T-1, C)"),),
    params=(ParamSpec("batch_first", "bool", False, "the input and output are (N, T, C)",
                      shaping=True),),
    infer=_infer,
    flops=numel_out,  # one subtraction a value
)

SPECS = (DIFFERENCE,)
