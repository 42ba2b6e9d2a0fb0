"""A recurrent layer read step by step: the gates, cell and hidden state of every time step.

The layer runs as its unrolled net (:func:`designer.engines.expansion.expand.expand_params`) through
the node-by-node reference executor (:func:`designer.engines.unrolled.run_reference`), and the
per-step blobs are read by name (``h_t``, ``c_t``, ``gate_input_t``...): what each layer type's
blobs mean is its cell's reading (:mod:`designer.engines.measure.readings`).

A layer on an engine that holds other tensors (cuDNN's) is read the same way after its
weights are converted (:func:`designer.engines.net.convert.convert_layer`); the unrolled net with
the converted weights computes the same function as the fused call
(``designer.engines.measure.parity``), so the numbers are the layer's own. The traced output is the
executor's, kept in the autograd graph, so the gradient of a loss reaches every step's ``h_t``
blob through the recurrence.
"""
from __future__ import annotations

import torch

from designer.graph import registry

from designer.engines.net.convert import convert_layer
from designer.engines.expansion.expand import Expansion, expand_params
from designer.engines.measure.readings import LayerSteps, Level, reading_of
from designer.engines.unrolled import run_reference


def caffe_weights(module) -> dict:
    """The layer's weights in the unrolled (Caffe) layout: ``W_xc_l0``, ``b_c_l0``, ...; its
    own parameters where it holds those tensors, converted (in the autograd graph) where it
    holds others."""
    if not hasattr(module, "kind") or registry.cell(module.kind) is None:
        raise TypeError(f"{type(module).__name__} is not a recurrent layer of any engine")
    return convert_layer(module.kind, dict(module.named_parameters()), module.levels,
                         module.engine_name, "CAFFE")


def describe(module) -> dict:
    """Kind, engine, sizes and settings of a recurrent module of any engine: ``params`` holds
    the layer's parameters it was built with (``num_output``, ``num_layers`` and those its
    reading names), ``clip`` the unrolled net's gradient clip."""
    kind = module.kind
    return {"kind": kind, "engine": module.engine_name, "input_size": module.input_size,
            "hidden": module.hidden, "levels": module.levels,
            "batch_first": module.batch_first, "clip": getattr(module, "clip", 0.0),
            "params": {"num_output": module.hidden, "num_layers": module.levels,
                       **reading_of(kind).params(module)}}


def expansion_of(info: dict, steps: int, batch: int) -> Expansion:
    """The unrolled net of a module described by :func:`describe` (no dropout: inspection
    runs the net as it predicts)."""
    return expand_params(info["kind"], {**info["params"], "dropout_ratio": 0.0}, steps, batch,
                         info["input_size"])


def trace_recurrent(module, x: torch.Tensor, cont: torch.Tensor | None = None,
                    state: tuple | None = None) -> tuple[torch.Tensor, tuple, LayerSteps]:
    """Run a recurrent layer through its per-step nodes and read every step.

    Parameters
    ----------
    module
        A recurrent layer's module, on any engine.
    x, cont, state
        As the layer's ``forward`` takes them (``batch_first`` honoured).

    Returns
    -------
    y, new_state, steps
        The layer's output and final state (as ``forward`` returns them, computed by the
        per-step nodes) and the `LayerSteps`.
    """
    info = describe(module)
    kind, levels, params = info["kind"], info["levels"], info["params"]
    if info["batch_first"]:
        x = x.transpose(0, 1)
        cont = None if cont is None else cont.transpose(0, 1)
    t_, n = x.shape[0], x.shape[1]
    cont = x.new_ones(t_, n) if cont is None else cont.to(x.dtype)
    cell = registry.cell(kind)
    if state is None:
        state = tuple(x.new_zeros(levels, n, size)
                      for size in cell.sizes({**registry.get(kind).defaults(), **params}))
    names = cell.states
    exp = expansion_of(info, t_, n)
    blobs = {"x": x, "cont": cont}
    for k in range(levels):
        p = f"L{k}/" if levels > 1 else ""
        for j, x0 in enumerate(names):
            blobs[f"{p}{x0}_0"] = state[j][k:k + 1]
    run_reference(exp, caffe_weights(module), blobs, training=False, clip=info["clip"])
    read = reading_of(kind).read
    traced = [read(Level(blobs, f"L{k}/" if levels > 1 else "", k, t_, info["hidden"], params))
              for k in range(levels)]
    y = blobs[exp.outputs[0]]
    finals = exp.outputs[1:]
    per = len(names)
    new_state = tuple(torch.cat([blobs[finals[per * k + j]] for k in range(levels)], 0)
                      for j in range(per))
    if info["batch_first"]:
        y = y.transpose(0, 1)
    return y, new_state, LayerSteps(kind, info["engine"], info["hidden"], traced)
