"""ONNX nodes for the non-recurrent layers, written so that T and N stay dynamic.

Every converter gets the ``OnnxBuilder``, the layer's name, its built module, its effective
parameters, the names of its input values and their shapes (as the graph inferred them), and
returns the names of its output values; :data:`CONVERTERS` holds them by layer type (a building
block that belongs to a cell is written by its cell's exports). Shapes are never
baked in where they depend on the data: Caffe's Reshape and InnerProduct flattening go through
ONNX ``Reshape`` with 0 (copy this dim) and -1 (infer), or through ``Shape`` and ``Concat``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from designer.exchange.onnx_export.hydra import hydra
from designer.exchange.onnx_export.pooling import sequence_pool, valid_steps
from designer.exchange.onnx_export.rocket import mini_rocket
from designer.exchange.writers import Writers

INT64_MAX = np.iinfo(np.int64).max


@dataclass
class OnnxBuilder:
    """Collects nodes and initializers, and names values after the layers that make them."""

    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    _used: set = field(default_factory=set)

    def fresh(self, hint: str) -> str:
        name, i = hint, 1
        while name in self._used:
            i += 1
            name = f"{hint}_{i}"
        self._used.add(name)
        return name

    def reserve(self, names) -> None:
        """Keep ``names`` (the graph's inputs and outputs) from naming inner values."""
        self._reserved = set(names)
        self._used.update(names)

    def const(self, hint: str, value) -> str:
        array = np.asarray(value)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def ints(self, hint: str, values) -> str:
        return self.const(hint, np.asarray(values, dtype=np.int64))

    def op(self, op_type: str, inputs, hint: str, outputs: int = 1, **attrs):
        """Add a node; returns its output name (or a list when ``outputs`` > 1)."""
        names = [self.fresh(hint if outputs == 1 else f"{hint}_{i}") for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name=self.fresh(f"node:{hint}"), **attrs))
        return names[0] if outputs == 1 else names

    def shape_slice(self, x: str, start: int, end: int, hint: str) -> str:
        """``Shape(x)[start:end]`` as an int64 vector."""
        return self.op("Shape", [x], f"{hint}/shape", start=start, end=end)

    def add_input(self, name: str, elem_type: int, shape: list) -> str:
        if name in self._used and name not in getattr(self, "_reserved", ()):
            raise ValueError(f"the ONNX value name {name} is taken")
        self._used.add(name)
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def add_optional_input(self, name: str, shape: list, default: str) -> str:
        """A float graph input that may be left out (an ONNX optional): the value fed, or
        ``default`` (an initializer) when none is; returns the value to read."""
        self._used.add(name)
        inner = helper.make_tensor_type_proto(TensorProto.FLOAT, shape)
        self.inputs.append(helper.make_value_info(name, helper.make_optional_type_proto(inner)))
        fed, kept = self.fresh(f"{name}/fed"), self.fresh(f"{name}/default")
        branch = [None if isinstance(d, str) else d for d in shape]
        then = helper.make_graph(
            [helper.make_node("OptionalGetElement", [name], [fed],
                              name=self.fresh(f"node:{name}/fed"))], f"{name}_fed", [],
            [helper.make_tensor_value_info(fed, TensorProto.FLOAT, branch)])
        other = helper.make_graph(
            [helper.make_node("Identity", [default], [kept],
                              name=self.fresh(f"node:{name}/default"))], f"{name}_default", [],
            [helper.make_tensor_value_info(kept, TensorProto.FLOAT, branch)])
        has = self.op("OptionalHasElement", [name], f"{name}/given")
        return self.op("If", [has], f"{name}/value", then_branch=then, else_branch=other)

    def add_output(self, name: str, value: str) -> None:
        self._used.add(name)
        self.nodes.append(helper.make_node("Identity", [value], [name],
                                           name=self.fresh(f"node:{name}")))
        self.outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))


def tensor(module_param) -> np.ndarray:
    return module_param.detach().cpu().float().numpy()


# ---------------------------------------------------------------------------- layers --
def embed(b: OnnxBuilder, name, module, p, ins, shapes):
    w = b.const(f"{name}.weight", tensor(module.embedding.weight))
    y = b.op("Gather", [w, ins[0]], name, axis=0)
    if module.bias is not None:
        y = b.op("Add", [y, b.const(f"{name}.bias", tensor(module.bias))], f"{name}/bias")
    return [y]


