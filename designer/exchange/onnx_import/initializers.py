"""The numbers a model holds, checked before anything is made of them.

Every initializer, and every constant a node holds, must hold as many numbers as its shape
declares (a file that claims more than it holds is refused before its claim is allocated),
and no initializer a NaN (a net computes nothing with it). Each refusal is one sentence
naming the file and the tensor.
"""
from __future__ import annotations

import math

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from designer.exchange.errors import ExchangeError

PACKED = {getattr(TensorProto, name) for name in ("INT4", "UINT4", "FLOAT4E2M1")
          if hasattr(TensorProto, name)}   # two numbers a byte
COMPLEX = {TensorProto.COMPLEX64, TensorProto.COMPLEX128}  # two floats a number


def check_initializers(model, path) -> None:
    """Raise ``ExchangeError`` for the first tensor of ``model`` (read from ``path``) that does
    not hold what it declares, or an initializer that holds NaN."""
    for tensor in model.graph.initializer:
        _check_count(tensor, f"the initializer '{tensor.name}'", path)
        _check_numbers(tensor, path)
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.type == AttributeProto.TENSOR:
                _check_count(attr.t, f"the constant of node '{node.name or node.output[0]}'",
                             path)


def _check_count(tensor, what: str, path) -> None:
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise ExchangeError(f"{path}: {what} is declared {dims}, a negative size")
    try:
        dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
    except (KeyError, ValueError):
        raise ExchangeError(f"{path}: {what} holds numbers of a type ONNX does not define "
                            f"({tensor.data_type})") from None
    declared = math.prod(dims)
    per_unit = 2 if tensor.data_type in PACKED else 1  # numbers a stored unit holds
    if tensor.HasField("raw_data"):
        size = 1 if per_unit == 2 else dtype.itemsize
        if len(tensor.raw_data) % size:
            raise ExchangeError(f"{path}: {what} holds {len(tensor.raw_data):,} bytes, which "
                                f"are not whole numbers of {size} bytes")
        units = len(tensor.raw_data) // size
    else:
        units = len(getattr(tensor, helper.tensor_dtype_to_field(tensor.data_type)))
        units //= 2 if tensor.data_type in COMPLEX else 1
    if units != -(-declared // per_unit):
        raise ExchangeError(f"{path}: {what} is declared {dims}, {declared:,} numbers, but "
                            f"holds {units * per_unit:,}")


def _check_numbers(tensor, path) -> None:
    if tensor.data_type not in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
                                TensorProto.BFLOAT16):
        return
    values = np.asarray(numpy_helper.to_array(tensor), np.float64 if tensor.data_type ==
                        TensorProto.DOUBLE else np.float32)
    bad = int(np.isnan(values).sum())
    if bad:
        raise ExchangeError(f"{path}: the weights '{tensor.name}' hold NaN (not a number) in "
                            f"{bad:,} of their {values.size:,} values")
