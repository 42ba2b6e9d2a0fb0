"""Core layers: InnerProduct, Dropout, Clip, Scale and Eltwise."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import ParamError, ShapeError
from designer.graph.spec import FLOAT, LayerSpec, ParamSpec, PortSpec
from designer.graph.layers.common import (X, Y, axis_param, bias_filler, num_output, numel_out,
                                          same_shape, weight_filler)


def _ip_infer(ctx):
    x = ctx.need_float("x")
    a = ctx.axis(ctx.params["axis"], x.rank)
    if x.batch is not None and a <= x.batch:
        flat = D.shape_str(x.shape[a:])
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} flattens {flat} from axis {ctx.params['axis']} into one vector, but "
            f"axis {x.batch} of {x} is the batch (N): every sample's output would mix the "
            f"others; set axis to {x.batch + 1}"), port="x")
    if ctx.params["solve"] == "ridge" and (x.batch not in (0, None) or a != 1):
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} is solved in closed form (ridge) over one vector a sequence, but "
            f"it reads {x} from axis {ctx.params['axis']}, which keeps "
            f"{D.shape_str(x.shape[:a])} apart; feed it (N, features) with axis 1, or set "
            "solve to gradient"), port="x")
    if ctx.params["solve"] == "ridge" and not ctx.params["bias_term"]:
        ctx.fail(None, "is solved in closed form (ridge) with its intercept: set bias_term")
    return [x.derive(tuple(x.shape[:a]) + (ctx.params["num_output"],), FLOAT,
                     batch=x.batch_after(a), values=None)]


def _ip_k(ctx):
    x = ctx.input("x")
    return D.numel(x.shape[ctx.axis(ctx.params["axis"], x.rank):])


def _ip_count(ctx, outs):
    k, m = _ip_k(ctx), ctx.params["num_output"]
    if not (D.known(k) and D.known(m)):
        return None
    return k * m + (m if ctx.params["bias_term"] else 0)


def _ip_flops(ctx, outs):
    k, m = _ip_k(ctx), ctx.params["num_output"]
    if not (D.known(k) and D.known(m)):
        return None
    per_row = 2 * k * m + (m if ctx.params["bias_term"] else 0)
    return D.mul(D.numel(outs[0].shape[:-1]), per_row)


INNER_PRODUCT = LayerSpec(
    id="InnerProduct",
    category="Core",
    caffe_type="INNER_PRODUCT",
    summary="Fully connected: y = W x + b over the dims from 'axis' on",
    help=(
        "Flattens the input from 'axis' to the end into K values and maps them to num_output "
        "values with a learned K x num_output matrix and bias; the dims before 'axis' are "
        "kept (axis 2 on a (T, N, H) input applies the same layer at every step). "
        "With solve 'ridge', a classifier's last layer is solved in closed form instead: "
        "ridge regression of the classes on its inputs over every training sequence, the "
        "penalty chosen by leave-one-out from ten between 1e-3 and 1e3 (as scikit-learn's "
        "RidgeClassifierCV, MiniRocket's own classifier), its scores calibrated for the "
        "softmax. It is solved before each validation and for every checkpoint, over what "
        "the layers below it give (a frozen MiniRocket's features, or a net's penultimate "
        "layer as it has trained so far); while the net trains by gradient the layer trains "
        "with it. A net with nothing else to learn takes no gradient steps."
    ),
    inputs=(X,),
    outputs=(Y,),
    params=(
        num_output(10, "outputs per position (V: the vocabulary size)", kind="dim"),
        axis_param(1, "the first axis that is flattened into the product (Caffe's default 1)"),
        ParamSpec("bias_term", "bool", True, "add a learned bias"),
        weight_filler("xavier"),
        bias_filler(),
        ParamSpec("solve", "choice", "gradient", "how its weights are learned: gradient (with "
                  "the net), or ridge: in closed form over its inputs on every training "
                  "sequence, the penalty chosen by leave-one-out (a classifier's last layer "
                  "feeding a SoftmaxWithLoss)", choices=("gradient", "ridge")),
    ),
    infer=_ip_infer,
    caption=lambda p: "ridge, closed form" if p.get("solve") == "ridge" else "",
    count_params=_ip_count,
    flops=_ip_flops,
)

DROPOUT = LayerSpec(
    id="Dropout",
    category="Core",
    caffe_type="DROPOUT",
    summary="Zeroes random values while training, scales the rest",
    help=(
        "During training each value is set to zero with probability dropout_ratio and the "
        "others are scaled by 1 / (1 - dropout_ratio); at test time it passes values through."
    ),
    inputs=(X,),
    outputs=(Y,),
    params=(ParamSpec("dropout_ratio", "float", 0.5, "the probability of zeroing a value",
                      minimum=0.0, maximum=1.0, below_maximum=True),),
    infer=same_shape,
)


def _clip_check(params):
    if params["min"] >= params["max"]:
        raise ParamError("min", params["min"], f"below max ({params['max']:g})")


CLIP = LayerSpec(
    id="Clip",
    category="Core",
    caffe_type="CLIP",
    summary="Clamps every value into [min, max]",
    help="Clamps each value to the range [min, max], as MyCaffe's ClipLayer does.",
    inputs=(X,),
    outputs=(Y,),
    params=(
        ParamSpec("min", "float", -1.0, "the smallest value let through"),
        ParamSpec("max", "float", 1.0, "the largest value let through"),
    ),
    infer=same_shape,
    flops=numel_out,
    check_params=_clip_check,
)


def _scale_infer(ctx):
    x = ctx.need_float("x")
    s = ctx.input("scale")
    if s is not None:
        a = ctx.axis(ctx.params["axis"], x.rank)
        want = tuple(x.shape[a:a + s.rank])
        if s.rank + a > x.rank or not all(D.same(p, q) for p, q in zip(s.shape, want)):
            ctx.fail("scale", f"a scale of shape {D.shape_str(want)} (the input's dims from "
                     f"axis {ctx.params['axis']})", want=want)
    return [x.derive(x.shape, FLOAT, values=None)]


def _scale_count(ctx, outs):
    if ctx.input("scale") is not None:
        return 0
    x = ctx.input("x")
    a = ctx.axis(ctx.params["axis"], x.rank)
    n = ctx.params["num_axes"]
    k = D.numel(x.shape[a:] if n < 0 else x.shape[a:a + n])
    if not D.known(k):
        return None
    return k * (2 if ctx.params["bias_term"] else 1)


SCALE = LayerSpec(
    id="Scale",
    category="Building blocks",
    caffe_type="SCALE",
    summary="Multiplies by a learned or given scale, broadcast along 'axis'",
    help=(
        "Multiplies the input element-wise by a scale broadcast from 'axis' on: the second "
        "input when it is connected (an unrolled recurrent layer scales h by the continuation "
        "flags this way), else a learned scale over num_axes dims, plus an optional learned "
        "bias."
    ),
    inputs=(X, PortSpec("scale", "the scale to multiply by (optional)", FLOAT, optional=True)),
    outputs=(Y,),
    params=(
        axis_param(1, "the first axis the scale lines up with"),
        ParamSpec("num_axes", "int", 1, "dims the learned scale spans (-1: to the end)",
                  minimum=-1, maximum=8),
        ParamSpec("bias_term", "bool", False, "also add a learned bias"),
    ),
    infer=_scale_infer,
    count_params=_scale_count,
    flops=numel_out,
)


def _eltwise_infer(ctx):
    a, b = ctx.need_float("a"), ctx.need_float("b")
    if a.rank != b.rank or not all(D.same(p, q) for p, q in zip(a.shape, b.shape)):
        diff = [f"dim {i} is {p} vs {q}" for i, (p, q) in enumerate(zip(a.shape, b.shape))
                if not D.same(p, q)]
        detail = "; ".join(diff) if diff else f"rank {a.rank} vs {b.rank}"
        ctx.fail("b", f"the same shape as 'a' {D.shape_str(a.shape)}", detail, want=a.shape)
    return [a.derive(a.shape, FLOAT, values=None)]


ELTWISE = LayerSpec(
    id="Eltwise",
    category="Building blocks",
    caffe_type="ELTWISE",
    summary="Element-wise SUM, PROD or MAX of two tensors of the same shape",
    help="Combines two tensors of the same shape value by value: sum, product or maximum.",
    inputs=(PortSpec("a", "the first operand"), PortSpec("b", "the second operand")),
    outputs=(Y,),
    params=(ParamSpec("operation", "choice", "SUM", "how the values are combined",
                      choices=("SUM", "PROD", "MAX")),),
    infer=_eltwise_infer,
    flops=numel_out,
)

SPECS = (INNER_PRODUCT, DROPOUT, CLIP, SCALE, ELTWISE)