def inner_product(b, name, module, p, ins, shapes):
    rank = len(shapes[0])
    a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
    x = ins[0]
    if a != rank - 1:  # flatten the dims from 'axis' on, keeping the ones before
        x = b.op("Reshape", [x, b.ints(f"{name}/flat_shape", [0] * a + [-1])], f"{name}/flat")
    w = b.const(f"{name}.weight", tensor(module.linear.weight).T.copy())
    y = b.op("MatMul", [x, w], name if module.linear.bias is None else f"{name}/matmul")
    if module.linear.bias is not None:
        y = b.op("Add", [y, b.const(f"{name}.bias", tensor(module.linear.bias))], name)
    return [y]


def reshape(b, name, module, p, ins, shapes):
    """Caffe's Reshape: dims [axis, axis + num_axes) become 'shape' (0 copies, -1 infers)."""
    rank, x = len(shapes[0]), ins[0]
    a = p["axis"] if p["axis"] >= 0 else p["axis"] + rank + 1
    end = rank if p["num_axes"] < 0 else a + p["num_axes"]
    pieces = []
    if a > 0:
        pieces.append(b.shape_slice(x, 0, a, name))
    for i, s in enumerate(p["shape"]):
        pieces.append(b.shape_slice(x, a + i, a + i + 1, name) if s == 0 else
                      b.ints(f"{name}/dim{i}", [s]))
    if end < rank:
        pieces.append(b.shape_slice(x, end, rank, name))
    target = b.op("Concat", pieces, f"{name}/target", axis=0)
    return [b.op("Reshape", [x, target], name)]


def identity(b, name, module, p, ins, shapes):
    return [b.op("Identity", [ins[0]], name)]


def relu(b, name, module, p, ins, shapes):
    s = p["negative_slope"]
    if s:
        return [b.op("LeakyRelu", [ins[0]], name, alpha=float(s))]
    return [b.op("Relu", [ins[0]], name)]


def unary(op_type):
    def convert(b, name, module, p, ins, shapes):
        return [b.op(op_type, [ins[0]], name)]
    return convert


def gelu(b, name, module, p, ins, shapes):
    """x * Φ(x) = 0.5 x (1 + erf(x / sqrt(2))): ONNX has a Gelu from opset 20 only."""
    x = ins[0]
    scaled = b.op("Mul", [x, b.const(f"{name}.rsqrt2", np.float32(1 / np.sqrt(2)))],
                  f"{name}/x_rsqrt2")
    cdf = b.op("Add", [b.op("Erf", [scaled], f"{name}/erf"),
                       b.const(f"{name}.one", np.float32(1.0))], f"{name}/one_plus_erf")
    half = b.op("Mul", [x, b.const(f"{name}.half", np.float32(0.5))], f"{name}/half_x")
    return [b.op("Mul", [half, cdf], name)]


def softmax(b, name, module, p, ins, shapes):
    return [b.op("Softmax", [ins[0]], name, axis=p["axis"])]


def clip(b, name, module, p, ins, shapes):
    lo = b.const(f"{name}.min", np.float32(p["min"]))
    hi = b.const(f"{name}.max", np.float32(p["max"]))
    return [b.op("Clip", [ins[0], lo, hi], name)]


def eltwise(b, name, module, p, ins, shapes):
    op = {"SUM": "Add", "PROD": "Mul", "MAX": "Max"}[p["operation"]]
    return [b.op(op, ins[:2], name)]


def concat(b, name, module, p, ins, shapes):
    return [b.op("Concat", ins[:2], name, axis=p["axis"])]


def slice_(b, name, module, p, ins, shapes):
    axis, point = b.ints(f"{name}/axis", [p["axis"]]), p["slice_point"]
    first = b.op("Slice", [ins[0], b.ints(f"{name}/zero", [0]), b.ints(f"{name}/point", [point]),
                           axis], f"{name}_a")
    second = b.op("Slice", [ins[0], b.ints(f"{name}/from", [point]),
                            b.ints(f"{name}/end", [INT64_MAX]), axis], f"{name}_b")
    return [first, second]


