"""SequencePool as ONNX nodes: ReduceMean/ReduceMax over the steps, or attention scores
(MatMul), a Softmax over the steps and the weighted sum; with ``lengths``, a mask built from
them (``Range`` over the steps, ``Less`` than each length) leaves the padded steps out, as
``designer.engines.net.pooling`` does."""
from __future__ import annotations

import numpy as np


def _tensor(param) -> np.ndarray:
    return param.detach().cpu().float().numpy()


def valid_steps(b, name: str, x: str, lengths: str) -> str:
    """(T, N, 1) booleans: step t of sequence n is one of its valid steps."""
    steps = b.op("Squeeze", [b.shape_slice(x, 0, 1, f"{name}/steps")], f"{name}/T")
    at = b.op("Range", [b.const(f"{name}/zero", np.int64(0)), steps,
                        b.const(f"{name}/one", np.int64(1))], f"{name}/at")
    at = b.op("Unsqueeze", [at, b.ints(f"{name}/axis1", [1])], f"{name}/at_t")
    n = b.op("Unsqueeze", [lengths, b.ints(f"{name}/axis0", [0])], f"{name}/lengths_n")
    valid = b.op("Less", [at, n], f"{name}/valid_tn")
    return b.op("Unsqueeze", [valid, b.ints(f"{name}/axis2", [2])], f"{name}/valid")


def _score(b, name: str, score, x: str) -> str:
    """The attention scores (T, N, 1) of the steps ``x`` (T, N, H): the module's Linear
    layers as MatMul (+ Add), with tanh between them."""
    y = x
    for i, layer in enumerate(score):
        if hasattr(layer, "weight"):
            w = b.const(f"{name}.score.{i}.weight", _tensor(layer.weight).T.copy())
            y = b.op("MatMul", [y, w], f"{name}/score{i}")
            if layer.bias is not None:
                y = b.op("Add", [y, b.const(f"{name}.score.{i}.bias", _tensor(layer.bias))],
                         f"{name}/score{i}_bias")
        else:
            y = b.op("Tanh", [y], f"{name}/score{i}_tanh")
    return y


def sequence_pool(b, name, module, p, ins, shapes):
    """Mean, max or attention over each sequence's valid steps (all steps without lengths);
    a sequence with no valid step gives zeros."""
    x, lengths, method = ins[0], ins[1], p["method"]
    if p["batch_first"]:
        x = b.op("Transpose", [x], f"{name}/time_major", perm=[1, 0, 2])
    if lengths is None:
        if method == "mean":
            return [b.op("ReduceMean", [x], name, axes=[0], keepdims=0)]
        if method == "max":
            return [b.op("ReduceMax", [x], name, axes=[0], keepdims=0)]
        weights = b.op("Softmax", [_score(b, name, module.score, x)], f"{name}/weights",
                       axis=0)
        return [b.op("ReduceSum", [b.op("Mul", [weights, x], f"{name}/weighted"),
                                   b.ints(f"{name}/steps_axis", [0])], name, keepdims=0)]
    valid = valid_steps(b, name, x, lengths)
    steps_axis = b.ints(f"{name}/steps_axis", [0])
    if method == "max":
        low = b.const(f"{name}/minus_inf", np.float32(-np.inf))
        top = b.op("ReduceMax", [b.op("Where", [valid, x, low], f"{name}/masked")],
                   f"{name}/top", axes=[0], keepdims=0)
        alive = b.op("Unsqueeze", [b.op("Greater", [lengths, b.const(f"{name}/none",
                                                                     np.int64(0))],
                                        f"{name}/alive_n"), b.ints(f"{name}/axis_h", [1])],
                     f"{name}/alive")
        return [b.op("Where", [alive, top, b.const(f"{name}/zero_f", np.float32(0))], name)]
    x = b.op("Where", [valid, x, b.const(f"{name}/zero_x", np.float32(0))], f"{name}/masked")
    if method == "mean":
        total = b.op("ReduceSum", [x, steps_axis], f"{name}/sum", keepdims=0)
        count = b.op("Max", [lengths, b.const(f"{name}/at_least", np.int64(1))],
                     f"{name}/count_n")
        count = b.op("Cast", [count], f"{name}/count_f", to=1)  # FLOAT
        count = b.op("Unsqueeze", [count, b.ints(f"{name}/axis_h", [1])], f"{name}/count")
        return [b.op("Div", [total, count], name)]
    lowest = b.const(f"{name}/lowest", np.float32(np.finfo(np.float32).min))
    scores = b.op("Where", [valid, _score(b, name, module.score, x), lowest],
                  f"{name}/scores")
    weights = b.op("Softmax", [scores], f"{name}/weights", axis=0)
    return [b.op("ReduceSum", [b.op("Mul", [weights, x], f"{name}/weighted"), steps_axis],
                 name, keepdims=0)]
