"""Write a project as a MyCaffe-style ``train_val.prototxt`` and ``solver.prototxt``.

Each layer becomes the Caffe/MyCaffe layer of the same meaning (``Embed``, ``InnerProduct``...;
a recurrent layer as its cell writes it, e.g. ``Lstm`` with ``recurrent_param { engine:
CUDNN|CAFFE ... }``: :data:`PARAMS`, :data:`CAFFE_TYPES`),
blobs are named after the layers that make them, and a data layer becomes an ``Input`` layer
with the shapes of its tops, as MyCaffe's own character model does. Every layer also carries a
``#@ rnn_designer { ... }`` line, a comment to Caffe and MyCaffe, holding its exact type and
parameters, so that importing the file gives back the same graph. What MyCaffe would run
differently is said in the returned notes.
"""
from __future__ import annotations

import math

from designer.graph import dims as D
from designer.graph import registry
from designer.graph.model import Graph, Layer
from designer.graph.project import Project

from designer.exchange.caffe.solver import solver_message
from designer.exchange.errors import ExchangeError
from designer.exchange.writers import Writers
from designer.exchange.caffe.textformat import Enum, Message

HIDDEN = "rnn_designer"
# layer type -> Caffe's (MyCaffe's) type, where the names differ; the cells add theirs
CAFFE_TYPES = {"CharText": "Input", "WavAudio": "Input", "MnistRows": "Input",
               "TimeSeries": "Input", "SequenceClasses": "Input", "L1Loss": "MAELoss",
               "Conv1D": "Convolution1D"}
DATA_BLOBS = {"data": "data", "cont": "clip", "label": "label"}


def export_messages(project: Project, net_file: str = "train_val.prototxt",
                    ) -> tuple[Message, Message, list[str]]:
    """(net message, solver message naming ``net_file``, notes) for ``project``."""
    g = project.graph
    PARAMS.known()  # with the cells' writers
    errors = g.errors()
    if errors:
        raise ExchangeError(f"the net is not valid, so it cannot be written: {errors[0]}")
    notes: list[str] = []
    blobs = _blob_names(g)
    net = Message().add("name", project.name)
    for name in g.topological_order():
        net.add("layer", _layer(g, g.layer(name), blobs, notes))
    solver = solver_message(project.solver, project.training, net_file, notes)
    return net, solver, notes


def _blob_names(g: Graph) -> dict[tuple[str, str], str]:
    names = set(g.names())
    out = {}
    single_source = len(g.sources()) == 1
    for layer in g.layers():
        ports = [p.name for p in layer.spec.outputs]
        for port in ports:
            if layer.spec.is_source and single_source and DATA_BLOBS.get(port) and \
                    (DATA_BLOBS[port] not in names or DATA_BLOBS[port] == layer.name):
                out[(layer.name, port)] = DATA_BLOBS[port]
            elif len(ports) == 1:
                out[(layer.name, port)] = layer.name
            else:
                out[(layer.name, port)] = f"{layer.name}_{port}"
    return out


def _layer(g: Graph, layer: Layer, blobs: dict, notes: list) -> Message:
    spec = layer.spec
    caffe_type = CAFFE_TYPES.get(layer.type, layer.type)  # the rest share their names
    if caffe_type == "Input" and not all(D.known(d) for port in spec.outputs
                                         for d in g.output(layer.name, port.name).shape):
        caffe_type = layer.type
        notes.append(f"{layer.name}: Caffe's Input layer needs fixed shapes, but the steps T "
                     f"are only known once the data is read; the file keeps it as "
                     f"{layer.type}, which rnn-designer reads back")
    msg = Message().add("name", layer.name).add("type", caffe_type)
    linked = []
    for port in spec.inputs:
        link = g.link_into(layer.name, port.name)
        if link is not None:
            msg.add("bottom", blobs[(link.src, link.src_port)])
            linked.append(port.name)
    for port in spec.outputs:
        msg.add("top", blobs[(layer.name, port.name)])
    p = _effective(g, layer)
    block = PARAMS.get(layer.type)
    if block is not None and (caffe_type == "Input") == layer.spec.is_source:
        block(msg, g, layer, p, notes)
    exact = Message().add("type", layer.type)
    for key, value in layer.params.items():
        for v in (value if isinstance(value, list) else [value]):
            exact.add(key, v)
    if linked != [port.name for port in spec.inputs][:len(linked)]:
        for port in linked:  # an optional input is left out before one that is linked
            exact.add("bottom_ports", port)
    msg.add(HIDDEN, exact, hidden=True)
    return msg


