"""A trained net as an ONNX model, runnable step by step in ONNX Runtime.

Inputs: ``tokens`` (int64, ``(T, N)``) for a text or audio net, or ``data`` (float, ``(T, N, F)``)
for one that reads real values; ``lengths`` (int64, ``(N)``: each sequence's valid steps) when a
layer reads the lengths of padded sequences; and, per recurrent layer, one input per state its
cell carries, named as the cell names them (``CellSpec.states``): ``<layer>.h0``, ``<layer>.c0``
..., each ``(num_layers * directions, N, values)`` (``values``: ``CellSpec.sizes``, H for most).
A state input is an ONNX optional tensor: left out, it defaults to zeros (an initializer the
graph does not list as an input, so ONNX Runtime loads the model without warnings).

Outputs: ``logits`` (what a SoftmaxWithLoss reads), ``prediction`` (what a regression loss,
EuclideanLoss or L1Loss, reads) or, without a loss layer, the net's last layer under its own
name; and each recurrent layer's final states, ``<layer>.hT`` ..., so generation feeds one step
at a time and carries the state from ``hT`` to ``h0``. T and N are dynamic (``--unrolled`` fixes
T: the net is unrolled over that many steps). ``metadata_props`` holds what a user needs to read
the data the way the net was trained and to read its output (see :mod:`onnx_metadata`).

The loss and accuracy layers, and the labels they read, are left out: they only matter while
training. So is dropout, which is the identity at inference.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from onnx import TensorProto, checker, helper, shape_inference

from designer import __version__
from designer.graph.atomic import atomic_write_bytes

from designer.exchange.onnx_export import recurrent as onnx_recurrent
from designer.exchange.errors import ExchangeError
from designer.exchange.onnx_export.metadata import metadata
from designer.exchange.onnx_export.ops import CONVERTERS, OnnxBuilder
from designer.exchange.source import ModelSource

OPSET = 17
IR_VERSION = 8
TRAINING_ONLY = ("SoftmaxWithLoss", "Accuracy", "EuclideanLoss", "L1Loss")
REGRESSION_LOSSES = ("EuclideanLoss", "L1Loss")


def export_onnx(source: ModelSource, out: str | os.PathLike, unrolled: bool = False,
                steps: int | None = None) -> list[str]:
    """Write the model to ``out``; returns notes for the user."""
    model, notes = build_model(source, unrolled, steps)
    atomic_write_bytes(Path(out), model.SerializeToString())
    return notes


def build_model(source: ModelSource, unrolled: bool = False, steps: int | None = None):
    """(onnx ModelProto, notes) for the source's net and weights."""
    net = source.build_net()
    graph = source.project.graph
    notes = list(source.notes)
    wanted, output_names = _outputs(net, graph)
    layers = net.needed(tuple(w[0] for w in wanted))
    source.check_fitted(net, layers)
    b = OnnxBuilder()
    b.reserve(output_names + [f"{n}.{s}" for n in layers if n in net.recurrent
                              for end in "T0" for s in _state_names(graph, n, end)]
              + ["tokens", "data", "lengths"])
    values: dict = {}  # (layer, output index) -> ONNX value name
    states: list[tuple[str, list[str]]] = []
    timed = _unrolled_steps(graph, net, layers, steps) if unrolled else {}
    for name in layers:
        layer = graph.layer(name)
        module = net.layers[name]
        info = graph.info(name)
        if name in net.sources:
            x, _ = _data_input(b, layer, graph)
            values[(name, 0)] = x
            if _reads(net, layers, name, "lengths"):
                index = layer.spec.output_index("lengths")
                values[(name, index)] = b.add_input("lengths", TensorProto.INT64, ["N"])
            continue
        ins = [None if w is None else values.get(w) for w in net.wiring[name]]
        shapes = [None if t is None else t.shape for t in info.inputs]
        if layer.spec.cell is not None:
            lengths = ins[2] if len(ins) > 2 else None
            values[(name, 0)] = _recurrent(b, graph, name, module, ins[0], lengths,
                                           timed.get(name), states, notes)
            continue
        _check_inputs(net, name, layer, values)
        convert = CONVERTERS.of_type(layer.type, name)
        from designer.graph.shapes import resolve_params
        params = resolve_params(layer.spec, layer.params, graph.dims)
        for i, value in enumerate(convert(b, name, module, params, ins, shapes)):
            values[(name, i)] = value
    for (layer, index), out_name in zip(wanted, output_names):
        b.add_output(out_name, values[(layer, index)])
    for name, finals in states:
        for suffix, value in zip(_state_names(graph, name, "T"), finals):
            b.add_output(f"{name}.{suffix}", value)
    g = helper.make_graph(b.nodes, source.project.name or "rnn-designer", b.inputs, b.outputs,
                          b.initializers)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="rnn-designer", producer_version=__version__)
    model.ir_version = IR_VERSION
    props = metadata(source, net, states)
    props["design"] = json.dumps(source.project.to_dict(), ensure_ascii=False)
    props["export"] = json.dumps({"unrolled": bool(unrolled), "steps": steps})
    helper.set_model_props(model, props)
    try:
        model = shape_inference.infer_shapes(model, strict_mode=True)
        _fill_output_shapes(model)
        checker.check_model(model, full_check=True)
    except (checker.ValidationError, shape_inference.InferenceError) as e:
        raise ExchangeError(f"the ONNX model failed its own check ({str(e).splitlines()[0]})",
                            1) from None
    return model, notes