def difference(b, name, module, p, ins, shapes):
    """Difference: the input from step 1 on less the input up to its last step (two Slices
    and a Sub, time-major); with lengths, the differences from each sequence's last valid
    step on are zeroed (Where)."""
    x = ins[0]
    if p["batch_first"]:
        x = b.op("Transpose", [x], f"{name}/time_major", perm=[1, 0, 2])
    axis = b.ints(f"{name}/axis_t", [0])
    later = b.op("Slice", [x, b.ints(f"{name}/from1", [1]), b.ints(f"{name}/end", [INT64_MAX]),
                           axis], f"{name}/later")
    earlier = b.op("Slice", [x, b.ints(f"{name}/start", [0]), b.ints(f"{name}/stop", [-1]),
                             axis], f"{name}/earlier")
    last = ins[1] is None and not p["batch_first"]
    y = b.op("Sub", [later, earlier], name if last else f"{name}/diff")
    if ins[1] is not None:
        ends = b.op("Sub", [ins[1], b.ints(f"{name}/one_n", [1])], f"{name}/ends")
        y = b.op("Where", [valid_steps(b, name, y, ends), y,
                           b.const(f"{name}/zero_f", np.float32(0.0))],
                 f"{name}/zeroed" if p["batch_first"] else name)
    if p["batch_first"]:
        y = b.op("Transpose", [y], name, perm=[1, 0, 2])
    return [y]


def scale(b, name, module, p, ins, shapes):
    rank = len(shapes[0])
    a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
    if ins[1] is not None:  # multiply by the second input, broadcast from 'axis'
        trailing = rank - a - len(shapes[1])
        s = ins[1]
        if trailing > 0:
            s = b.op("Unsqueeze", [s, b.ints(f"{name}/axes", list(range(-trailing, 0)))],
                     f"{name}/scale")
        return [b.op("Mul", [ins[0], s], name)]
    w = tensor(module.weight)
    trailing = rank - a - w.ndim
    view = w.reshape(w.shape + (1,) * trailing)
    y = b.op("Mul", [ins[0], b.const(f"{name}.weight", view)], name if module.bias is None
             else f"{name}/mul")
    if module.bias is not None:
        bias = tensor(module.bias).reshape(view.shape)
        y = b.op("Add", [y, b.const(f"{name}.bias", bias)], name)
    return [y]


def sequence_last(b, name, module, p, ins, shapes):
    """Each sequence's step ``lengths - 1`` (clamped into the steps; the last step without
    lengths); for a bidirectional input the backward half is read at the first step."""
    x = ins[0]
    if p["batch_first"]:
        x = b.op("Transpose", [x], f"{name}/time_major", perm=[1, 0, 2])
    if ins[1] is None:
        last = b.op("Gather", [x, b.const(f"{name}/last_step", np.int64(-1))], f"{name}/last",
                    axis=0)
    else:
        one = b.ints(f"{name}/one", [1])
        steps = b.shape_slice(x, 0, 1, f"{name}/steps")
        at = b.op("Sub", [ins[1], one], f"{name}/at")
        at = b.op("Max", [b.op("Min", [at, b.op("Sub", [steps, one], f"{name}/end")],
                                f"{name}/at_max"), b.ints(f"{name}/zero", [0])], f"{name}/at_min")
        index = b.op("Unsqueeze", [at, b.ints(f"{name}/axes", [0, 2])], f"{name}/index")
        wide = b.op("Concat", [one, b.shape_slice(x, 1, 3, f"{name}/nh")], f"{name}/wide",
                    axis=0)
        index = b.op("Expand", [index, wide], f"{name}/indices")
        picked = b.op("GatherElements", [x, index], f"{name}/picked", axis=0)
        last = b.op("Squeeze", [picked, b.ints(f"{name}/step_axis", [0])], f"{name}/last")
    if not p["bidirectional"]:
        return [b.op("Identity", [last], name)]
    half = int(shapes[0][2]) // 2
    axis = b.ints(f"{name}/features", [1])
    forward = b.op("Slice", [last, b.ints(f"{name}/f0", [0]), b.ints(f"{name}/f1", [half]),
                             axis], f"{name}/forward")
    first = b.op("Gather", [x, b.const(f"{name}/first_step", np.int64(0))], f"{name}/first",
                 axis=0)
    backward = b.op("Slice", [first, b.ints(f"{name}/b0", [half]),
                              b.ints(f"{name}/b1", [INT64_MAX]), axis], f"{name}/backward")
    return [b.op("Concat", [forward, backward], name, axis=1)]