def _effective(g: Graph, layer: Layer) -> dict:
    from designer.graph.shapes import resolve_params
    return resolve_params(layer.spec, layer.params, g.dims)


def _int(value, layer: Layer, what: str) -> int:
    if not D.known(value):
        raise ExchangeError(f"{layer.name}: {what} is '{value}', which is not known; make the "
                            "data readable (or export from a run) so the file can hold a "
                            "number")
    return int(value)


def filler(p: dict, units: int, fan_in: int, default_kind: str = "xavier") -> Message:
    kind = p.get("weight_filler", default_kind)
    f = Message()
    if kind == "xavier":
        f.add("type", "xavier").add("variance_norm", Enum("AVERAGE"))
    elif kind == "uniform":
        bound = 1.0 / math.sqrt(max(units, 1))
        f.add("type", "uniform").add("min", -bound).add("max", bound)
    elif kind == "gaussian":
        f.add("type", "gaussian").add("mean", 0.0).add("std", 0.01)
    elif kind == "orthogonal":
        f.add("type", "orthogonal")
    elif kind == "zero":
        f.add("type", "constant").add("value", 0.0)
    else:  # torch_default: what torch's own layer does
        bound = 1.0 / math.sqrt(max(fan_in, 1))
        f.add("type", "uniform").add("min", -bound).add("max", bound)
    return f


def bias(p: dict) -> Message:
    return Message().add("type", "constant").add("value", float(p.get("bias_filler", 0.0)))


def _shape(dims) -> Message:
    s = Message()
    for d in dims:
        s.add("dim", d)
    return s


# ------------------------------------------------------------------------ parameters --
def _data(msg, g, layer, p, notes):
    param = Message()
    for port in layer.spec.outputs:
        t = g.output(layer.name, port.name)
        param.add("shape", _shape([_int(d, layer, f"the shape of '{port.name}'")
                                   for d in t.shape]))
    msg.add("input_param", param)


def _embed(msg, g, layer, p, notes):
    n = p["num_output"]
    e = Message().add("num_output", n).add("input_dim", _int(p["input_dim"], layer, "input_dim"))
    e.add("bias_term", p["bias_term"])
    if p["weight_filler"] == "torch_default":  # nn.Embedding starts at N(0, 1)
        e.add("weight_filler", Message().add("type", "gaussian").add("mean", 0.0).add("std", 1.0))
    else:
        e.add("weight_filler", filler(p, n, p["input_dim"]))
    e.add("bias_filler", bias(p))
    msg.add("embed_param", e)


def _inner_product(msg, g, layer, p, notes):
    m = _int(p["num_output"], layer, "num_output")
    x = g.info(layer.name).inputs[0].shape
    a = p["axis"] + len(x) if p["axis"] < 0 else p["axis"]
    k = _int(D.numel(x[a:]), layer, "the input size")
    ip = Message().add("num_output", m).add("bias_term", p["bias_term"])
    ip.add("weight_filler", filler(p, m, k)).add("bias_filler", bias(p)).add("axis", p["axis"])
    msg.add("inner_product_param", ip)


def own_layer(msg, g, layer, p, notes):
    """A layer no Caffe has: the file names it by its own type, and says so."""
    notes.append(f"{layer.name}: Caffe and MyCaffe have no {layer.type} layer; the file names "
                 f"it {layer.type}, which rnn-designer reads back")


