"""Hydra: a sequence turned into a fixed vector of features by competing random convolutions.

The transform of Dempster, Schmidt and Webb (2023): random kernels of 9 taps drawn from a
normal distribution (each centred and scaled to unit absolute sum), arranged in groups of
``kernels`` (8). At every step each group's kernels compete: the one with the largest response
adds that response to its feature, the one with the smallest adds one to its count. Half the
groups read the series, half its first difference; at dilations 1, 2, 4, ... up to the
length over 8; a multivariate series is read through sums of a few channels chosen at random
per group. Each feature is passed through a square root (of its positive part), as Hydra's
own scaler takes it; the head after it standardises.

Unlike Hydra's, the number of features is fixed, ``num_features`` (the layer's output size
must be known before the data's length is): they are shared among the dilations the length
gives, as many groups at each as the budget allows, and any remainder is zeros. Short series
get more groups a dilation than Hydra's 32 a view, long ones fewer. The plan below is pure
arithmetic, shared by the shape inference, the builder, the memory rule and the exports.
"""
from __future__ import annotations

import math

from designer.graph import dims as D
from designer.graph.layers.common import LENGTHS, SEQUENCE, check_lengths, sequence_input
from designer.graph.spec import LayerSpec, ParamSpec, PortSpec, TensorInfo

TAPS = 9
VIEWS = 2      # the series and its first difference
COUNTS = 2     # a group's soft counts of its maxima and hard counts of its minima
MIN_GROUPS = 1


def steps_dilations(steps: int, params: dict) -> list[int]:
    """Hydra's dilations for sequences of ``steps`` steps: 1, 2, 4, ... up to (steps - 1) / 8
    (at least 1), at most ``max_dilations`` of them and as many as ``num_features`` gives one
    group a view at each."""
    top = math.log2(max(steps - 1, 1) / (TAPS - 1))
    count = int(top) + 1 if top >= 0 else 1
    most = min(params["max_dilations"], params["num_features"] // smallest(params["kernels"]))
    return [2 ** i for i in range(max(1, min(count, most)))]


def groups(num_features: int, kernels: int, dilations: int) -> int:
    """Groups of ``kernels`` a view reads at each of ``dilations`` dilations: as many as
    ``num_features`` holds (each gives ``COUNTS x kernels`` features a view)."""
    return max(MIN_GROUPS, num_features // (dilations * VIEWS * COUNTS * kernels))


def made(num_features: int, kernels: int, dilations: int) -> int:
    """Features the kernels make (the rest of ``num_features`` are zeros)."""
    return dilations * VIEWS * COUNTS * kernels * groups(num_features, kernels, dilations)


def smallest(kernels: int) -> int:
    """The fewest features: one group a view at one dilation."""
    return VIEWS * COUNTS * kernels


def _steps(ctx):
    t, n, c = ctx.input("x").shape
    return (n, t, c) if ctx.params["batch_first"] else (t, n, c)


def _infer(ctx):
    p = ctx.params
    x, batch, _ = sequence_input(ctx, "its kernels would slide across the sequences of a batch")
    if p["num_features"] < smallest(p["kernels"]):
        ctx.fail(None, f"makes num_features {p['num_features']} features, fewer than one "
                 f"group of {p['kernels']} kernels over the series and its difference "
                 f"({smallest(p['kernels'])})")
    n = x.shape[batch]
    check_lengths(ctx, n)
    return [TensorInfo((n, p["num_features"]), x.dtype, None, 0)]


def _flops(ctx, outs):
    """Per sequence and step: each kernel's 9 taps (and each group's channel sum), then a
    maximum and a minimum over each group's kernels."""
    t, n, c = _steps(ctx)
    if not (D.known(t) and D.known(c)):
        return None
    p = ctx.params
    used = len(steps_dilations(t, p))
    g = groups(p["num_features"], p["kernels"], used)
    per_step = used * VIEWS * g * (2 * TAPS * p["kernels"] + 2 * min(c, p["max_channels"]) +
                                   2 * p["kernels"])
    return D.mul(n, t * per_step) if D.known(n) else D.mul(n, t, per_step)


HYDRA = LayerSpec(
    id="Hydra",
    category="Sequence",
    summary="Competing random convolution features (Hydra): (T, N, C) to (N, F), nothing "
            "learned",
    help=(
        "Turns each sequence into F fixed features without learning them, the Hydra "
        "transform (Dempster et al., 2023). Random kernels of 9 taps, in groups of 8, slide "
        "over the series and over its first difference at dilations 1, 2, 4, ... up to the "
        "length over 8; at every step the kernel of a group that responds most adds its "
        "response to its feature and the one that responds least adds one to its count, so "
        "the features say which patterns dominate where, a dictionary of shapes counted. A "
        "series of several channels is read through sums of a few channels per group. Each "
        "feature is the square root of its positive part. The F features are shared among "
        "the dilations the length allows (zeros fill what is left). Fitted once, to the "
        "length of the first training batch; no gradient flows back through it. Beside "
        "MiniRocket (joined by a Concat) it adds what proportions of steps above a bias do "
        "not see; follow it with a head (an InnerProduct solved in closed form, or BatchNorm "
        "and an InnerProduct)."
    ),
    inputs=(SEQUENCE, LENGTHS),
    outputs=(PortSpec("y", "the features, (N, F), each at least 0"),),
    params=(
        ParamSpec("num_features", "int", 8192, "features made (F), shared among the "
                  "dilations", minimum=16, maximum=100_000, shaping=True),
        ParamSpec("kernels", "int", 8, "kernels that compete in a group", minimum=2,
                  maximum=64),
        ParamSpec("max_dilations", "int", 10, "most dilations (1, 2, 4, ...)", minimum=1,
                  maximum=20),
        ParamSpec("max_channels", "int", 8, "most channels a group sums (of a series with "
                  "several)", minimum=1, maximum=64),
        ParamSpec("seed", "int", 0, "seeds the kernels and the channels each group reads",
                  minimum=0, maximum=2 ** 31 - 1),
        ParamSpec("batch_first", "bool", False, "the input is (N, T, C)", shaping=True),
    ),
    infer=_infer,
    flops=_flops,
)

SPECS = (HYDRA,)
