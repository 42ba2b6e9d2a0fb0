"""Convolution over time: Conv1D slides learned filters along the steps of a sequence.

The input is time-major (T, N, C) like the recurrent layers' (or (N, T, C) with batch_first),
the output (T', N, num_output). Padded sequences (``lengths``) are honoured only where every
output step lines up with an input step (stride 1, padding same or causal): the lengths then
hold for the output too, and the next layers read the same ``lengths``.
"""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.spec import FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.common import (bias_filler, check_lengths, num_output,
                                          sequence_input, weight_filler)

PADDINGS = ("same", "causal", "valid")


def span(p: dict) -> int:
    """Steps a filter reaches beyond its first: (kernel_size - 1) x dilation."""
    return (p["kernel_size"] - 1) * p["dilation"]


def pads(p: dict) -> tuple[int, int]:
    """Zero steps added (before, after) the sequence: same centres each window on its step
    (the odd one after), causal puts them all before (no step sees the future), valid none."""
    s = span(p)
    if p["padding"] == "same":
        return s // 2, s - s // 2
    if p["padding"] == "causal":
        return s, 0
    return 0, 0


def out_steps(t, p: dict):
    """T': ceil(T / stride) for same and causal, ceil((T - span) / stride) for valid."""
    s, reach = p["stride"], span(p) if p["padding"] == "valid" else 0
    if D.known(t):
        return -(-(t - reach) // s)
    inner = f"{t}-{reach}" if reach else str(t)
    if s == 1:
        return inner
    return f"ceil(({inner})/{s})" if reach else f"ceil({t}/{s})"


def _infer(ctx):
    p = ctx.params
    x, batch, time = sequence_input(ctx, "it would convolve across the batch instead of "
                                         "through time", advise=False)
    c, g, out = x.shape[2], p["groups"], p["num_output"]
    if D.known(c) and c % g:
        ctx.fail(None, f"splits its {c} input channels into {g} groups, but {c} is not a "
                 f"multiple of {g}")
    if out % g:
        ctx.fail(None, f"makes {out} outputs in {g} groups, but {out} is not a multiple of {g}")
    t, reach = x.shape[time], span(p) + 1
    if D.known(t) and reach > t:
        ctx.fail(None, f"has a kernel that spans {reach} steps (kernel_size {p['kernel_size']}, "
                 f"dilation {p['dilation']}), longer than the {t} steps of its sequences")
    check_lengths(ctx, x.shape[batch])
    if ctx.input("lengths") is not None:
        if p["stride"] != 1 or p["padding"] == "valid":
            ctx.fail(None, "reads 'lengths', which hold for its output only when each output "
                     "step lines up with an input step (stride 1, padding same or causal)")
    shape = [None, None, out]
    shape[time], shape[batch] = out_steps(t, p), x.shape[batch]
    return [TensorInfo(tuple(shape), FLOAT, None, batch)]


def _per_step(ctx) -> int | None:
    """Multiply-adds of one output step of one sequence, and its bias."""
    c = ctx.input("x").shape[2]
    if not D.known(c):
        return None
    p = ctx.params
    return p["num_output"] * (c // p["groups"]) * p["kernel_size"]


def _count(ctx, outs):
    macs = _per_step(ctx)
    if macs is None:
        return None
    return macs + (ctx.params["num_output"] if ctx.params["bias_term"] else 0)


def _flops(ctx, outs):
    macs = _per_step(ctx)
    if macs is None:
        return None
    per = 2 * macs + (ctx.params["num_output"] if ctx.params["bias_term"] else 0)
    y = outs[0].shape
    return D.mul(y[0], y[1], per)


CONV1D = LayerSpec(
    id="Conv1D",
    category="Sequence",
    caffe_type="CONVOLUTION_1D",
    summary="Convolution over time: filters slid along the steps, (T, N, C) to (T', N, H)",
    help=(
        "Slides num_output learned filters along the time axis: each output step is a weighted "
        "sum of kernel_size input steps, dilation steps apart, over all input channels (or, "
        "with groups, over its group's share). It spots short patterns wherever they occur "
        "and, before a recurrent layer, shortens or smooths long sequences cheaply. Padding "
        "'same' keeps T steps, each window centred on its step; 'causal' keeps T steps with "
        "each window ending at its step, so no output sees the future (for forecasting and "
        "generation); "
        "'valid' adds nothing and gives T - (kernel_size - 1) x dilation steps. A stride s "
        "keeps every s-th window (ceil(T / s) steps). With 'lengths' connected (padded "
        "sequences), the padded steps are zeroed before the convolution and in its output, so "
        "they change no valid output; this needs stride 1 and padding same or causal, where "
        "the lengths hold for the output unchanged: give the next layers the same lengths."
    ),
    inputs=(PortSpec("x", "the input sequence, (T, N, C) or (N, T, C) when batch-first"),
            PortSpec("lengths", "each sequence's number of valid steps, (N,) (optional): the "
                     "steps from a sequence's length on are padding", INDEX, optional=True)),
    outputs=(PortSpec("y", "the filters' responses at every output step, (T', N, H)"),),
    params=(
        num_output(64, "filters, the output channels per step (H)"),
        ParamSpec("kernel_size", "int", 3, "steps each filter reads", minimum=1,
                  maximum=4096, shaping=True),
        ParamSpec("stride", "int", 1, "steps between two windows (s > 1 keeps every s-th)",
                  minimum=1, maximum=4096, shaping=True),
        ParamSpec("dilation", "int", 1, "steps between two taps of a filter (its reach "
                  "grows, its weights do not)", minimum=1, maximum=4096, shaping=True),
        ParamSpec("padding", "choice", "same", "same: T steps, windows centred; causal: T "
                  "steps, windows end at their step; valid: no padding, fewer steps",
                  choices=PADDINGS, shaping=True),
        ParamSpec("groups", "int", 1, "channel groups convolved apart (input channels and "
                  "num_output must both be multiples of it)", minimum=1, maximum=1 << 16,
                  shaping=True),
        ParamSpec("bias_term", "bool", True, "add a learned bias per filter"),
        ParamSpec("batch_first", "bool", False, "the input and output are (N, T, ...)",
                  shaping=True),
        weight_filler("xavier"),
        bias_filler(),
    ),
    infer=_infer,
    count_params=_count,
    flops=_flops,
)

SPECS = (CONV1D,)
