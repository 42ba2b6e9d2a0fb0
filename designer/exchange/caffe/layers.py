"""Caffe and MyCaffe layer types, and how each becomes rnn-designer layers on import.

One converter per Caffe type (matched without regard to case or underscores, so ``InnerProduct``,
``INNER_PRODUCT`` and ``innerproduct`` are one type); the recurrent layers' come from their cells.
A converter reads the layer's parameter block with Caffe's defaults, adds the equivalent layer(s)
through the importer's builder, links the bottoms and registers the tops. What the file says that
rnn-designer computes differently is written into the import notes; what it cannot compute at all
is refused with one sentence.
"""
from __future__ import annotations

import math

from designer.graph import registry

from designer.exchange.errors import ExchangeError
from designer.exchange.writers import Writers
from designer.exchange.caffe.textformat import Message

ENGINES = {"CUDNN": "CUDNN", "CAFFE": "CAFFE", "DEFAULT": "CAFFE"}  # MyCaffe: DEFAULT is CAFFE
# Caffe type (its key) -> converter(b, layer); the cells add their recurrent layers' readers
# (designer/cells/<cell>/exports/caffe.py) and name them in RECURRENT, the types whose first
# bottom is a sequence and second the continuation flags
CONVERTERS = Writers("converter", "Caffe type")
RECURRENT: set[str] = set()


def key(caffe_type: str) -> str:
    """``LstmSimple``, ``LSTM_SIMPLE`` and ``lstmsimple`` are one type."""
    return caffe_type.lower().replace("_", "")


def param(layer, block: str) -> Message:
    return layer.msg.message(block) or Message()


def num(msg: Message, name: str, default, kind=float):
    value = msg.get(name, default)
    if kind is bool:
        return str(value).lower() in ("true", "t", "1")
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ExchangeError(f"{name} is {value!r}, not a number") from None


def weight_filler(b, layer, msg: Message, units: int = 0) -> str | None:
    """Our filler name for a Caffe ``weight_filler`` block (``None``: keep our default);
    ``units`` is the layer's outputs H, which set the bounds of our uniform filler."""
    f = msg.message("weight_filler")
    if f is None:
        return None
    kind = str(f.get("type", "constant")).lower()
    if kind == "uniform":
        lo, hi = num(f, "min", 0.0), num(f, "max", 1.0)
        bound = 1.0 / math.sqrt(units) if units > 0 else None
        if bound is None or not (math.isclose(hi, bound, rel_tol=1e-5) and
                                 math.isclose(-lo, bound, rel_tol=1e-5)):
            b.filler_note(layer.name, f"uniform [{lo:g}, {hi:g}]", "U(-1/sqrt(H), 1/sqrt(H))")
        return "uniform"
    if kind == "gaussian":
        std = num(f, "std", 1.0)
        if std != 0.01:
            b.filler_note(layer.name, f"gaussian std {std:g}", "std 0.01")
        return "gaussian"
    if kind in ("xavier", "msra"):
        norm = str(f.get("variance_norm", "FAN_IN"))
        if kind == "msra" or norm != "AVERAGE":
            b.filler_note(layer.name, f"{kind} ({norm.lower()})", "Glorot uniform (fan average)")
        return "xavier"
    if kind == "orthogonal":
        return "orthogonal"
    if kind == "constant" and num(f, "value", 0.0) == 0.0:
        return "zero"
    b.filler_note(layer.name, kind, "xavier")
    return "xavier"


def bias_filler(b, layer, msg: Message) -> float | None:
    f = msg.message("bias_filler")
    if f is None:
        return None
    kind = str(f.get("type", "constant")).lower()
    if kind != "constant":
        b.filler_note(layer.name, f"bias {kind}", "a constant bias")
        return num(f, "mean", 0.0) if kind == "gaussian" else 0.0
    return num(f, "value", 0.0)


def fillers(b, layer, msg, params: dict) -> dict:
    units = params.get("num_output", 0)  # our uniform filler's bound is 1/sqrt(outputs)
    w, bias = weight_filler(b, layer, msg, units), bias_filler(b, layer, msg)
    if w is not None:
        params["weight_filler"] = w
    if bias is not None:
        params["bias_filler"] = bias
    return params


def _simple(type_id: str, ports_in=("x",), ports_out=("y",), params=None):
    """A converter for a layer whose bottoms and tops map one to one onto ports."""
    def convert(b, layer):
        made = b.add(layer, type_id, params(b, layer) if params else {})
        b.wire(layer, made, ports_in, ports_out)
    return convert


# ----------------------------------------------------------------------------- core --
def _embed(b, layer):
    p = param(layer, "embed_param")
    params = {"num_output": num(p, "num_output", 0, int),
              "input_dim": num(p, "input_dim", 0, int),
              "bias_term": num(p, "bias_term", True, bool)}
    made = b.add(layer, "Embed", fillers(b, layer, p, params))
    b.wire(layer, made, ("x",), ("y",))
    b.embeds.append(made)