def _loss(msg, g, layer, p, notes):
    if p["loss_weight"] != 1.0:
        msg.add("loss_weight", p["loss_weight"])
    msg.add("exclude", Message().add("phase", Enum("RUN")))
    msg.add("softmax_param", Message().add("axis", p["axis"]))
    loss = Message()
    if p["ignore_label"] >= 0:
        loss.add("ignore_label", p["ignore_label"])
    msg.add("loss_param", loss.add("normalization", Enum("VALID")))


def _regression_loss(msg, g, layer, p, notes):
    if p["loss_weight"] != 1.0:
        msg.add("loss_weight", p["loss_weight"])
    msg.add("exclude", Message().add("phase", Enum("RUN")))
    if layer.type == "L1Loss":
        notes.append(f"{layer.name}: written as MyCaffe's MAELoss (Caffe has no L1 loss); "
                     "MyCaffe may normalise the sum of absolute differences otherwise than "
                     "L1Loss's division by N, which scales the loss only")


def _sequence_last(msg, g, layer, p, notes):
    msg.add("sequence_last_param", Message().add("batch_first", p["batch_first"])
            .add("bidirectional", p["bidirectional"]))
    notes.append(f"{layer.name}: Caffe and MyCaffe have no SequenceLast layer; the file names "
                 "it SequenceLast, which rnn-designer reads back")


def _conv1d(msg, g, layer, p, notes):
    """Caffe's convolution_param fields; Caffe pads both sides alike, so only a symmetric
    padding is written as 'pad' (the #@ line keeps the padding rnn-designer reads back)."""
    from designer.graph.layers.conv import pads
    c = Message().add("num_output", p["num_output"]).add("bias_term", p["bias_term"])
    before, after = pads(p)
    if before == after:
        c.add("pad", before)
    c.add("kernel_size", p["kernel_size"]).add("stride", p["stride"])
    c.add("dilation", p["dilation"]).add("group", p["groups"])
    fan_in = _int(g.info(layer.name).inputs[0].shape[2], layer, "the input channels") \
        // p["groups"] * p["kernel_size"]
    c.add("weight_filler", filler(p, p["num_output"], fan_in)).add("bias_filler", bias(p))
    msg.add("convolution_param", c)
    notes.append(f"{layer.name}: Caffe and MyCaffe have no convolution over the steps of a "
                 f"(T, N, C) blob; the file names it Convolution1D, which rnn-designer reads "
                 f"back" + ("" if before == after else f" (its {p['padding']} padding adds "
                            f"{before} steps before and {after} after, which Caffe's 'pad' "
                            f"cannot say)"))


def _batch_norm(msg, g, layer, p, notes):
    """Caffe's batch_norm_param (moving_average_fraction is 1 - momentum) and MyCaffe's
    scale_bias for the learned scale and shift."""
    b = Message().add("use_global_stats", False)
    b.add("moving_average_fraction", round(1.0 - p["momentum"], 12)).add("eps", p["eps"])
    b.add("scale_bias", p["affine"])
    msg.add("batch_norm_param", b)
    if p["affine"]:
        notes.append(f"{layer.name}: Caffe's BatchNorm learns no scale and shift (a Scale layer "
                     "with bias_term does, after it); MyCaffe's reads scale_bias")
    if g.info(layer.name).inputs[0].rank == 3:
        notes.append(f"{layer.name}: Caffe and MyCaffe normalise axis 1, which of a (T, N, C) "
                     "blob is the batch; rnn-designer normalises the channels (the last axis) "
                     "and reads its own layer back from the #@ line")
    if g.link_into(layer.name, "lengths") is not None:
        notes.append(f"{layer.name}: Caffe and MyCaffe have no sequence lengths; the lengths "
                     "bottom is for rnn-designer")


def _layer_norm(msg, g, layer, p, notes):
    msg.add("layer_norm_param", Message().add("epsilon", p["eps"]))
    if p["affine"]:
        notes.append(f"{layer.name}: MyCaffe's LayerNorm learns no scale and shift; "
                     "rnn-designer's does (affine), as the #@ line keeps")