def _outputs(net, graph) -> tuple[list, list[str]]:
    """What the model outputs: the loss's logits, else the layers nothing reads."""
    if net.losses:
        regression = graph.layer(net.losses[0]).type in REGRESSION_LOSSES
        return [net.logits_source()], ["prediction" if regression else "logits"]
    read = {w[0] for name in net.order for w in net.wiring[name] if w is not None}
    ends = [n for n in net.order if n not in read and n not in net.sources
            and graph.layer(n).type not in TRAINING_ONLY]
    if not ends:
        raise ExchangeError("the net has no layer whose output could be exported")
    return [(n, 0) for n in ends], list(ends)


def _check_inputs(net, name: str, layer, values: dict) -> None:
    """Refuse, in one sentence, a layer that reads a data layer's output the model does not take
    as an input (a layer other than a recurrent one reading ``cont``, the restarts)."""
    for wire in net.wiring[name]:
        if wire is None or wire in values:
            continue
        src, index = wire
        port = net.ports[src][index] if src in net.ports else str(index)
        raise ExchangeError(f"{name} ({layer.type}) reads {src}.{port}, which the ONNX model "
                            f"does not take as an input (it takes the data and the sequences' "
                            f"lengths; the recurrent layers follow no restarts there): read "
                            f"another layer's output in {name}, or export as PyTorch", 2)


def _reads(net, layers, source: str, port: str) -> bool:
    """Whether a layer that is exported reads the data layer ``source``'s output ``port``."""
    ports = net.ports[source]
    if port not in ports:
        return False
    wire = (source, ports.index(port))
    return any(wire in net.wiring[n] for n in layers if n != source)


def _data_input(b: OnnxBuilder, layer, graph) -> tuple[str, int]:
    """The graph input for a data layer's 'data' port; returns it and its batch axis."""
    t = graph.output(layer.name, "data")
    if layer.type == "MnistRows":
        first = layer.get("batch_first")
        shape = ["N", 28, 28] if first else [28, "N", 28]
        return b.add_input("data", TensorProto.FLOAT, shape), 0 if first else 1
    if t.dtype == "index":
        return b.add_input("tokens", TensorProto.INT64, ["T", "N"]), 1
    return b.add_input("data", TensorProto.FLOAT, ["T", "N"] + list(t.shape[2:])), 1