def _inner_product(b, layer):
    p = param(layer, "inner_product_param")
    if num(p, "transpose", False, bool):
        b.note(f"{layer.name}: the file stores its weights transposed; rnn-designer keeps them "
               "as (outputs, inputs), computing the same function")
    params = {"num_output": num(p, "num_output", 0, int), "axis": num(p, "axis", 1, int),
              "bias_term": num(p, "bias_term", True, bool)}
    made = b.add(layer, "InnerProduct", fillers(b, layer, p, params))
    b.wire(layer, made, ("x",), ("y",))
    b.classifiers.append(made)


def _reshape(b, layer):
    p = param(layer, "reshape_param")
    shape = p.message("shape") or Message()
    return {"shape": [int(d) for d in shape.all("dim")], "axis": num(p, "axis", 0, int),
            "num_axes": num(p, "num_axes", -1, int)}


def _dropout(b, layer):
    return {"dropout_ratio": num(param(layer, "dropout_param"), "dropout_ratio", 0.5)}


def _softmax_axis(b, layer):
    return {"axis": num(param(layer, "softmax_param"), "axis", 1, int)}


def _loss(b, layer):
    loss = param(layer, "loss_param")
    params = {"axis": num(param(layer, "softmax_param"), "axis", 1, int)}
    if loss.has("ignore_label"):
        params["ignore_label"] = num(loss, "ignore_label", -1, int)
    weight = layer.msg.get("loss_weight", 1.0)
    if float(weight) != 1.0:
        params["loss_weight"] = float(weight)
    norm = str(loss.get("normalization", "VALID"))
    if norm in ("BATCH_SIZE", "NONE") or str(loss.get("normalize", "true")).lower() == "false":
        b.note(f"{layer.name}: normalization {norm} becomes the mean over the counted "
               "positions (VALID), which only scales the loss")
    made = b.add(layer, "SoftmaxWithLoss", params)
    b.wire(layer, made, ("logits", "label"), ("loss",))
    b.losses.append(made)


def _regression_loss(type_id: str):
    def convert(b, layer):
        params = {}
        weight = layer.msg.get("loss_weight", 1.0)
        if float(weight) != 1.0:
            params["loss_weight"] = float(weight)
        if type_id == "L1Loss":
            b.note(f"{layer.name}: MyCaffe's {layer.type} becomes an L1Loss (the sum of "
                   "absolute differences / N), which may scale the loss otherwise")
        made = b.add(layer, type_id, params)
        b.wire(layer, made, ("pred", "label"), ("loss",))
        b.losses.append(made)
    return convert


def _sequence_last(b, layer):
    p = param(layer, "sequence_last_param")
    return {"batch_first": num(p, "batch_first", False, bool),
            "bidirectional": num(p, "bidirectional", False, bool)}


def _conv1d(b, layer):
    """Caffe's convolution_param over the steps: 'pad' on both sides is same padding when it
    is half the filter's reach, valid when 0 (a causal padding lives in our #@ line only)."""
    p = param(layer, "convolution_param")

    def first(name: str, default: int) -> int:  # Caffe repeats kernel_size... per spatial axis
        values = p.all(name)
        return int(values[0]) if values else default
    params = {"num_output": num(p, "num_output", 0, int), "kernel_size": first("kernel_size", 1),
              "stride": first("stride", 1), "dilation": first("dilation", 1),
              "groups": num(p, "group", 1, int), "bias_term": num(p, "bias_term", True, bool)}
    reach, pad = (params["kernel_size"] - 1) * params["dilation"], first("pad", 0)
    if 2 * pad == reach:
        params["padding"] = "same"
    elif pad == 0:
        params["padding"] = "valid"
    else:
        raise ExchangeError(f"pads {pad} steps on each side; rnn-designer's Conv1D pads "
                            f"{reach // 2} (same, when the filter's reach {reach} is even), "
                            "0 (valid) or only before (causal)")
    return fillers(b, layer, p, params)


def _batch_norm(b, layer):
    """Caffe's BatchNorm (a learned scale and shift only with MyCaffe's scale_bias)."""
    p = param(layer, "batch_norm_param")
    if num(p, "use_global_stats", False, bool):
        b.note(f"{layer.name}: use_global_stats becomes rnn-designer's own rule: the batch's "
               "statistics while training, the running ones in evaluation")
    return {"momentum": round(1.0 - num(p, "moving_average_fraction", 0.999), 12),
            "eps": num(p, "eps", 1e-5), "affine": num(p, "scale_bias", False, bool)}


def _layer_norm(b, layer):
    """MyCaffe's LayerNorm: no learned scale and shift."""
    return {"eps": max(num(param(layer, "layer_norm_param"), "epsilon", 1e-10), 1e-12),
            "affine": False}


def _sequence_pool(b, layer):
    p = param(layer, "sequence_pool_param")
    method = str(p.get("method", "ATTENTION")).lower()
    if method not in ("mean", "max", "attention"):
        raise ExchangeError(f"method {method.upper()} is not one of MEAN, MAX or ATTENTION")
    return {"method": method, "attention_units": num(p, "attention_units", 0, int),
            "batch_first": num(p, "batch_first", False, bool)}


