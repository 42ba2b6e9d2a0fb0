"""Import a Caffe or MyCaffe ``train_val.prototxt`` (and ``solver.prototxt``) as a project.

The file is read with the generic text-format parser, then walked layer by layer in file order:
blobs are followed by name (in-place layers included), layers that run only in the TEST (or
MyCaffe's RUN) phase are left out, each layer goes through its converter in
:mod:`designer.exchange.caffe.layers`, and the net is laid out in rows. An ``Input`` layer becomes
the data layer that feeds it: character text (or a WAV file) when its ids go through an Embed,
MNIST rows for (28, N, 28) pixels. As in MyCaffe, the Embed's ``input_dim`` and the classifier's
``num_output`` of a text or audio net become ``V``, the size of the vocabulary the data gives.

Nothing is written here: :func:`import_prototxt` returns the project and the notes, and refuses
a layer it cannot build with one sentence naming the layer and its type.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from designer.graph import registry
from designer.graph.errors import GraphError
from designer.graph.layout import layered_positions
from designer.graph.model import Graph
from designer.graph.project import Project

from designer.exchange.caffe import layers as L
from designer.exchange.caffe.solver import solver_settings
from designer.exchange.errors import ExchangeError
from designer.exchange.caffe.textformat import Message, TextFormatError, parse

HIDDEN = "rnn_designer"  # the #@ block rnn-designer writes into each layer it exports
DATA_PORTS = ("data", "cont", "label")


@dataclass
class CaffeLayer:
    name: str
    type: str
    bottoms: list
    tops: list
    msg: Message


@dataclass
class ImportResult:
    """What an import made: the project (not saved yet) and notes for the user."""

    project: Project
    notes: list = field(default_factory=list)


def read_message(path: str | os.PathLike, what: str) -> Message:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ExchangeError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise ExchangeError(f"{path} is a folder, not a {what}") from None
    except UnicodeDecodeError:
        raise ExchangeError(f"{path} is not a {what} (it is not UTF-8 text)") from None
    except OSError as e:
        raise ExchangeError(f"{path} cannot be read ({e.strerror or e})") from None
    try:
        return parse(text)
    except TextFormatError as e:
        raise ExchangeError(f"{path} is not a readable {what}: {e}") from None


def import_prototxt(path: str | os.PathLike, solver: str | os.PathLike | None = None,
                    data: str | None = None, project_dir=None) -> ImportResult:
    """Read a net (and optionally its solver) into a project.

    Parameters
    ----------
    path, solver
        The ``train_val.prototxt`` and ``solver.prototxt`` files.
    data
        What feeds a text net's ``Input`` (a corpus name or a text file; a ``.wav`` file makes it
        an audio net). Default: tinyshakespeare.
    project_dir
        Where the project will be saved (relative data paths are looked up from there).
    """
    path = Path(path)
    net = read_message(path, "prototxt net")
    b = _Builder(path, Graph(project_dir=project_dir), data)
    try:
        with b.graph.bulk():
            b.build(net)
        b.vocabulary_dims()
        with b.graph.bulk():
            for name, pos in layered_positions(b.graph).items():
                b.graph.move_layer(name, pos)
    except ExchangeError as e:
        raise ExchangeError(f"{path}: {e}", e.code) from None
    except GraphError as e:
        raise ExchangeError(f"{path}: {e}") from None
    if b.filler_notes:
        b.notes.append("fillers that start the weights differently: " + "; ".join(
            f"{layer} {theirs} (here {ours})" for layer, theirs, ours in b.filler_notes))
    project = Project(b.graph, str(net.get("name", path.stem)),
                      f"Imported from {path.name}.")
    if solver is not None:
        settings, training, notes = solver_settings(read_message(solver, "solver prototxt"),
                                                    Path(solver))
        project.solver, project.training = settings, training
        b.notes.extend(notes)
    return ImportResult(project, b.notes)


def _phase(msg: Message) -> str | None:
    value = msg.get("phase")
    return None if value is None else str(value).upper()


def in_training(msg: Message) -> bool:
    """Whether a layer runs in the TRAIN phase (Caffe's include/exclude rules)."""
    if msg.has("phase") and str(msg.get("phase")).upper() != "TRAIN":
        return False
    includes = [_phase(m) for m in msg.all("include") if isinstance(m, Message)]
    if includes and not any(p in (None, "TRAIN") for p in includes):
        return False
    excludes = [_phase(m) for m in msg.all("exclude") if isinstance(m, Message)]
    return "TRAIN" not in excludes


def _layers(net: Message) -> list[CaffeLayer]:
    if net.has("layers") and not net.has("layer"):
        raise ExchangeError("uses Caffe's old V1 'layers' format; upgrade it with Caffe's "
                            "upgrade_net_proto_text first")
    out = []
    if net.has("input"):  # a deploy net's inputs, declared at the top
        shapes = net.all("input_shape")
        dims = net.all("input_dim")
        msg = Message().add("name", "input").add("type", "Input")
        param = Message()
        for i, top in enumerate(net.all("input")):
            msg.add("top", top)
            if i < len(shapes):
                shape = shapes[i]
            else:  # the older form: four input_dim values per input
                shape = Message()
                for d in dims[4 * i:4 * i + 4]:
                    shape.add("dim", d)
            param.add("shape", shape)
        msg.add("input_param", param)
        out.append(CaffeLayer("input", "Input", [], list(net.all("input")), msg))
    for msg in net.all("layer"):
        if not isinstance(msg, Message) or not in_training(msg):
            continue
        name = str(msg.get("name", f"layer{len(out) + 1}"))
        if not msg.has("type"):
            raise ExchangeError(f"layer '{name}' has no type")
        out.append(CaffeLayer(name, str(msg.get("type")), [str(v) for v in msg.all("bottom")],
                              [str(v) for v in msg.all("top")], msg))
    return out


class _Builder:
    """Builds the graph while the file's layers are walked; the converters call it."""

    def __init__(self, path: Path, graph: Graph, data: str | None):
        self.path, self.graph, self.data = path, graph, data
        self.blobs: dict[str, tuple[str, str]] = {}  # blob -> (our layer, output port)
        self.notes: list[str] = []
        self.filler_notes: list[tuple] = []
        self.embeds: list[str] = []
        self.classifiers: list[str] = []
        self.losses: list[str] = []
        self.sources: list[str] = []
        self.exact: set[str] = set()  # layers whose parameters came from a #@ block
        self.caffe_layers: list[CaffeLayer] = []

    # --------------------------------------------------------------- for converters --
    def note(self, text: str) -> None:
        self.notes.append(text)

    def filler_note(self, layer: str, theirs: str, ours: str) -> None:
        self.filler_notes.append((layer, theirs, ours))

    def add(self, layer: CaffeLayer, type_id: str, params: dict) -> str:
        hidden = layer.msg.message(HIDDEN)
        if hidden is not None:  # written by rnn-designer: the exact type and parameters
            type_id, params = _exact(hidden, layer)
        name = self.graph.unique_name(layer.name)
        if name != layer.name:
            self.note(f"layer '{layer.name}' is called {name} here")
        self.graph.add_layer(type_id, name, params)
        if hidden is not None:
            self.exact.add(name)
        return name

    def add_extra(self, name: str, type_id: str, params: dict) -> str:
        name = self.graph.unique_name(name)
        self.graph.add_layer(type_id, name, params)
        return name

    def connect(self, src: str, src_port: str, dst: str, dst_port: str) -> None:
        self.graph.connect(src, src_port, dst, dst_port)

    def produce(self, blob: str, layer: str, port: str) -> None:
        self.blobs[blob] = (layer, port)

    def wire(self, layer: CaffeLayer, made: str, ports_in, ports_out) -> None:
        spec = self.graph.layer(made).spec
        if made in self.exact:  # bottoms and tops follow the ports, optional ones last
            named = layer.msg.message(HIDDEN).all("bottom_ports")
            ports_in = [str(p) for p in named] or [p.name for p in spec.inputs]
            ports_out = [p.name for p in spec.outputs]
        if len(layer.bottoms) > len(ports_in):
            raise ExchangeError(f"layer '{layer.name}' ({layer.type}) has "
                                f"{len(layer.bottoms)} bottoms; rnn-designer's {spec.id} "
                                f"takes {len(ports_in)}")
        for blob, port in zip(layer.bottoms, ports_in):
            if blob not in self.blobs:
                raise ExchangeError(f"layer '{layer.name}' reads blob '{blob}', which no "
                                    "earlier layer makes")
            src, src_port = self.blobs[blob]
            self.graph.connect(src, src_port, made, port)
        if len(layer.tops) > len(ports_out) and ports_out:
            raise ExchangeError(f"layer '{layer.name}' ({layer.type}) has {len(layer.tops)} "
                                f"tops; rnn-designer's {spec.id} makes {len(ports_out)}")
        for blob, port in zip(layer.tops, ports_out):
            self.blobs[blob] = (made, port)

    # ----------------------------------------------------------------------- walk --
    def build(self, net: Message) -> None:
        L.CONVERTERS.known()  # with the cells' converters
        layers = self.caffe_layers = _layers(net)
        if not layers:
            raise ExchangeError("holds no layers that run in training")
        for layer in layers:
            k = L.key(layer.type)
            if k in L.DATA_TYPES:
                self._data(layer, layers)
                continue
            if layer.msg.message(HIDDEN) is not None:  # written by rnn-designer: exact
                self.wire(layer, self.add(layer, "", {}), (), ())
                continue
            convert = L.CONVERTERS.get(k)
            if convert is None:
                raise ExchangeError(f"layer '{layer.name}' has type {layer.type}, which "
                                    "rnn-designer does not have", 2)
            try:
                convert(self, layer)
            except ExchangeError as e:
                if layer.name in str(e):
                    raise
                raise ExchangeError(f"layer '{layer.name}' ({layer.type}): {e}") from None
            except GraphError as e:
                raise ExchangeError(f"layer '{layer.name}' ({layer.type}): {e}") from None

    def _data(self, layer: CaffeLayer, layers: list[CaffeLayer]) -> None:
        hidden = layer.msg.message(HIDDEN)
        roles = _top_roles(layer, layers)
        if hidden is not None:
            type_id, params = _exact(hidden, layer)
            roles = [p.name for p in registry.get(type_id).outputs]
        else:
            type_id, params = self._guess_source(layer, roles)
        name = self.graph.unique_name(layer.name)
        self.graph.add_layer(type_id, name, params)
        self.sources.append(name)
        ports = [p.name for p in self.graph.layer(name).spec.outputs]
        for top, role in zip(layer.tops, roles):
            if role in ports:
                self.blobs[top] = (name, role)

    def _guess_source(self, layer: CaffeLayer, roles: list[str]) -> tuple[str, dict]:
        shapes = [[int(d) for d in s.all("dim")] for s in
                  (layer.msg.message("input_param") or Message()).all("shape")]
        if "data" not in roles:
            raise ExchangeError(f"Input layer '{layer.name}' feeds no layer rnn-designer can "
                                "read its data for")
        shape = shapes[roles.index("data")] if roles.index("data") < len(shapes) else []
        feeds_embed = _feeds(layer.tops[roles.index("data")], self.caffe_layers, ("embed",), 0)
        if feeds_embed:
            if len(shape) < 2:
                raise ExchangeError(f"Input layer '{layer.name}' gives ids of shape {shape}; "
                                    "a sequence needs (T, N)")
            t_, n_ = shape[0], shape[1]
            source = self.data or "tinyshakespeare"
            if source.lower().endswith(".wav"):
                return "WavAudio", {"file": source, "seq_len": t_, "batch_size": n_}
            if self.data is None:
                self.note(f"the Input layer '{layer.name}' reads its ids from the "
                          "tinyshakespeare corpus; give --data FILE (a text file, or a .wav) "
                          "for another")
            return "CharText", {"corpus": source, "seq_len": t_, "batch_size": n_}
        if len(shape) == 3 and shape[0] == 28 and shape[2] == 28:
            return "MnistRows", {"batch_size": shape[1], "batch_first": False}
        if len(shape) == 3 and shape[1] == 28 and shape[2] == 28:
            return "MnistRows", {"batch_size": shape[0], "batch_first": True}
        raise ExchangeError(f"Input layer '{layer.name}' gives real-valued data of shape "
                            f"{tuple(shape)}; rnn-designer's data layers read character text, "
                            "WAV audio and MNIST rows (28 steps of 28 pixels)")

    def vocabulary_dims(self) -> None:
        """Text and audio nets: the Embed's input_dim and the classifier's size become V."""
        g = self.graph
        text = [s for s in self.sources if g.layer(s).type in ("CharText", "WavAudio")
                and s not in self.exact]
        if not text:
            return
        fed = {link.dst for s in text for link in g.links_out_of(s) if link.src_port == "data"}
        sizes = {g.layer(e).get("input_dim") for e in self.embeds if e in fed}
        sizes = {s for s in sizes if isinstance(s, int)}
        if len(sizes) != 1:
            return
        size = sizes.pop()
        changed = []
        for e in self.embeds:
            if e in fed and e not in self.exact:
                g.set_param(e, "input_dim", "V")
                changed.append(f"{e}.input_dim")
        for ip in self.classifiers:
            if ip not in self.exact and g.layer(ip).get("num_output") == size and \
                    _reaches_loss(g, ip):
                g.set_param(ip, "num_output", "V")
                changed.append(f"{ip}.num_output")
        for s in text:
            if g.layer(s).type == "WavAudio":
                g.set_param(s, "quantization", "uniform_128" if size == 128 else "mu_law_256")
        self.note(f"{' and '.join(changed)} ({size} in the file) become V, the vocabulary "
                  "size the data gives, as MyCaffe resizes them")


def _top_roles(layer: CaffeLayer, layers: list[CaffeLayer]) -> list[str]:
    """For each top of a data layer: data, cont or label, from the layers that read it."""
    roles = []
    for i, top in enumerate(layer.tops):
        recurrent = tuple(L.RECURRENT)
        if _feeds(top, layers, ("embed",) + recurrent, 0):
            roles.append("data")
        elif _feeds(top, layers, recurrent, 1) or _feeds(top, layers, ("lstmunit",), 2):
            roles.append("cont")
        elif _feeds(top, layers, ("softmaxwithloss", "accuracy"), 1):
            roles.append("label")
        else:
            roles.append(("data", "cont", "label")[i] if len(layer.tops) == 3 else
                         ("data", "label")[i] if len(layer.tops) == 2 and i < 2 else "")
    return roles


def _feeds(blob: str, layers: list[CaffeLayer], kinds: tuple, index: int) -> bool:
    return any(L.key(other.type) in kinds and len(other.bottoms) > index and
               other.bottoms[index] == blob for other in layers)


def _reaches_loss(g: Graph, name: str) -> bool:
    seen, stack = set(), [name]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for link in g.links_out_of(n):
            if g.layer(link.dst).type in ("SoftmaxWithLoss", "Accuracy") and \
                    link.dst_port == "logits":
                return True
            if g.layer(link.dst).type in ("Reshape", "Dropout", "Softmax"):
                stack.append(link.dst)
    return False


def _exact(hidden: Message, layer: CaffeLayer) -> tuple[str, dict]:
    """The type and parameters an rnn-designer export kept in the layer's ``#@`` block."""
    type_id = str(hidden.get("type", ""))
    try:
        spec = registry.get(type_id)
    except GraphError as e:
        raise ExchangeError(f"layer '{layer.name}': its #@ {HIDDEN} block names {e}") from None
    params = {}
    for p in spec.params:
        if not hidden.has(p.name):
            continue
        values = hidden.all(p.name)
        value = values[-1]
        if p.kind == "ints":
            value = [int(v) for v in values]
        elif p.kind == "bool":
            value = str(value).lower() in ("true", "t", "1")
        elif p.kind == "float":
            value = float(value)
        elif p.kind in ("choice", "str"):
            value = str(value)
        params[p.name] = value
    return type_id, params
