"""The ONNX operators that become layers: one function per operator, ``op(walker, node,
attrs)`` returning the value(s) of its outputs. The recurrent ops are in :mod:`recurrent_ops`.
"""
from __future__ import annotations

import numpy as np

# looked up by name
from designer.exchange.onnx_import.recurrent_ops import gru, lstm, rnn  # noqa: F401
from designer.exchange.onnx_import.values import Const, Dims, Seq, Zeros, as_int_list

INT64_BIG = 2 ** 31  # an "until the end" of a Slice


def _last_step(w, node, x: Seq, axis: int, keep: bool) -> Seq:
    """``x`` at its last step along ``axis`` (which must be T): a SequenceLast layer."""
    if x.axes[axis] != "T":
        w.fail(node, f"picks one element of the axis {x.axes[axis]}; rnn-designer reads only "
               "the last step of a sequence this way")
    if "D" in x.axes and x.sizes.get("D", 1) > 1:
        w.fail(node, "picks the last step of both directions of a bidirectional layer, "
               "where the backward one ends at the first step")
    if "C" not in x.axes:
        w.fail(node, "picks the last step of a value that has no features")
    name = w.add("SequenceLast", "last", {})
    w.connect(x, name, "x")
    axes = x.axes.replace("T", "1" if keep else "")
    return x.like((name, "y"), axes)


def gather(w, node, attrs):
    glue = w._gather_glue(node, attrs)
    if glue is not None:
        return glue
    x, index = w.value(node, 0), w.value(node, 1)
    axis = attrs.get("axis", 0)
    if isinstance(x, Const) and isinstance(index, Seq):  # an embedding table
        if axis != 0 or x.array.ndim != 2:
            w.fail(node, "gathers from a table that is not (symbols, features)")
        rows, width = x.array.shape
        name = w.add("Embed", "embed", {"num_output": int(width), "input_dim": int(rows),
                                        "bias_term": False})
        w.connect(index, name, "x")
        w.arrays[f"{name}.weight"] = x.array.astype(np.float32)
        return Seq((name, "y"), index.axes + "C", {"C": int(width)})
    if isinstance(x, Seq) and isinstance(index, Const) and index.array.size == 1:
        i = int(index.array.reshape(-1)[0])
        axis %= len(x.axes)
        if x.axes[axis] in "1D" and i in (0, -1):
            return x.like(x.src, x.axes[:axis] + x.axes[axis + 1:])
        if i != -1:
            w.fail(node, f"picks step {i}; rnn-designer reads only the last step")
        return _last_step(w, node, x, axis, index.array.ndim > 0)
    w.fail(node, "gathers in a way rnn-designer has no layer for")


def slice(w, node, attrs):  # noqa: A001 - the operator's name
    glue = w._slice_glue(node, attrs)
    if not isinstance(glue, tuple):
        return glue
    starts, ends, axes, steps = glue
    x = w.seq(node)
    if len(starts) != 1 or (steps and steps[0] != 1) or not isinstance(starts[0], int):
        w.fail(node, "slices in a way rnn-designer has no layer for")
    axis = (axes[0] if axes else 0) % len(x.axes)
    if x.axes[axis] in "1D" and starts[0] in (0, -1):
        return x
    if starts[0] != -1 or not (isinstance(ends[0], int) and ends[0] >= INT64_BIG - 1 or
                               ends[0] in (0, -0)):
        w.fail(node, "slices steps other than the last one, which rnn-designer has no layer "
               "for")
    return _last_step(w, node, x, axis, True)


def _inner_product(w, node, x: Seq, weight: np.ndarray, bias) -> Seq:
    """``x @ weight`` (weight: (in, out)) over the features, the last ONNX axis."""
    if not x.axes or x.axes[-1] != "C":
        w.fail(node, f"multiplies over the axis {x.axes[-1:] or '?'}, not the features")
    if x.features and weight.shape[0] != x.features:
        w.fail(node, f"multiplies {x.features} features by a ({weight.shape[0]}, "
               f"{weight.shape[1]}) matrix")
    out = int(weight.shape[1])
    name = w.add("InnerProduct", "ip", {"num_output": out, "axis": x.blob_axis("C"),
                                        "bias_term": bias is not None})
    w.connect(x, name, "x")
    w.arrays[f"{name}.weight"] = weight.astype(np.float32)
    if bias is None:
        w.bias_free.add(name)
    else:
        w.arrays[f"{name}.bias"] = np.broadcast_to(bias, (out,)).astype(np.float32)
    return Seq((name, "y"), x.axes, {"C": out})


