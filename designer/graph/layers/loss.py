"""Loss and metric layers: SoftmaxWithLoss and Accuracy for classes; EuclideanLoss and L1Loss
for real values."""
from __future__ import annotations

from designer.graph import dims as D
from designer.graph.errors import RangeError, ShapeError
from designer.graph.spec import ANY, FLOAT, INDEX, LayerSpec, ParamSpec, PortSpec, TensorInfo
from designer.graph.layers.common import axis_param

INPUTS = (
    PortSpec("logits", "unnormalised class scores, classes along 'axis'"),
    PortSpec("label", "the true class of every position", INDEX),
)


def _check(ctx):
    x = ctx.need_float("logits")
    a = ctx.axis(ctx.params["axis"], x.rank)
    lab = ctx.input("label")
    want = tuple(x.shape[:a]) + tuple(x.shape[a + 1:])
    if lab.dtype != INDEX:
        ctx.fail("label", "class ids", "labels come from a data layer's 'label'")
    if x.batch is not None and a == x.batch:
        raise ShapeError(ctx.layer, (
            f"{ctx.layer} takes axis {ctx.params['axis']} of {x} as the classes, but it is the "
            "batch (N): set axis to -1 (the last axis holds the classes)"), port="logits")
    same = lab.rank == len(want) and all(D.same(p, q) for p, q in zip(lab.shape, want))
    # Caffe only asks for one label per position: (T, N) labels fit (T*N, V) logits, in order
    flattened = lab.rank != len(want) and D.same(D.numel(lab.shape), D.numel(want))
    if not (same or flattened):
        ctx.fail("label", f"labels of shape {D.shape_str(want)} (the logits without the class "
                 f"axis {ctx.params['axis']}), or as many in another number of dims", want=want)
    classes, values = x.shape[a], lab.values
    if values is not None and D.known(classes) and D.known(values) and classes < values:
        src = ctx.sources[ctx.spec.input_index("logits")]
        raise RangeError(ctx.layer, (
            f"{ctx.layer} gets {classes} class scores from {src}, but the labels take {values} "
            f"values (0 to {values - 1}): a label above {classes - 1} has no score"),
            "logits", classes, values, "classes")
    return x, a


def _loss_infer(ctx):
    _check(ctx)
    return [TensorInfo((), FLOAT)]


def _loss_flops(ctx, outs):
    return D.mul(5, D.numel(ctx.input("logits").shape))


SOFTMAX_WITH_LOSS = LayerSpec(
    id="SoftmaxWithLoss",
    category="Loss",
    caffe_type="SOFTMAXWITH_LOSS",
    summary="Cross-entropy of the softmax against the labels (the training loss)",
    help=(
        "Softmax over the class axis, then the mean negative log-probability of the true "
        "class, in nats. Positions whose label equals ignore_label do not count."
    ),
    inputs=INPUTS,
    outputs=(PortSpec("loss", "the mean loss, a scalar"),),
    params=(
        axis_param(-1, "the class axis (-1: the last)"),
        ParamSpec("ignore_label", "int", -1, "a label value that does not count (-1: none)",
                  minimum=-1, maximum=1 << 30),
        ParamSpec("loss_weight", "float", 1.0, "the weight of this loss in the total",
                  minimum=0.0, maximum=1e6),
    ),
    infer=_loss_infer,
    flops=_loss_flops,
)


def _acc_infer(ctx):
    x, a = _check(ctx)
    k = ctx.params["top_k"]
    classes = x.shape[a]
    if D.known(classes) and k > classes:
        ctx.fail(None, f"has top_k {k}, more than the {classes} classes")
    return [TensorInfo((), FLOAT)]


