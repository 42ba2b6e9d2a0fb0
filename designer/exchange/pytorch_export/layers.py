"""The writer of each layer type in an exported ``model.py``: :data:`LAYERS`.

A writer gets the ``pytorch_code`` writer, the layer's name, its variable, the layer, its built
module, its effective parameters, the expression of its first input and the comment naming it;
it adds the layer's attribute, weights and helpers and returns the expression of its call. The
plain layers' writers are here and in :mod:`pytorch_sequence`, :mod:`pytorch_rocket` and
:mod:`pytorch_hydra`; a recurrent layer's is its cell's
(``designer/cells/<cell>/exports/pytorch.py``). A layer computed by an expression alone (an
activation, Eltwise, Reshape...) gets its comment on the line above.
"""
from __future__ import annotations

from designer.exchange.pytorch_export.hydra import hydra
from designer.exchange.pytorch_export.rocket import mini_rocket
from designer.exchange.pytorch_export.sequence import conv1d, norm, sequence_pool
from designer.exchange.writers import Writers

# layer type -> writer(writer, name, var, layer, module, p, x, comment) -> its call's expression
LAYERS = Writers("PyTorch form")


def _embed(w, name, var, layer, module, p, x, comment) -> str:
    k, m = module.embedding.num_embeddings, module.embedding.embedding_dim
    w.init += [f"{comment}: ids in [0, {k}) -> vectors of {m}"
               + (", plus a learned bias" if module.bias is not None else ""),
               f"self.{var} = nn.Embedding({k}, {m})"]
    w.weights[f"{var}.weight"] = module.embedding.weight
    expr = f"self.{var}({x})"
    if module.bias is not None:
        w.init.append(f"self.{var}_bias = nn.Parameter(torch.zeros({m}))")
        w.weights[f"{var}_bias"] = module.bias
        expr += f" + self.{var}_bias"
    return expr


def _inner_product(w, name, var, layer, module, p, x, comment) -> str:
    lin = module.linear
    rank = len(w.g.info(name).inputs[0].shape)
    a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
    w.init += [f"{comment}: {lin.in_features} -> {lin.out_features}, flattening the "
               f"dims from axis {p['axis']} on",
               f"self.{var} = nn.Linear({lin.in_features}, {lin.out_features}"
               f"{'' if lin.bias is not None else ', bias=False'})"]
    w.weights[f"{var}.weight"] = lin.weight
    if lin.bias is not None:
        w.weights[f"{var}.bias"] = lin.bias
    return f"self.{var}({x})" if a == rank - 1 else f"self.{var}({x}.flatten({a}))"


def _dropout(w, name, var, layer, module, p, x, comment) -> str:
    w.init += [f"{comment}: zeroes values with probability {p['dropout_ratio']:g} "
               "while training",
               f"self.{var} = nn.Dropout({p['dropout_ratio']!r})"]
    return f"self.{var}({x})"


def _expression(make, commented: bool = True):
    """The writer of a layer computed by the expression ``make(w, name, var, p, x)`` gives,
    its comment on the line above unless it makes several outputs (``commented``)."""
    def write(w, name, var, layer, module, p, x, comment) -> str:
        expr = make(w, name, var, p, x)
        if commented:
            w.body.append(comment)
        return expr
    return write


def _relu(w, name, var, p, x) -> str:
    s = p["negative_slope"]
    return f"torch.nn.functional.leaky_relu({x}, {s!r})" if s else f"torch.relu({x})"


def _torch(function: str):
    return lambda w, name, var, p, x: f"torch.{function}({x})"


def _gelu(w, name, var, p, x) -> str:
    return f"nn.functional.gelu({x})"


def _softmax(w, name, var, p, x) -> str:
    return f"torch.softmax({x}, {p['axis']})"


def _clip(w, name, var, p, x) -> str:
    return f"{x}.clamp({p['min']!r}, {p['max']!r})"


def _reshape(w, name, var, p, x) -> str:
    w.helpers.add("caffe_reshape")
    return f"caffe_reshape({x}, {p['shape']!r}, {p['axis']}, {p['num_axes']})"


def _eltwise(w, name, var, p, x) -> str:
    y = w._in(name, 1)
    return {"SUM": f"{x} + {y}", "PROD": f"{x} * {y}",
            "MAX": f"torch.maximum({x}, {y})"}[p["operation"]]


def _concat(w, name, var, p, x) -> str:
    return f"torch.cat([{x}, {w._in(name, 1)}], {p['axis']})"


def _difference(w, name, var, p, x) -> str:
    w.helpers.add("difference")
    return f"difference({x}, {w._in(name, 1)}, batch_first={p['batch_first']})"


def _slice(w, name, var, p, x) -> str:
    a, point = p["axis"], p["slice_point"]
    return f"{x}.narrow({a}, 0, {point}), {x}.narrow({a}, {point}, {x}.shape[{a}] - {point})"


def _scale(w, name, var, p, x) -> str:
    info = w.g.info(name)
    rank = len(info.inputs[0].shape)
    a = p["axis"] + rank if p["axis"] < 0 else p["axis"]
    if info.inputs[1] is not None:
        k = rank - a - len(info.inputs[1].shape)
        return f"{x} * {w._in(name, 1)}[(...,) + (None,) * {k}]"
    module = w.net.layers[name]
    shape = tuple(module.weight.shape)
    view = shape + (1,) * (rank - a - len(shape))
    w.init += [f"# {name} (Scale): a learned scale over dims {shape}",
               f"self.{var}_weight = nn.Parameter(torch.ones({shape!r}))"]
    w.weights[f"{var}_weight"] = module.weight
    expr = f"{x} * self.{var}_weight.view({view!r})"
    if module.bias is not None:
        w.init.append(f"self.{var}_bias = nn.Parameter(torch.zeros({shape!r}))")
        w.weights[f"{var}_bias"] = module.bias
        expr += f" + self.{var}_bias.view({view!r})"
    return expr


def _sequence_last(w, name, var, p, x) -> str:
    w.helpers.add("sequence_last")
    return (f"sequence_last({x}, {w._in(name, 1)}, batch_first={p['batch_first']}, "
            f"bidirectional={p['bidirectional']})")


LAYERS.update({
    "Embed": _embed, "InnerProduct": _inner_product, "Dropout": _dropout,
    "Conv1D": conv1d, "BatchNorm": norm, "LayerNorm": norm, "MiniRocket": mini_rocket,
    "Hydra": hydra,
    "ReLU": _expression(_relu), "TanH": _expression(_torch("tanh")),
    "Sigmoid": _expression(_torch("sigmoid")), "GELU": _expression(_gelu),
    "Softmax": _expression(_softmax),
    "Clip": _expression(_clip), "Reshape": _expression(_reshape),
    "Eltwise": _expression(_eltwise), "Concat": _expression(_concat),
    "Difference": _expression(_difference),
    "Slice": _expression(_slice, commented=False), "Scale": _expression(_scale),
    "SequencePool": _expression(sequence_pool), "SequenceLast": _expression(_sequence_last),
})