def _recurrent(b, graph, name, module, x, lengths, unrolled, states, notes) -> str:
    """A recurrent layer's ONNX ops; ``unrolled``: ``(its steps, the model's steps)`` to
    write it as its per-step net, ``None`` for its cell's own form."""
    layer = graph.layer(name)
    chains = module.levels * getattr(module, "directions", 1)
    widths = layer.spec.cell.sizes(layer.effective_params())  # a recurrent layer's are numbers
    xs = x
    if module.batch_first:
        xs = b.op("Transpose", [x], f"{name}/time_major", perm=[1, 0, 2])
    n = b.shape_slice(xs, 1, 2, f"{name}/batch")
    inits = []
    for suffix, width in zip(_state_names(graph, name, "0"), widths):
        full = b.op("Concat", [b.ints(f"{name}/levels", [chains]), n,
                               b.ints(f"{name}/hidden", [width])], f"{name}/{suffix}_shape",
                    axis=0)
        zeros = b.const(f"{name}/{suffix}_zeros", np.zeros((chains, 1, width), np.float32))
        state = b.add_optional_input(f"{name}.{suffix}", [chains, "N", width], zeros)
        inits.append(b.op("Expand", [state, full], f"{name}/{suffix}"))
    if unrolled:
        t_, model_steps = unrolled
        y, finals = onnx_recurrent.unrolled(b, name, module, graph, xs, inits, t_, lengths)
        if t_ == model_steps:
            notes.append(f"{name}: unrolled over {t_} steps, so the model reads exactly {t_} "
                         "steps")
        else:
            notes.append(f"{name}: unrolled over {t_} steps, what the layers before it make of "
                         f"{model_steps} steps, so the model reads exactly {model_steps} steps")
    else:
        y, finals = onnx_recurrent.fused(b, name, module, xs, inits, lengths)
    if module.batch_first:
        y = b.op("Transpose", [y], f"{name}/batch_major", perm=[1, 0, 2])
    states.append((name, finals))
    return y


def _state_names(graph, name: str, end: str) -> tuple:
    """The names of a recurrent layer's states, each followed by ``end`` ("0" or "T")."""
    return tuple(s + end for s in graph.layer(name).spec.cell.states)


def _unrolled_steps(graph, net, layers, steps: int | None) -> dict[str, tuple[int, int]]:
    """Per exported recurrent layer: (the steps it unrolls over, the steps the model reads).

    ``steps`` is what the data gives the model (default: the data's T, when it is known); a
    layer behind one that changes the number of steps (a strided or 'valid' Conv1D) unrolls
    over what that layer makes of them, as the graph's shape rules say.
    """
    from designer.graph import dims as D
    from designer.graph.shapes import infer_at_steps
    recurrent = [n for n in layers if n in net.recurrent]
    steps = steps or graph.dims.get("T")
    if not recurrent:
        return {}
    infos = infer_at_steps(graph, int(steps)) if D.known(steps) else {
        n: graph.info(n) for n in graph.names()}  # no T: the layers' own steps, if known
    model_steps = _data_steps(graph, infos) or steps
    out = {}
    for name in recurrent:
        info = infos[name]
        x = info.inputs[0] if info.inputs else None
        if info.problems or x is None:
            why = info.problems[0] if info.problems else next(
                (p for i in infos.values() for p in i.problems), "its input has no shape")
            raise ExchangeError(f"{name}: cannot be unrolled over what {steps} steps of data "
                                f"become ({why})")
        t_ = x.shape[1 if graph.layer(name).effective_params().get("batch_first") else 0]
        if not D.known(t_):
            raise ExchangeError(f"{name}: the number of steps is only known once the data is "
                                "read; give the number of steps to unroll over (--steps)")
        out[name] = (int(t_), model_steps if D.known(model_steps) else int(t_))
    return out


def _data_steps(graph, infos) -> int | None:
    """The steps of the data layers' sequences in ``infos``, when they agree on a number."""
    found = set()
    for name in graph.sources():
        outs = infos[name].outputs
        x = outs[0] if outs else None
        if x is not None and x.rank >= 2 and x.batch in (0, 1):
            found.add(x.shape[1 - x.batch])
    return found.pop() if len(found) == 1 and all(isinstance(t, int) for t in found) else None


def _fill_output_shapes(model) -> None:
    """Give the graph outputs the shapes shape inference found (T and N stay symbolic)."""
    inferred = {v.name: v.type for v in model.graph.value_info}
    for out in model.graph.output:
        src = next((n.input[0] for n in model.graph.node if n.output and
                    n.output[0] == out.name and n.op_type == "Identity"), None)
        if src in inferred:
            out.type.CopyFrom(inferred[src])
