"""Element-wise activations and Softmax."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.spec import LayerSpec, ParamSpec
from designer.graph.layers.common import X, Y, axis_param, same_shape


def _act(id, summary, help, params=(), flops_per=1):
    return LayerSpec(
        id=id, category="Activation", caffe_type=id.upper(), summary=summary, help=help,
        inputs=(X,), outputs=(Y,), params=params, infer=same_shape,
        flops=lambda ctx, outs: D.mul(flops_per, D.numel(outs[0].shape)),
    )


RELU = _act(
    "ReLU", "max(0, x), or a leaky slope below zero",
    "Passes positive values and replaces negative ones by negative_slope times the value "
    "(0: the plain rectifier).",
    (ParamSpec("negative_slope", "float", 0.0, "the slope for negative inputs", minimum=0.0,
               maximum=1.0),),
)
TANH = _act("TanH", "Hyperbolic tangent, into (-1, 1)",
            "Squashes each value into (-1, 1) with tanh.", flops_per=4)
SIGMOID = _act("Sigmoid", "Logistic sigmoid, into (0, 1)",
               "Squashes each value into (0, 1) with 1 / (1 + exp(-x)).", flops_per=4)
GELU = _act("GELU", "Gaussian error linear unit: x weighted by the chance a normal draw is "
            "below it",
            "x * Φ(x), Φ the standard normal's cumulative distribution, computed exactly as "
            "0.5 * x * (1 + erf(x / sqrt(2))): near x for large x, near 0 for very negative x, "
            "smooth between. The activation of transformers' and Hawk's MLPs, and of the "
            "branch that gates a Hawk block's recurrence (an Eltwise PROD multiplies it in).",
            flops_per=8)


def _softmax_infer(ctx):
    out = same_shape(ctx)
    ctx.axis(ctx.params["axis"], out[0].rank)
    return out


SOFTMAX = LayerSpec(
    id="Softmax",
    category="Activation",
    caffe_type="SOFTMAX",
    summary="Turns scores along an axis into probabilities",
    help="exp(x) normalised to sum to one along 'axis' (-1: the last axis).",
    inputs=(X,),
    outputs=(Y,),
    params=(axis_param(-1),),
    infer=_softmax_infer,
    flops=lambda ctx, outs: D.mul(5, D.numel(outs[0].shape)),
)

SPECS = (RELU, TANH, SIGMOID, GELU, SOFTMAX)