def matmul(w, node, attrs):
    a, b = w.value(node, 0), w.value(node, 1)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.array @ b.array)
    if not isinstance(a, Seq) or not isinstance(b, Const) or b.array.ndim != 2:
        w.fail(node, "multiplies two layer outputs, which rnn-designer has no layer for")
    return _inner_product(w, node, a, b.array, None)


def gemm(w, node, attrs):
    x = w.seq(node)
    weight = w.const(node, 1, "the weights")
    bias = w.value(node, 2)
    if attrs.get("transA", 0):
        w.fail(node, "transposes its input (transA), which rnn-designer does not fold")
    if attrs.get("transB", 0):
        weight = weight.T
    weight = weight * attrs.get("alpha", 1.0)
    if bias is not None:
        if not isinstance(bias, Const):
            w.fail(node, "adds a bias that is not a constant")
        bias = bias.array * attrs.get("beta", 1.0)
    return _inner_product(w, node, x, weight, bias)


def add(w, node, attrs):
    a, b = w.value(node, 0), w.value(node, 1)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.array + b.array)
    if isinstance(a, (Dims, Const)) and isinstance(b, (Dims, Const)):
        return Dims(["?"] * len(as_int_list(a)))
    if isinstance(b, Seq) and isinstance(a, Const):
        a, b = b, a
    if isinstance(a, Seq) and isinstance(b, Const):
        layer = a.src[0]
        if layer in w.bias_free and w.uses.get(node.input[0] if isinstance(
                w.values.get(node.input[0]), Seq) else node.input[1], 0) == 1 and \
                b.array.size == a.features:
            w.bias_free.discard(layer)
            w.graph.set_param(layer, "bias_term", True)
            w.arrays[f"{layer}.bias"] = b.array.reshape(-1).astype(np.float32)
            return a
        if not b.array.any():
            return a
        w.fail(node, "adds a constant to a layer output other than a matrix product's")
    if isinstance(a, Seq) and isinstance(b, Seq):
        if a.axes != b.axes:
            w.fail(node, f"adds values of axes {a.axes} and {b.axes}")
        name = w.add("Eltwise", "sum", {"operation": "SUM"})
        w.connect(a, name, "a")
        w.connect(b, name, "b")
        return a.like((name, "y"))
    w.fail(node, "adds values rnn-designer cannot follow")


def join(w, node, vals, axis: int):
    """Concat of two layer outputs along the features."""
    if len(vals) != 2 or not all(isinstance(v, Seq) for v in vals):
        w.fail(node, "joins other than two layer outputs")
    a, b = vals
    if a.axes != b.axes or a.axes[axis] != "C":
        w.fail(node, "joins along an axis other than the features")
    name = w.add("Concat", "concat", {"axis": a.blob_axis("C")})
    w.connect(a, name, "a")
    w.connect(b, name, "b")
    return Seq((name, "y"), a.axes, {**a.sizes, "C": a.features + b.features})


def _unary(type_id: str, base: str):
    def convert(w, node, attrs):
        x = w.seq(node)
        name = w.add(type_id, base, {})
        w.connect(x, name, "x")
        return x.like((name, "y"))
    return convert


relu = _unary("ReLU", "relu")
tanh = _unary("TanH", "tanh")
sigmoid = _unary("Sigmoid", "sigmoid")
gelu = _unary("GELU", "gelu")


def softmax(w, node, attrs):
    x = w.seq(node)
    axis = attrs.get("axis", -1) % len(x.axes)
    if x.axes[axis] != "C":
        w.fail(node, "normalises over an axis other than the features")
    name = w.add("Softmax", "prob", {"axis": -1})
    w.connect(x, name, "x")
    return x.like((name, "y"))


def logsoftmax(w, node, attrs):
    x = w.seq(node)
    if node.output[0] not in {o.name for o in w.model.graph.output}:
        w.fail(node, "is not the model's output; rnn-designer's LogSoftmax is the one "
               "inside its SoftmaxWithLoss")
    w.notes.append(f"the LogSoftmax '{node.name or node.output[0]}' at the output is the one "
                   "inside SoftmaxWithLoss: the net outputs the scores before it")
    w.log_softmax = getattr(w, "log_softmax", set()) | {node.output[0]}
    return x


