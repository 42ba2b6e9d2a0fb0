"""Difference: the change from each step of a sequence to the next, (T, N, C) to (T-1, N, C).

The first difference of a series is what MultiRocket (Tan et al., 2022) adds to MiniRocket's
view: a second set of random convolution features read from it. With ``lengths``, the
differences from each sequence's last valid step on are zeros (a sequence of L valid steps
has L - 1 differences), so padding after the end changes nothing, and the same ``lengths``
still mark each sequence's valid steps for the layers after it.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.layers.common import LENGTHS, SEQUENCE, check_lengths, numel_out, sequence_input
from designer.graph.spec import LayerSpec, ParamSpec, PortSpec


def steps_after(t):
    """T - 1: the differences of T steps."""
    return t - 1 if D.known(t) else f"{t}-1"


def _infer(ctx):
    x, batch, time = sequence_input(ctx, "it would subtract one sequence from the next instead "
                                         "of one step from the next")
    t = x.shape[time]
    if D.known(t) and t < 2:
        ctx.fail("x", "at least 2 steps (one difference)", f"it has {t}")
    check_lengths(ctx, x.shape[batch])
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
    inputs=(SEQUENCE, LENGTHS),
    outputs=(PortSpec("y", "the differences, (T-1, N, C) or (N, T-1, C)"),),
    params=(ParamSpec("batch_first", "bool", False, "the input and output are (N, T, C)",
                      shaping=True),),
    infer=_infer,
    flops=numel_out,  # one subtraction a value
)

SPECS = (DIFFERENCE,)