def _sequence_pool(msg, g, layer, p, notes):
    msg.add("sequence_pool_param", Message().add("method", Enum(p["method"].upper()))
            .add("attention_units", p["attention_units"]).add("batch_first", p["batch_first"]))
    notes.append(f"{layer.name}: Caffe and MyCaffe have no SequencePool layer; the file names "
                 "it SequencePool, which rnn-designer reads back")
    if g.link_into(layer.name, "lengths") is not None:
        notes.append(f"{layer.name}: Caffe and MyCaffe have no sequence lengths; the lengths "
                     "bottom is for rnn-designer")


def _fixed_features(block: str, fitted: str):
    """The writer of a layer of fixed features (MiniRocket, Hydra): every parameter of its
    spec in ``block``; ``fitted`` names what a run fits, which a prototxt does not hold."""
    def write(msg, g, layer, p, notes):
        b = Message()
        for spec in registry.get(layer.type).params:
            b.add(spec.name, p[spec.name])
        msg.add(block, b)
        notes.append(f"{layer.name}: Caffe and MyCaffe have no {layer.type} layer; the file "
                     f"names it {layer.type}, which rnn-designer reads back (its {fitted} are "
                     "fitted to the first training batch and saved with a run's weights, which "
                     "a prototxt does not hold)")
        if g.link_into(layer.name, "lengths") is not None:
            notes.append(f"{layer.name}: Caffe and MyCaffe have no sequence lengths; the "
                         "lengths bottom is for rnn-designer")
    return write


def _difference(msg, g, layer, p, notes):
    msg.add("difference_param", Message().add("batch_first", p["batch_first"]))
    notes.append(f"{layer.name}: Caffe and MyCaffe have no Difference layer; the file names it "
                 "Difference, which rnn-designer reads back")


def _block(name: str, *keys, enums=()):
    def write(msg, g, layer, p, notes):
        b = Message()
        for k in keys:
            b.add(k, Enum(p[k]) if k in enums else p[k])
        msg.add(name, b)
    return write


def _reshape(msg, g, layer, p, notes):
    r = Message().add("shape", _shape(p["shape"]))
    if p["axis"] != 0:
        r.add("axis", p["axis"])
    if p["num_axes"] != -1:
        r.add("num_axes", p["num_axes"])
    msg.add("reshape_param", r)


def _relu(msg, g, layer, p, notes):
    if p["negative_slope"]:
        msg.add("relu_param", Message().add("negative_slope", p["negative_slope"]))


# layer type -> writer(msg, g, layer, p, notes) of its parameter block and notes; the cells add
# their recurrent layers' (designer/cells/<cell>/exports/caffe.py)
PARAMS = Writers("prototxt form")
PARAMS.update({
    "CharText": _data, "WavAudio": _data, "MnistRows": _data, "TimeSeries": _data,
    "SequenceClasses": _data, "EuclideanLoss": _regression_loss, "L1Loss": _regression_loss,
    "BatchNorm": _batch_norm, "LayerNorm": _layer_norm,
    "SequenceLast": _sequence_last, "Conv1D": _conv1d,
    "SequencePool": _sequence_pool, "Difference": _difference,
    "MiniRocket": _fixed_features("mini_rocket_param", "dilations, channels and biases"),
    "Hydra": _fixed_features("hydra_param", "dilations, kernels and channel sums"),
    "Embed": _embed, "InnerProduct": _inner_product,
    "SoftmaxWithLoss": _loss, "Reshape": _reshape, "ReLU": _relu,
    "Dropout": _block("dropout_param", "dropout_ratio"),
    "Softmax": _block("softmax_param", "axis"),
    "Accuracy": _block("accuracy_param", "top_k", "axis"),
    "Clip": _block("clip_param", "min", "max"),
    "Scale": _block("scale_param", "axis", "num_axes", "bias_term"),
    "Eltwise": _block("eltwise_param", "operation", enums=("operation",)),
    "Slice": _block("slice_param", "axis", "slice_point"),
    "Concat": _block("concat_param", "axis"),
})
