"""MiniRocket: a sequence turned into a fixed vector of features by random convolutions.

The kernels are those of Dempster, Schmidt and Webb (2021): 84 kernels of 9 taps, each -1 at
six taps and 2 at three (every way of choosing the three), at dilations spaced exponentially
up to the sequence's length; each feature is the proportion of steps at which one kernel's
response exceeds one bias (PPV). Nothing in it is learned by gradient: its biases are fitted
once, from the responses on training sequences, and it passes no gradient back. The plan
below (dilations, features per dilation, bias quantiles) is pure arithmetic, shared by the
shape inference, the builder and the exports.
"""
from __future__ import annotations

import math
from itertools import combinations

from designer.graph import dims as D
from designer.graph.layers.common import LENGTHS, SEQUENCE, check_lengths, sequence_input
from designer.graph.spec import LayerSpec, ParamSpec, PortSpec, TensorInfo

KERNELS = 84  # every choice of the three taps of weight 2 among nine
TAPS = 9
TWOS = tuple(combinations(range(TAPS), 3))  # kernel k's taps of weight 2
MAX_CHANNELS = 9  # a kernel sums over at most this many channels
# how the engine counts and remembers (here, so that the memory rule and init read the same)
CHUNK = 1 << 25  # comparisons held at once when counting the steps above each bias
SORT_ABOVE = 32  # more biases a kernel than this: counted from the sorted steps
REMEMBER_BYTES = 256 << 20  # the features of sequences read before, kept on their device


def features(num_features: int) -> int:
    """The layer's output size: ``num_features`` rounded down to a multiple of 84."""
    return KERNELS * (num_features // KERNELS)


def dilations(steps: int, num_features: int, max_dilations: int) -> tuple[list, list]:
    """``(dilations, features per dilation)`` for sequences of ``steps`` steps: at most
    ``max_dilations`` dilations from 1 to (steps - 1) / 8, spaced exponentially, the features
    of each kernel shared out among them (MiniRocket's ``_fit_dilations``)."""
    per_kernel = num_features // KERNELS
    n = min(per_kernel, max_dilations)
    multiplier = per_kernel / n
    top = math.log2(max(steps - 1, 1) / (TAPS - 1))
    step = top / (n - 1) if n > 1 else 0.0
    points = [2 ** (i * step) for i in range(n)]  # as numpy's logspace rounds
    if n > 1:
        points[-1] = 2 ** top
    counts: dict[int, int] = {}
    for p in points:
        d = max(int(p), 1) if top > 0 else 1
        counts[d] = counts.get(d, 0) + 1
    out = sorted(counts)
    per = [int(counts[d] * multiplier) for d in out]
    i, left = 0, per_kernel - sum(per)
    while left > 0:
        per[i] += 1
        left -= 1
        i = (i + 1) % len(per)
    return out, per


def quantiles(n: int) -> list[float]:
    """The bias quantiles, one per feature: the fractional parts of k x the golden ratio."""
    phi = (math.sqrt(5) + 1) / 2
    return [(k * phi) % 1 for k in range(1, n + 1)]


def _steps(ctx):
    t, n, c = ctx.input("x").shape
    return (n, t, c) if ctx.params["batch_first"] else (t, n, c)


def _infer(ctx):
    p = ctx.params
    x, batch, _ = sequence_input(ctx, "its kernels would slide across the sequences of a batch")
    if p["num_features"] < KERNELS:
        ctx.fail(None, f"makes num_features {p['num_features']} features, fewer than one a "
                 f"kernel ({KERNELS})")
    n = x.shape[batch]
    check_lengths(ctx, n)
    return [TensorInfo((n, features(p["num_features"])), x.dtype, None, 0)]


def _flops(ctx, outs):
    """Per sequence and step: each dilation's 84 kernels over their channels (9 taps, at most
    9 channels), then one comparison and one sum per feature."""
    t, n, c = _steps(ctx)
    if not (D.known(t) and D.known(c)):
        return None
    p = ctx.params
    used, _ = dilations(t, p["num_features"], p["max_dilations"])
    per_step = len(used) * KERNELS * 2 * TAPS * min(c, MAX_CHANNELS) + \
        2 * features(p["num_features"])
    return D.mul(n, t * per_step) if D.known(n) else D.mul(n, t, per_step)


MINI_ROCKET = LayerSpec(
    id="MiniRocket",
    category="Sequence",
    summary="Random convolution features (MiniRocket): (T, N, C) to (N, F), nothing learned",
    help=(
        "Turns each sequence into F fixed features without learning them, the MiniRocket "
        "transform (Dempster et al., 2021). 84 kernels of 9 taps (-1 at six taps, 2 at "
        "three) slide over the steps at dilations spaced exponentially up to the length of "
        "the sequences, each over a few channels chosen at random; each feature is the "
        "proportion of steps at which one kernel's response exceeds one bias. The biases are "
        "quantiles of the responses on training sequences, fitted once from the first "
        "training batch and saved with the weights. No gradient flows back through it: read "
        "the data directly, and follow it with BatchNorm and an InnerProduct, which learn the "
        "classifier (small learning rates, 1e-4, suit it). Shorter sequences are read "
        "zero-padded to the length it was fitted on, as MiniRocket reads a padded set, so "
        "how long a sequence is remains in its features; with 'lengths' connected, the "
        "padded steps are zeros whatever the data held there."
    ),
    inputs=(SEQUENCE, LENGTHS),
    outputs=(PortSpec("y", "the features, (N, F), each between 0 and 1"),),
    params=(
        ParamSpec("num_features", "int", 9996, "features made (F, rounded down to a "
                  "multiple of 84)", minimum=KERNELS, maximum=100_000, shaping=True),
        ParamSpec("max_dilations", "int", 32, "most dilations a kernel runs at",
                  minimum=1, maximum=64),
        ParamSpec("seed", "int", 0, "seeds the channels each kernel reads and the training "
                  "sequences its biases come from", minimum=0, maximum=2 ** 31 - 1),
        ParamSpec("batch_first", "bool", False, "the input is (N, T, C)", shaping=True),
    ),
    infer=_infer,
    flops=_flops,
)

SPECS = (MINI_ROCKET,)
