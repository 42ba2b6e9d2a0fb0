"""A foreign ONNX graph walked node by node into a project's layers.

Every value becomes a :mod:`values` kind; the glue (``Shape``/``Constant`` chains, ``Transpose``,
``Squeeze``/``Unsqueeze``, ``Reshape``/``Flatten``, ``Cast``, ``Identity``, ``Dropout``) is
folded here, and the operators that are layers go to :mod:`layer_ops`. The weights are kept
under the names rnn-designer's own export gives them (``<layer>.weight``, ``<layer>.W_l0`` ...),
for :mod:`weights` to put into the net.
"""
from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from designer.graph.model import Graph

from designer.exchange.errors import ExchangeError
from designer.exchange.onnx_import import layer_ops
from designer.exchange.onnx_import.inputs import read_input
from designer.exchange.onnx_import.recurrent_ops import LastState
from designer.exchange.onnx_import.values import Const, Dims, Seq, Zeros, as_int_list, normal_axes


class Walker:
    """Builds ``graph`` and ``arrays`` from ``model``; ``batch_major``: read a data input's
    first axis as the sequences (N) rather than the steps (T); ``normalize``: the data layer
    z-scores the features it reads."""

    def __init__(self, model, path, data: str | None, project_dir, batch_major: bool = False,
                 normalize: bool = False):
        self.model, self.path, self.data = model, path, data
        self.graph = Graph(project_dir=project_dir)
        self.batch_major, self.normalize = batch_major, normalize
        self.values: dict = {}
        self.arrays: dict = {}
        self.notes: list[str] = []
        self.data_layer: str | None = None
        self.data_axes = ""
        self.fixed: dict = {}  # T and N where the input has fixed sizes (as dynamo writes)
        self.tokens = False
        self.bias_free: set = set()   # InnerProducts made without a bias that an Add may give
        self.uses: dict = {}
        self.counts: dict = {}
        for node in model.graph.node:
            for i in node.input:
                self.uses[i] = self.uses.get(i, 0) + 1

    # --------------------------------------------------------------------- helpers --
    def fail(self, node, why: str):
        raise ExchangeError(f"{self.path}: node '{node.name or node.output[0]}' "
                            f"({node.op_type}) {why}")

    def add(self, type_id: str, base: str, params: dict) -> str:
        if base not in ("data", "loss"):  # lstm1, lstm2 ... as the examples name them
            self.counts[base] = self.counts.get(base, 0) + 1
            base = f"{base}{self.counts[base]}"
        name = self.graph.unique_name(base)
        self.graph.add_layer(type_id, name, params)
        return name

    def connect(self, value: Seq, layer: str, port: str) -> None:
        self.graph.connect(value.src[0], value.src[1], layer, port)

    def value(self, node, i: int):
        name = node.input[i] if i < len(node.input) else ""
        if not name:
            return None
        if name not in self.values:
            self.fail(node, f"reads '{name}', which nothing before it makes")
        value = self.values[name]
        if isinstance(value, LastState):
            value = value.value(self, node)
        return value

    def const(self, node, i: int, what: str) -> np.ndarray:
        v = self.value(node, i)
        if not isinstance(v, Const):
            self.fail(node, f"needs {what} as a constant")
        return v.array

    def seq(self, node, i: int = 0) -> Seq:
        v = self.value(node, i)
        if not isinstance(v, Seq):
            self.fail(node, "computes on constants only in a way rnn-designer does not fold "
                      "into a layer")
        return v

    # ------------------------------------------------------------------------ walk --
    def walk(self) -> None:
        g = self.model.graph
        for init in g.initializer:
            self.values[init.name] = Const(numpy_helper.to_array(init))
        for inp in g.input:
            if inp.name not in self.values:
                self.graph_input(inp)
        for node in g.node:
            outs = self.node(node)
            for name, v in zip(node.output, outs if isinstance(outs, list) else [outs]):
                if name:
                    self.values[name] = v
        if self.data_layer is None:
            raise ExchangeError(f"{self.path}: the model has no input of sequences (int64 ids "
                                "or float features) for a data layer to feed")

    def graph_input(self, inp) -> None:
        read_input(self, inp)

    def node(self, node):
        op = node.op_type
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        handler = getattr(layer_ops, op.lower(), None)
        if handler is not None:
            return handler(self, node, attrs)
        return getattr(self, f"_{op.lower()}", self._unknown)(node, attrs)

    def _unknown(self, node, attrs):
        self.fail(node, "has no rnn-designer layer")

    # ------------------------------------------------------------------------ glue --
    def _constant(self, node, attrs):
        if "value" in attrs:
            return Const(numpy_helper.to_array(attrs["value"]))
        for key in ("value_float", "value_int"):
            if key in attrs:
                return Const(np.asarray(attrs[key]))
        for key in ("value_floats", "value_ints"):
            if key in attrs:
                return Const(np.asarray(list(attrs[key])))
        self.fail(node, "holds a constant of a kind rnn-designer does not read")

    def _identity(self, node, attrs):
        return self.value(node, 0)

    def _dropout(self, node, attrs):
        x = self.value(node, 0)
        return [x, Zeros()]

    def _cast(self, node, attrs):
        x = self.value(node, 0)
        if isinstance(x, Const):
            return Const(x.array.astype(helper.tensor_dtype_to_np_dtype(attrs["to"])))
        return x

    def _shape(self, node, attrs):
        x = self.value(node, 0)
        if isinstance(x, Const):
            items = list(x.array.shape)
        elif isinstance(x, Seq):
            items = [x.sizes.get(a, a) if a not in "1" else 1 for a in x.axes]
        else:
            self.fail(node, "takes the shape of a value rnn-designer cannot follow")
        start, end = attrs.get("start", 0), attrs.get("end", len(items))
        return Dims(items[start:end])

    def _size(self, node, attrs):
        return Dims(["?"])

    def _constantofshape(self, node, attrs):
        value = attrs.get("value")
        fill = 0.0 if value is None else float(numpy_helper.to_array(value).reshape(-1)[0])
        shape = as_int_list(self.value(node, 0))
        if shape is not None and all(isinstance(d, int) for d in shape):
            return Const(np.full(shape, fill, np.float32))
        if fill != 0.0:
            self.fail(node, "fills a tensor of a dynamic shape with a value other than zero")
        return Zeros()

    def _expand(self, node, attrs):
        x = self.value(node, 0)
        if isinstance(x, Zeros) or (isinstance(x, Const) and not x.array.any()):
            return Zeros()
        if isinstance(x, Const):
            shape = as_int_list(self.value(node, 1))
            if shape and all(isinstance(d, int) for d in shape):
                return Const(x.array * np.ones(shape, x.array.dtype))
            self.fail(node, "fills a tensor of a dynamic shape with a value other than zero")
        self.fail(node, "expands a value rnn-designer cannot follow")

    def _arith(self, node, fn):
        a, b = self.value(node, 0), self.value(node, 1)
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(fn(a.array, b.array))
        if isinstance(a, (Dims, Const)) and isinstance(b, (Dims, Const)):
            return Dims(["?"] * max(len(as_int_list(a)), len(as_int_list(b))))
        self.fail(node, "computes on a layer's output, which rnn-designer has no layer for")

    def _sub(self, node, attrs):
        return self._arith(node, np.subtract)

    def _div(self, node, attrs):
        return self._arith(node, lambda a, b: a // b if a.dtype.kind == "i" else a / b)

    def _equal(self, node, attrs):
        return self._arith(node, np.equal)

    def _where(self, node, attrs):
        c, a, b = (self.value(node, i) for i in range(3))
        if all(isinstance(v, Const) for v in (c, a, b)):
            return Const(np.where(c.array, a.array, b.array))
        if all(isinstance(v, (Const, Dims)) for v in (c, a, b)):
            return Dims(["?"] * len(as_int_list(c)))
        self.fail(node, "selects between layer outputs, which rnn-designer has no layer for")

    def _range(self, node, attrs):
        vals = [self.value(node, i) for i in range(3)]
        if all(isinstance(v, Const) for v in vals):
            return Const(np.arange(*[v.array.item() for v in vals]))
        self.fail(node, "makes a range of a dynamic length")

    def _unsqueeze(self, node, attrs):
        x = self.value(node, 0)
        axes = attrs.get("axes") or list(self.const(node, 1, "the axes"))
        if isinstance(x, Const):
            return Const(np.expand_dims(x.array, tuple(int(a) for a in axes)))
        if isinstance(x, Dims):
            return x
        if isinstance(x, Zeros):
            return x
        letters = list(x.axes)
        for a in sorted(int(a) % (len(letters) + len(axes)) for a in axes):
            letters.insert(a, "1")
        return x.like(x.src, "".join(letters))

    def _squeeze(self, node, attrs):
        x = self.value(node, 0)
        axes = attrs.get("axes")
        if axes is None and len(node.input) > 1:
            axes = list(self.const(node, 1, "the axes"))
        if isinstance(x, Const):
            return Const(np.squeeze(x.array, None if axes is None else tuple(int(a)
                                                                           for a in axes)))
        if isinstance(x, (Dims, Zeros)):
            return x
        if axes is None:
            axes = [i for i, a in enumerate(x.axes) if a == "1"]
        axes = {int(a) % len(x.axes) for a in axes}
        for a in axes:
            if x.axes[a] not in "1D" or (x.axes[a] == "D" and x.sizes.get("D") != 1):
                self.fail(node, f"squeezes the axis {x.axes[a]}, which is not of size 1")
        return x.like(x.src, "".join(a for i, a in enumerate(x.axes) if i not in axes))

    def _transpose(self, node, attrs):
        x = self.value(node, 0)
        perm = attrs.get("perm")
        if isinstance(x, Const):
            return Const(np.transpose(x.array, perm))
        if isinstance(x, Zeros):
            return x
        perm = perm or list(reversed(range(len(x.axes))))
        return x.like(x.src, "".join(x.axes[p] for p in perm))

    def _reshape(self, node, attrs):
        x, target = self.value(node, 0), as_int_list(self.value(node, 1))
        if isinstance(x, Const) and target and all(isinstance(d, int) for d in target):
            return Const(x.array.reshape(target))
        if isinstance(x, Zeros):
            return x
        if isinstance(x, Dims) and target in ([-1], [len(x.items)]):  # shape glue, flat
            return x
        if not isinstance(x, Seq) or target is None:
            self.fail(node, "reshapes a value rnn-designer cannot follow")
        return self.reshaped(node, x, target)

    def fixed_axis(self, d: int, x: Seq, i: int, merged, taken: list) -> str | None:
        """The axis a number in a Reshape's target stands for when the input's T or N is
        fixed at that number (dynamo writes them so): the one at that place in ``x``, else the
        only one it can be; ``None`` leaves it to the features."""
        can = [a for a, n in self.fixed.items() if n == d and a not in taken]
        if not can:
            return None
        if d in (x.features, merged):
            can.append("C")
        here = x.axes[i] if i < len(x.axes) else None
        if here in can:
            return here
        return can[0] if len(can) == 1 else None

    def reshaped(self, node, x: Seq, target: list) -> Seq:
        """``x`` reshaped to ``target`` (numbers, 0, -1 or letters): allowed when it only adds
        or drops axes of size 1, or merges a recurrent op's directions into its features."""
        have, merged = normal_axes(x.axes, x.sizes)
        out = []
        for i, d in enumerate(target):
            if d == 0:
                out.append(x.axes[i])
            elif d == 1:
                out.append("1")
            elif isinstance(d, str) and d in "TN":
                out.append(d)
            elif d == -1 or d == "?":
                out.append("?")
            elif isinstance(d, int) and (letter := self.fixed_axis(d, x, i, merged, out)):
                out.append(letter)
            elif d == x.features or d == merged:
                out.append("C")
            elif isinstance(d, str):
                out.append("?")
            else:
                self.fail(node, f"reshapes {x.axes} to {target}, which rnn-designer does not "
                          "fold into a layer")
        rest = [a for a in have if a not in out]
        if out.count("?") > 1 or (out.count("?") == 1 and len(rest) != 1):
            self.fail(node, f"reshapes {x.axes} to {target}, which rnn-designer does not "
                      "fold into a layer")
        out = [rest[0] if a == "?" else a for a in out]
        if "".join(a for a in out if a != "1") != have:
            self.fail(node, f"reshapes {x.axes} to {target}: it mixes the steps, the "
                      "sequences and the features, which no rnn-designer layer does")
        sizes = dict(x.sizes)
        if merged is not None:
            sizes["C"], sizes["D"] = merged, 1
        return Seq(x.src, "".join(out), sizes)

    def _flatten(self, node, attrs):
        x = self.value(node, 0)
        axis = attrs.get("axis", 1)
        if isinstance(x, Const):
            return Const(x.array.reshape(int(np.prod(x.array.shape[:axis])), -1))
        return self.reshaped(node, x, [0] * axis + [-1] if axis else [1, -1])

    def _concat(self, node, attrs):
        vals = [self.value(node, i) for i in range(len(node.input))]
        if all(isinstance(v, Const) for v in vals):
            return Const(np.concatenate([v.array for v in vals], attrs["axis"]))
        if all(isinstance(v, (Const, Dims)) for v in vals):
            return Dims([d for v in vals for d in as_int_list(v)])
        if all(isinstance(v, Zeros) for v in vals):
            return Zeros()
        return layer_ops.join(self, node, vals, attrs["axis"])

    def _gather_glue(self, node, attrs):
        x, index = self.value(node, 0), self.value(node, 1)
        axis = attrs.get("axis", 0)
        if isinstance(x, Const) and isinstance(index, Const):
            return Const(np.take(x.array, index.array, axis=axis))
        if isinstance(x, Dims) and isinstance(index, Const):
            picked = np.take(np.arange(len(x.items)), index.array)
            return Dims([x.items[int(i)] for i in np.asarray(picked).reshape(-1)])
        if isinstance(x, Zeros):
            return x
        return None

    def _slice_glue(self, node, attrs):
        x = self.value(node, 0)
        starts = attrs.get("starts") or as_int_list(self.value(node, 1))
        ends = attrs.get("ends") or as_int_list(self.value(node, 2))
        axes = attrs.get("axes") or (as_int_list(self.value(node, 3)) if len(node.input) > 3
                                     and node.input[3] else None)
        steps = as_int_list(self.value(node, 4)) if len(node.input) > 4 and node.input[4] \
            else None
        if isinstance(x, Zeros):
            return x
        if isinstance(x, (Const, Dims)) and all(isinstance(v, int) for v in starts + ends):
            array = x.array if isinstance(x, Const) else np.arange(len(x.items))
            cut = [slice(None)] * array.ndim
            for k, (s, e) in enumerate(zip(starts, ends)):
                a = axes[k] if axes else k
                cut[a] = slice(s, e, steps[k] if steps else 1)
            got = array[tuple(cut)]
            return Const(got) if isinstance(x, Const) else Dims([x.items[i] for i in got])
        return (starts, ends, axes, steps)

    def _optionalhaselement(self, node, attrs):
        self.fail(node, "reads an optional input, as only rnn-designer's own models do")
