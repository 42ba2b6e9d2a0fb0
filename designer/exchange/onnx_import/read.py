"""Reading an ``.onnx`` file: the model, its external data, and the operators it uses.

Each way a file can fail is one sentence naming it: missing, a folder, not ONNX (another kind
of file, or cut short), weights in an external-data file that is not beside it (or outside its
folder), tensors that do not hold what they declare (:mod:`initializers`), and operators
rnn-designer has no layer for (all of them at once, each with its node and neighbours).
"""
from __future__ import annotations

import os
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError
from onnx.external_data_helper import uses_external_data

from designer.exchange.errors import ExchangeError
from designer.exchange.onnx_import.initializers import check_initializers

# what a layer is made of, and the glue around it that folds away
SUPPORTED = frozenset((
    "LSTM", "GRU", "RNN", "Gemm", "MatMul", "Add", "Gather", "Conv", "BatchNormalization",
    "LayerNormalization", "ReduceMean", "ReduceMax", "Concat", "Relu", "Tanh", "Sigmoid",
    "Gelu",
    "Softmax", "LogSoftmax", "Dropout", "Identity", "Transpose", "Squeeze", "Unsqueeze",
    "Reshape", "Flatten", "Slice", "Shape", "Constant", "ConstantOfShape", "Cast", "Expand",
    "Sub", "Mul", "Div", "Equal", "Where", "Range", "Split", "If", "OptionalHasElement",
    "OptionalGetElement", "Less", "Greater", "Max", "Min", "Size",
))


def read_model(path: str | os.PathLike) -> onnx.ModelProto:
    """The model in ``path`` with its external data loaded; ``ExchangeError`` otherwise."""
    path = Path(path)
    if not path.exists():
        raise ExchangeError(f"{path} does not exist")
    if path.is_dir():
        raise ExchangeError(f"{path} is a folder, not an ONNX model")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except (DecodeError, ValueError, RuntimeError):
        raise ExchangeError(f"{path} is not an ONNX model (it is damaged or cut short, or "
                            "another kind of file)") from None
    except OSError as e:
        raise ExchangeError(f"{path} cannot be read ({e.strerror or e})") from None
    if not model.graph.node or not model.opset_import:
        raise ExchangeError(f"{path} is not an ONNX model (it holds no graph of operators)")
    for tensor in model.graph.initializer:
        if not uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        where = path.parent / info.get("location", "")
        inside = os.path.normpath(info.get("location", ""))
        if os.path.isabs(inside) or inside.split(os.sep)[0] == os.pardir:
            raise ExchangeError(f"{path}: the weights '{tensor.name}' are in the external-data "
                                f"file {info.get('location')}, which is outside the model's "
                                "folder")
        if not where.is_file():
            raise ExchangeError(f"{path}: the weights '{tensor.name}' are in the external-data "
                                f"file {info.get('location')}, which is not beside it")
    try:
        onnx.load_external_data_for_model(model, str(path.parent))
    except (OSError, ValueError, DecodeError, onnx.checker.ValidationError) as e:
        raise ExchangeError(f"{path}: its external data cannot be read ({e})") from None
    check_initializers(model, path)
    return model


def check_operators(model: onnx.ModelProto, path) -> None:
    """Refuse every node whose operator rnn-designer has no layer or glue for, all at once."""
    made_by = {out: node for node in model.graph.node for out in node.output}
    bad = []
    for node in model.graph.node:
        if node.op_type in SUPPORTED and node.domain in ("", "ai.onnx"):
            continue
        before = [_label(made_by[i]) for i in node.input if i in made_by] or \
            [i for i in node.input if i]
        after = [_label(n) for n in model.graph.node if set(n.input) & set(node.output)]
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        bad.append(f"{op} at node '{node.name or node.output[0]}' (after "
                   f"{', '.join(before[:3]) or 'the inputs'}; before "
                   f"{', '.join(after[:3]) or 'the outputs'})")
    if bad:
        raise ExchangeError(f"{path}: rnn-designer has no layer for {len(bad)} "
                            f"operator{'s' if len(bad) > 1 else ''}: " + "; ".join(bad), 2)


def _label(node) -> str:
    return f"'{node.name or node.output[0]}'"