ACCURACY = LayerSpec(
    id="Accuracy",
    category="Loss",
    caffe_type="ACCURACY",
    summary="The share of positions whose true class is in the top k scores",
    help="Counts how often the true class is among the top_k scores; reported, not trained.",
    inputs=INPUTS,
    outputs=(PortSpec("accuracy", "the accuracy, a scalar in [0, 1]"),),
    params=(axis_param(-1, "the class axis (-1: the last)"),
            ParamSpec("top_k", "int", 1, "how many of the best scores count", minimum=1,
                      maximum=1000, shaping=True)),
    infer=_acc_infer,
)



# ------------------------------------------------------------------------- regression --
REGRESSION_INPUTS = (
    PortSpec("pred", "the predicted values"),
    PortSpec("label", "the true values: as many per sample as 'pred' holds", ANY),
)


def _per_sample(t: TensorInfo):
    """(batch size, values per sample) of a tensor, or (None, all its values) when its batch
    axis is not known."""
    if t.batch is None:
        return None, D.numel(t.shape)
    n = t.shape[t.batch]
    rest = tuple(d for i, d in enumerate(t.shape) if i != t.batch)
    return n, D.numel(rest)


def _regression_infer(ctx):
    pred, lab = ctx.need_float("pred"), ctx.input("label")
    if lab.dtype == INDEX:
        ctx.fail("label", "real-valued targets",
                 "class ids are scored by SoftmaxWithLoss, not a regression loss")
    (n_p, k_p), (n_l, k_l) = _per_sample(pred), _per_sample(lab)
    if n_p is not None and n_l is not None:
        if not D.same(n_p, n_l):
            ctx.fail("pred", f"the batch of the label ({n_l})", f"its batch is {n_p}")
        if not D.same(k_p, k_l):
            ctx.fail("pred", f"{k_l} values per sample (as many as the label {lab})",
                     want=(n_p, k_l) if pred.batch == 0 and pred.rank == 2 else None)
    elif not D.same(D.numel(pred.shape), D.numel(lab.shape)):
        ctx.fail("pred", f"as many values as the label {lab}", want=tuple(lab.shape))
    return [TensorInfo((), FLOAT)]


def _regression_flops(per: int):
    return lambda ctx, outs: D.mul(per, D.numel(ctx.input("pred").shape))


LOSS_WEIGHT = ParamSpec("loss_weight", "float", 1.0, "the weight of this loss in the total",
                        minimum=0.0, maximum=1e6)

EUCLIDEAN_LOSS = LayerSpec(
    id="EuclideanLoss",
    category="Loss",
    caffe_type="EUCLIDEAN_LOSS",
    summary="Sum of squared differences / 2N (Caffe's regression loss)",
    help=(
        "Caffe's EuclideanLoss: the squared differences between 'pred' and 'label', summed "
        "and divided by twice the batch size N. The two may differ in shape as long as each "
        "sample holds as many values (Caffe's rule), so (N, 8) predictions score (N, 8, 1) "
        "labels. Training figures report the RMSE in the target's own units."
    ),
    inputs=REGRESSION_INPUTS,
    outputs=(PortSpec("loss", "the loss, a scalar"),),
    params=(LOSS_WEIGHT,),
    infer=_regression_infer,
    flops=_regression_flops(3),
)

L1_LOSS = LayerSpec(
    id="L1Loss",
    category="Loss",
    caffe_type="L1_LOSS",
    summary="Sum of absolute differences / N: robust to outliers",
    help=(
        "The absolute differences between 'pred' and 'label', summed and divided by the "
        "batch size N (the counterpart of EuclideanLoss, without its 1/2). An outlier pulls "
        "on it linearly rather than quadratically. The shapes follow EuclideanLoss's rule."
    ),
    inputs=REGRESSION_INPUTS,
    outputs=(PortSpec("loss", "the loss, a scalar"),),
    params=(LOSS_WEIGHT,),
    infer=_regression_infer,
    flops=_regression_flops(2),
)

SPECS = (SOFTMAX_WITH_LOSS, ACCURACY, EUCLIDEAN_LOSS, L1_LOSS)