def _fixed_features(kind: str, block: str):
    """The converter of rnn-designer's own layer of fixed features ``kind`` (MiniRocket,
    Hydra; no Caffe has one), reading its parameters from ``block`` with the layer's
    defaults; the fitted buffers come with a run's weights, never with a prototxt."""
    def params(b, layer):
        p = param(layer, block)
        return {s.name: num(p, s.name, s.default, bool if s.kind == "bool" else int)
                for s in registry.get(kind).params}
    return _simple(kind, ("x", "lengths"), ("y",), params)


def _difference(b, layer):
    """rnn-designer's own Difference (no Caffe has one)."""
    return {"batch_first": num(param(layer, "difference_param"), "batch_first", False, bool)}


def _accuracy(b, layer):
    p = param(layer, "accuracy_param")
    if p.has("ignore_label"):
        b.note(f"{layer.name}: ignore_label is not supported by the Accuracy layer; every "
               "position counts")
    return {"top_k": num(p, "top_k", 1, int), "axis": num(p, "axis", 1, int)}


def _relu(b, layer):
    slope = num(param(layer, "relu_param"), "negative_slope", 0.0)
    return {"negative_slope": slope} if slope else {}


def _clip(b, layer):
    p = param(layer, "clip_param")
    return {"min": num(p, "min", -1.0), "max": num(p, "max", 1.0)}


def _eltwise(b, layer):
    p = param(layer, "eltwise_param")
    if len(layer.bottoms) != 2:
        raise ExchangeError(f"layer '{layer.name}' (Eltwise) has {len(layer.bottoms)} bottoms; "
                            "rnn-designer's Eltwise combines two")
    if any(float(c) != 1.0 for c in p.all("coeff")):
        raise ExchangeError(f"layer '{layer.name}' (Eltwise) weights its inputs (coeff), which "
                            "rnn-designer's Eltwise does not support")
    return {"operation": str(p.get("operation", "SUM"))}


def _scale(b, layer):
    p = param(layer, "scale_param")
    return {"axis": num(p, "axis", 1, int), "num_axes": num(p, "num_axes", 1, int),
            "bias_term": num(p, "bias_term", False, bool)}


def _slice(b, layer):
    p = param(layer, "slice_param")
    points = [int(v) for v in p.all("slice_point")]
    if len(points) != 1 or len(layer.tops) != 2:
        raise ExchangeError(f"layer '{layer.name}' (Slice) cuts into {len(layer.tops)} parts; "
                            "rnn-designer's Slice cuts in two")
    axis = num(p, "axis", num(p, "slice_dim", 1, int), int)
    return {"axis": axis, "slice_point": points[0]}


def _concat(b, layer):
    if len(layer.bottoms) != 2:
        raise ExchangeError(f"layer '{layer.name}' (Concat) joins {len(layer.bottoms)} inputs; "
                            "rnn-designer's Concat joins two")
    p = param(layer, "concat_param")
    return {"axis": num(p, "axis", num(p, "concat_dim", 1, int), int)}


def _silence(b, layer):
    """Silence only swallows blobs Caffe would otherwise print: nothing to build."""


CONVERTERS.update({
    "embed": _embed,
    "innerproduct": _inner_product,
    "reshape": _simple("Reshape", params=_reshape),
    "dropout": _simple("Dropout", params=_dropout),
    "softmax": _simple("Softmax", params=_softmax_axis),
    "softmaxwithloss": _loss,
    "euclideanloss": _regression_loss("EuclideanLoss"),
    "maeloss": _regression_loss("L1Loss"),
    "l1loss": _regression_loss("L1Loss"),
    "batchnorm": _simple("BatchNorm", ("x", "lengths"), ("y",), _batch_norm),
    "layernorm": _simple("LayerNorm", params=_layer_norm),
    "sequencelast": _simple("SequenceLast", ("x", "lengths"), ("y",), _sequence_last),
    "sequencepool": _simple("SequencePool", ("x", "lengths"), ("y",), _sequence_pool),
    "minirocket": _fixed_features("MiniRocket", "mini_rocket_param"),
    "hydra": _fixed_features("Hydra", "hydra_param"),
    "difference": _simple("Difference", ("x", "lengths"), ("y",), _difference),
    "convolution1d": _simple("Conv1D", ("x", "lengths"), ("y",), _conv1d),
    "accuracy": _simple("Accuracy", ("logits", "label"), ("accuracy",), _accuracy),
    "relu": _simple("ReLU", params=_relu),
    "tanh": _simple("TanH"),
    "sigmoid": _simple("Sigmoid"),
    "gelu": _simple("GELU"),
    "clip": _simple("Clip", params=_clip),
    "eltwise": _simple("Eltwise", ("a", "b"), ("y",), _eltwise),
    "scale": _simple("Scale", ("x", "scale"), ("y",), _scale),
    "slice": _simple("Slice", ("x",), ("a", "b"), _slice),
    "concat": _simple("Concat", ("a", "b"), ("y",), _concat),
    "silence": _silence,
})

DATA_TYPES = ("input",)