def _pool(method: str):
    def convert(w, node, attrs):
        x = w.seq(node)
        axes = attrs.get("axes")
        if axes is None and len(node.input) > 1:
            axes = list(w.const(node, 1, "the axes"))
        axes = [int(a) % len(x.axes) for a in (axes or [])]
        if len(axes) != 1 or x.axes[axes[0]] != "T":
            w.fail(node, "reduces over an axis other than the steps")
        name = w.add("SequencePool", "pool", {"method": method})
        w.connect(x, name, "x")
        keep = attrs.get("keepdims", 1)
        return x.like((name, "y"), x.axes.replace("T", "1" if keep else ""))
    return convert


reducemean = _pool("mean")
reducemax = _pool("max")


def batchnormalization(w, node, attrs):
    x = w.seq(node)
    if len(x.axes) < 2 or x.axes[1] != "C":
        w.fail(node, "normalises an axis other than the features")
    name = w.add("BatchNorm", "bn", {"eps": float(attrs.get("epsilon", 1e-5)),
                                     "momentum": round(1 - float(attrs.get("momentum", 0.9)),
                                                       6)})
    w.connect(x, name, "x")
    for i, key in enumerate(("weight", "bias", "running_mean", "running_var")):
        w.arrays[f"{name}.{key}"] = w.const(node, i + 1, key).astype(np.float32)
    return [x.like((name, "y"))] + [Zeros()] * (len(node.output) - 1)


def layernormalization(w, node, attrs):
    x = w.seq(node)
    if attrs.get("axis", -1) % len(x.axes) != len(x.axes) - 1 or x.axes[-1] != "C":
        w.fail(node, "normalises over more than the features")
    name = w.add("LayerNorm", "ln", {"eps": float(attrs.get("epsilon", 1e-5))})
    w.connect(x, name, "x")
    scale = w.const(node, 1, "the scale")
    bias = w.value(node, 2)
    w.arrays[f"{name}.weight"] = scale.astype(np.float32)
    w.arrays[f"{name}.bias"] = (bias.array if isinstance(bias, Const) else
                                np.zeros_like(scale)).astype(np.float32)
    return [x.like((name, "y"))] + [Zeros()] * (len(node.output) - 1)


def conv(w, node, attrs):
    x = w.seq(node)
    weight = w.const(node, 1, "the weights")
    if weight.ndim != 3:
        w.fail(node, f"is a {weight.ndim - 2}-D convolution; rnn-designer's Conv1D is 1-D")
    if x.axes.replace("1", "") not in ("NCT",):
        w.fail(node, f"convolves a value of axes {x.axes} where its layout needs NCT "
                     "(sequences, features, steps)")
    k = int(weight.shape[2])
    d = int((attrs.get("dilations") or [1])[0])
    s = int((attrs.get("strides") or [1])[0])
    pads = list(attrs.get("pads") or [0, 0])
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    reach = (k - 1) * d
    if auto in ("SAME_UPPER", "SAME_LOWER") or (s == 1 and pads == [reach // 2, reach - reach
                                                                  // 2]):
        padding = "same"
    elif auto == "VALID" or pads == [0, 0]:
        padding = "valid" if reach else "same"
    elif pads == [reach, 0]:
        padding = "causal"
    else:
        w.fail(node, f"pads {pads}, which is neither same, causal nor valid padding")
    bias = w.value(node, 2)
    name = w.add("Conv1D", "conv", {"num_output": int(weight.shape[0]), "kernel_size": k,
                                    "stride": s, "dilation": d, "padding": padding,
                                    "groups": int(attrs.get("group", 1)),
                                    "bias_term": bias is not None})
    w.connect(x, name, "x")
    w.arrays[f"{name}.weight"] = weight.astype(np.float32)
    if bias is not None:
        w.arrays[f"{name}.bias"] = bias.array.astype(np.float32)
    return Seq((name, "y"), x.axes, {"C": int(weight.shape[0])})


def _arith(fn):
    def convert(w, node, attrs):
        return w._arith(node, fn)
    return convert


mul = _arith(np.multiply)
max = _arith(np.maximum)  # noqa: A001 - the operator's name
min = _arith(np.minimum)  # noqa: A001 - the operator's name
less = _arith(np.less)
greater = _arith(np.greater)