def conv1d(b, name, module, p, ins, shapes):
    """Conv1D: the (T, N, C) input (batch-first (N, T, C)) transposed to ONNX's (N, C, T), a
    Conv with a 1-D kernel and the layer's pads, and back; with lengths, the steps from each
    sequence's length on are zeroed before the Conv and in its output."""
    conv = module.conv
    x = b.op("Transpose", [ins[0]], f"{name}/nct", perm=[0, 2, 1] if p["batch_first"]
             else [1, 2, 0])
    valid = None
    if ins[1] is not None:  # (N, 1, T): step t < lengths[n]
        steps = b.op("Squeeze", [b.shape_slice(x, 2, 3, f"{name}/steps"),
                                 b.ints(f"{name}/axis0", [0])], f"{name}/t")
        at = b.op("Range", [b.const(f"{name}/zero", np.int64(0)), steps,
                            b.const(f"{name}/one", np.int64(1))], f"{name}/at")
        lengths = b.op("Unsqueeze", [ins[1], b.ints(f"{name}/axes", [1, 2])], f"{name}/ends")
        valid = b.op("Less", [at, lengths], f"{name}/valid")
        zero = b.const(f"{name}/zero_f", np.float32(0.0))
        x = b.op("Where", [valid, x, zero], f"{name}/masked")
    inputs = [x, b.const(f"{name}.weight", tensor(conv.weight))]
    if conv.bias is not None:
        inputs.append(b.const(f"{name}.bias", tensor(conv.bias)))
    y = b.op("Conv", inputs, f"{name}/conv", kernel_shape=list(conv.kernel_size),
             strides=list(conv.stride), dilations=list(conv.dilation), group=conv.groups,
             pads=[module.pads[0], module.pads[1]])
    if valid is not None:
        y = b.op("Where", [valid, y, zero], f"{name}/zeroed")
    return [b.op("Transpose", [y], name, perm=[0, 2, 1] if p["batch_first"] else [2, 0, 1])]


def batch_norm(b, name, module, p, ins, shapes):
    """BatchNormalization in evaluation mode (the running statistics; the lengths do not
    matter there), the channels moved to axis 1 and back by Transpose."""
    c = module.num_features
    w = tensor(module.weight) if module.weight is not None else np.ones(c, np.float32)
    bias = tensor(module.bias) if module.bias is not None else np.zeros(c, np.float32)
    rank = len(shapes[0])
    perm = [0, 1] if rank == 2 else [0, 2, 1] if p["batch_first"] else [1, 2, 0]
    back = [0, 1] if rank == 2 else [0, 2, 1] if p["batch_first"] else [2, 0, 1]
    x = ins[0] if rank == 2 else b.op("Transpose", [ins[0]], f"{name}/channels", perm=perm)
    y = b.op("BatchNormalization", [x, b.const(f"{name}.weight", w),
                                    b.const(f"{name}.bias", bias),
                                    b.const(f"{name}.running_mean", tensor(module.running_mean)),
                                    b.const(f"{name}.running_var", tensor(module.running_var))],
             name if rank == 2 else f"{name}/norm", epsilon=float(module.eps))
    return [y if rank == 2 else b.op("Transpose", [y], name, perm=back)]


def layer_norm(b, name, module, p, ins, shapes):
    """LayerNormalization over the last axis (opset 17)."""
    c = module.normalized_shape[0]
    w = tensor(module.weight) if module.weight is not None else np.ones(c, np.float32)
    bias = tensor(module.bias) if getattr(module, "bias", None) is not None else \
        np.zeros(c, np.float32)
    return [b.op("LayerNormalization", [ins[0], b.const(f"{name}.weight", w),
                                        b.const(f"{name}.bias", bias)], name, axis=-1,
                 epsilon=float(module.eps))]


# layer type -> converter(b, name, module, p, ins, shapes) -> its output values; a building
# block a cell owns registers its own from the cell's exports
CONVERTERS = Writers("ONNX form")
CONVERTERS.update({
    "BatchNorm": batch_norm, "LayerNorm": layer_norm,
    "Embed": embed, "InnerProduct": inner_product, "Reshape": reshape, "Dropout": identity,
    "ReLU": relu, "TanH": unary("Tanh"), "Sigmoid": unary("Sigmoid"), "GELU": gelu,
    "Softmax": softmax,
    "Clip": clip, "Eltwise": eltwise, "Concat": concat, "Slice": slice_, "Scale": scale,
    "SequenceLast": sequence_last, "Conv1D": conv1d,
    "SequencePool": sequence_pool, "MiniRocket": mini_rocket, "Hydra": hydra,
    "Difference": difference,
})
