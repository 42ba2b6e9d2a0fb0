"""An ONNX model in as a project with its weights (``rnn-designer import MODEL.onnx``).

- :mod:`read`: the file, its external data, and the operators it uses;
- rnn-designer's own exports carry their design (``metadata_props["design"]``): it is rebuilt
  as drawn, and the weights are read from the initializers by :mod:`weights`, which runs the
  export backwards;
- any other model is walked node by node (:mod:`walk`, :mod:`layer_ops`,
  :mod:`recurrent_ops`): its operators become layers, the glue around them folds away, a data
  layer reads its input and a SoftmaxWithLoss its output, so that it trains;
- :mod:`run` writes the weights as a run folder that every command reads.

Nothing is written here: :func:`import_onnx` returns what was made, or raises an
``ExchangeError`` of one sentence.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from designer.graph import project as P
from designer.graph.errors import GraphError
from designer.graph.layout import layered_positions
from designer.graph.project import Project
from designer.graph.rocket_checks import FIXED_FEATURES

from designer.exchange.errors import ExchangeError
from designer.exchange.onnx_import.read import check_operators, read_model
from designer.exchange.onnx_import.values import Seq
from designer.exchange.onnx_import.weights import state_dict

FILE_PARAMS = {"CharText": "corpus", "WavAudio": "file", "MnistRows": "folder",
               "TimeSeries": "file", "SequenceClasses": "file"}


@dataclass
class OnnxImport:
    """What an import made: the project (not saved), the net's weights (a state dict), what
    the data was (the run's ``data`` metadata, for rnn-designer's own exports), notes,
    where the model's inputs and outputs are: name -> (layer, port, ONNX axes), and whether
    the model is an rnn-designer export (``own``)."""

    project: Project
    weights: dict
    data_meta: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    own: bool = False


def import_onnx(path: str | os.PathLike, data: str | None = None,
                project_dir=None, normalize: bool = False) -> OnnxImport:
    """Read ``path`` into a project and its weights; ``data`` is the file the data layer
    reads (default: the one the model's metadata names, else a placeholder to choose).

    ``normalize``: a model from elsewhere has its inputs z-scored by the data's statistics
    (by default it reads them as they are, as it was given them); an rnn-designer export
    keeps the scaling it was trained with either way."""
    path = Path(path)
    model = read_model(path)
    props = {p.key: p.value for p in model.metadata_props}
    if "design" in props:
        result = _own(model, props, path, project_dir, data)
        if normalize:
            result.notes.append(f"--normalize is for models from elsewhere: {path.name} "
                                "keeps the scaling it was trained with")
    else:
        check_operators(model, path)
        result = _foreign(model, path, data, project_dir, normalize)
    graph = result.project.graph
    with graph.bulk():
        for name, pos in layered_positions(graph).items():
            graph.move_layer(name, pos)
    return result


def _arrays(model) -> dict:
    from onnx import numpy_helper
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _own(model, props: dict, path: Path, project_dir, data: str | None) -> OnnxImport:
    """An rnn-designer export: the design it carries (reading ``data`` when given, whose
    sizes the net is built with), the weights from its initializers."""
    try:
        project = P.from_dict(json.loads(props["design"]), file=path, project_dir=project_dir)
        how = json.loads(props.get("export", "{}"))
    except (ValueError, P.ProjectError) as e:
        raise ExchangeError(f"{path}: its rnn-designer design cannot be read ({e})") from None
    if data is not None:
        _set_data(project, data)
    fitted = [lay for lay in project.graph.layers() if lay.type in FIXED_FEATURES]
    if fitted:  # its ONNX form holds its buffers multiplied and cut up, not as they were
        raise ExchangeError(f"{path}: {fitted[0].name} is a {fitted[0].type} layer, whose "
                            "fitted buffers rnn-designer does not read back from ONNX; open the "
                            "run the model was exported from instead")
    data = json.loads(props.get("data", "{}"))
    if "vocab" in props:
        data["vocab"] = json.loads(props["vocab"])
    if data.get("vocab") is not None and "V" not in project.graph.dims:
        project.graph.pin_dims({"V": len(data["vocab"])})
    notes = [f"{path.name} was written by rnn-designer {props.get('rnn_designer', '')}: its "
             "design is read back as drawn"]
    arrays, unrolled, steps = _arrays(model), bool(how.get("unrolled")), how.get("steps")
    try:
        weights = state_dict(project, arrays, unrolled, steps, str(path))
    except ExchangeError:
        if not unrolled:
            raise
        # the unrolled net holds one bias per gate where cuDNN holds two: the CAFFE engine
        g = project.graph
        moved = [lay.name for lay in g.layers() if _holds_other_than_caffe(lay)]
        for name in moved:
            g.set_param(name, "engine", "CAFFE")
        weights = state_dict(project, arrays, unrolled, steps, str(path))
        notes.append(f"{', '.join(moved)} run on the CAFFE engine: the unrolled model holds "
                     "their two biases summed, as that engine does")
    return OnnxImport(project, weights, data, notes, own=True)


def _holds_other_than_caffe(layer) -> bool:
    """Whether a recurrent layer's engine holds other tensors than the unrolled net's (the
    CAFFE engine's), which it can run on instead."""
    cell = layer.spec.cell
    return cell is not None and layer.spec.has_param("engine") and "CAFFE" in cell.engines \
        and cell.layout(layer.get("engine")) != "CAFFE"


def _foreign(model, path: Path, data, project_dir, normalize: bool) -> OnnxImport:
    from designer.exchange.onnx_import.walk import Walker
    for batch_major in (False, True):
        w = Walker(model, path, data, project_dir, batch_major, normalize)
        try:
            with w.graph.bulk():
                w.walk()
                outputs = _outputs(w)
            break
        except ExchangeError as e:
            if batch_major or "where its layout needs" not in str(e):
                raise
        except GraphError as e:
            raise ExchangeError(f"{path}: {e}") from None
    if w.tokens:
        _vocabulary(w.graph)
    name = model.graph.name or path.stem
    project = Project(w.graph, name if name not in ("main_graph", "torch_jit") else path.stem,
                      f"Imported from {path.name}.")
    project.dims = dict(w.graph._pinned)  # F (no data yet) and V, kept in the project file
    weights = state_dict(project, w.arrays, where=str(path))
    inputs = {i.name: (w.data_layer, "data", w.data_axes) for i in model.graph.input
              if isinstance(w.values.get(i.name), Seq) and w.values[i.name].src[1] == "data"}
    return OnnxImport(project, weights, {}, w.notes, inputs, outputs)


def _outputs(w) -> dict:
    """The model's outputs as layer outputs, and the loss that trains the first of them."""
    out = {}
    for o in w.model.graph.output:
        v = w.values.get(o.name)
        if isinstance(v, Seq):
            out[o.name] = (v.src[0], v.src[1], v.axes)
    if not out:
        raise ExchangeError(f"{w.path}: none of the model's outputs comes from a layer")
    layer, port, axes = next(iter(out.values()))
    g = w.graph
    if g.layer(layer).type == "Softmax":  # the loss reads the scores before it
        link = next(iter(g.links_into(layer)))
        layer, port = link.src, link.src_port
    per_step = "T" in axes
    if per_step != w.tokens:
        w.notes.append("the net has no loss layer: its output is "
                       f"{'per step' if per_step else 'per sequence'}, its data "
                       f"{'per step' if w.tokens else 'per sequence'}; add one to train it")
        return out
    loss = w.add("SoftmaxWithLoss", "loss", {})
    g.connect(layer, port, loss, "logits")
    g.connect(w.data_layer, "label", loss, "label")
    return out


def _vocabulary(g) -> None:
    """A text net: the Embed's rows and the classifier's outputs of that size become V, the
    vocabulary size of the data, pinned to the model's until the data says otherwise."""
    embeds = [lay for lay in g.layers() if lay.type == "Embed"]
    sizes = {lay.get("input_dim") for lay in embeds}
    if len(sizes) != 1:
        return
    size = sizes.pop()
    g.pin_dims({"V": size})
    for lay in embeds:
        g.set_param(lay.name, "input_dim", "V")
    for lay in g.layers():
        if lay.type == "InnerProduct" and lay.get("num_output") == size:
            g.set_param(lay.name, "num_output", "V")


def _set_data(project: Project, data: str) -> None:
    g = project.graph
    for name in g.sources():
        key = FILE_PARAMS.get(g.layer(name).type)
        if key:
            g.set_param(name, key, data)
