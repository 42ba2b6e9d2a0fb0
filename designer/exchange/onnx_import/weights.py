"""A net's weights from ONNX initializers, by running the export backwards.

What :mod:`designer.exchange.onnx_export.export` writes for a layer's weights is each tensor of the
net's state dict moved about (transposed, its gates reordered, its levels and directions split,
its biases put side by side), never computed. So the export itself tells where every number of
an initializer comes from: the net is exported three times with tagged weights (every element
of tensor *j* holds ``OFFSET + j``; then the low and the high part of its own index), and each
element of an initializer reads as "element *i* of tensor *j*". Importing is then a scatter,
for every layer type and both engines alike, and the result is checked by exporting it again.

The initializers are matched by name: a layer's weights are ``<layer>.weight``,
``<layer>.W_l0`` ... as the export names them; a foreign model's importer (:mod:`walk`) writes
the arrays it reads under those names.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import numpy_helper

from designer.exchange.errors import ExchangeError

OFFSET = float(2 ** 20)  # tags sit above the constants an export writes (0, 1, 0.5...)
LOW = 2 ** 12            # an index is written as two tags: index % LOW and index // LOW


def _export(project, weights: dict, unrolled: bool, steps):
    from designer.exchange.onnx_export.export import build_model
    from designer.exchange.source import ModelSource
    source = ModelSource(project, Path(project.path or project.name), weights=weights)
    model, _ = build_model(source, unrolled, steps)
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _tagged(sd: dict, keys: list[str], how: str) -> dict:
    import torch
    out = dict(sd)
    for j, key in enumerate(keys):
        t = sd[key]
        index = torch.arange(t.numel(), dtype=torch.float64).reshape(t.shape)
        value = {"tensor": torch.full_like(index, j), "low": index % LOW,
                 "high": torch.div(index, LOW, rounding_mode="floor")}[how]
        out[key] = (value + OFFSET).to(t.dtype)
    return out


def state_dict(project, arrays: dict, unrolled: bool = False, steps=None,
               where: str = "the model") -> dict:
    """The ``Net`` state dict of ``project`` whose export has the initializers ``arrays``
    (name -> numpy array); raises ``ExchangeError`` when an array does not fit or a weight is
    not in them."""
    from designer.exchange.source import ModelSource
    need, held = project.graph.total_params(), sum(int(np.size(a)) for a in arrays.values())
    if need is not None and need > held:  # refused before a net of that size is built
        raise ExchangeError(f"{where}: the design needs {need:,} weights, but the model holds "
                            f"only {held:,} numbers")
    net = ModelSource(project, Path(project.path or project.name)).build_net()
    sd = net.state_dict()
    keys = [k for k, v in sd.items() if v.is_floating_point()]
    tags = {how: _export(project, _tagged(sd, keys, how), unrolled, steps)
            for how in ("tensor", "low", "high")}
    out = {k: v.detach().clone().numpy() for k, v in sd.items()}
    filled = {k: np.zeros(sd[k].shape, bool) for k in keys}
    for name, got in arrays.items():
        if name not in tags["tensor"]:
            continue
        want = tags["tensor"][name]
        if tuple(want.shape) != tuple(np.shape(got)):
            raise ExchangeError(f"{where}: '{name}' has the shape {tuple(np.shape(got))}, but "
                                f"the design needs {tuple(want.shape)}")
        j = want.reshape(-1).astype(np.float64) - OFFSET
        index = (tags["high"][name].reshape(-1).astype(np.float64) - OFFSET) * LOW + \
            tags["low"][name].reshape(-1).astype(np.float64) - OFFSET
        tagged = (j >= 0) & (j < len(keys)) & (j == np.round(j))
        values = np.asarray(got, np.float32).reshape(-1)
        for t in np.unique(j[tagged]).astype(int):
            key = keys[t]
            sel = tagged & (j == t)
            flat = out[key].reshape(-1)
            flat[index[sel].astype(np.int64)] = values[sel]
            out[key] = flat.reshape(out[key].shape)
            mark = filled[key].reshape(-1)
            mark[index[sel].astype(np.int64)] = True
            filled[key] = mark.reshape(filled[key].shape)
    missing = [k for k in keys if not filled[k].all() and not k.endswith("num_batches_tracked")]
    if missing:
        raise ExchangeError(f"{where}: the weights {missing[0].removeprefix('layers.')} are not "
                            "in the model's initializers")
    import torch
    result = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in out.items()}
    check = _export(project, result, unrolled, steps)
    for name, got in arrays.items():
        if name in check and not np.array_equal(check[name], np.asarray(got, np.float32)):
            raise ExchangeError(f"{where}: the weights '{name}' cannot be held by the design "
                                "(exported again, they differ from the model's)")
    return result
