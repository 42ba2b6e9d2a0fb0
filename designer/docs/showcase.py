"""A small working net around one layer type: what the layer reference draws as the picture of
that layer on the canvas.

A data layer is drawn alone, reading a small sample file of its kind. Any other layer is fed
from one of a few small nets (characters through an Embed and an LSTM; labelled sequences and
a series through an LSTM and its last step): each required input takes the first output that
leaves the layer without a problem (an output of the same name first, as a ``label`` feeds a
``label``), and an optional input is linked where an output of its name is there and the
layer stays good. The picture holds the layer and what feeds it. A layer that no such net
feeds (a new kind of input) is drawn alone, as it would be dropped on an empty canvas.
"""
from __future__ import annotations

import itertools
import math
import re
import struct
import wave
from pathlib import Path

from designer.docs.layer_pages import load_layers
from designer.graph import registry
from designer.graph.errors import GraphError, GraphWarning
from designer.graph.model import Graph

# the sample files the data layers read here, and the parameter that names each
SAMPLE_PARAMS = {
    "CharText": {"corpus": "corpus.txt"},
    "WavAudio": {"file": "speech.wav"},
    "MnistRows": {"folder": "mnist"},
    "TimeSeries": {"file": "series.csv"},
    "SequenceClasses": {"file": "sequences.csv"},
}
# the small nets a layer may be fed from: the data layer, then (name, type, params, fed by)
FEEDERS = (
    ("CharText", (("embed", "Embed", {"num_output": 15}, ("data", "data", "x")),
                  ("lstm", "LSTM", {}, ("embed", "y", "x")),
                  ("logits", "InnerProduct", {"num_output": "V", "axis": 2},
                   ("lstm", "y", "x")))),
    ("SequenceClasses", (("lstm", "LSTM", {}, ("data", "data", "x")),
                         ("last", "SequenceLast", {}, ("lstm", "y", "x")),
                         ("logits", "InnerProduct", {"num_output": "K"}, ("last", "y", "x")))),
    ("TimeSeries", (("lstm", "LSTM", {}, ("data", "data", "x")),
                    ("last", "SequenceLast", {}, ("lstm", "y", "x")),
                    ("pred", "InnerProduct", {"num_output": "P"}, ("last", "y", "x")))),
    # one step of an unrolled LSTM: its state and its four gates' pre-activations
    ("CharText", (("embed", "Embed", {"num_output": 15}, ("data", "data", "x")),
                  ("c_prev", "InnerProduct", {"num_output": 16, "axis": 2}, ("embed", "y", "x")),
                  ("gates", "InnerProduct", {"num_output": 64, "axis": 2},
                   ("embed", "y", "x")))),
)
CORPUS = ("To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to "
          "suffer\nThe slings and arrows of outrageous fortune,\nOr to take arms against a sea "
          "of troubles\nAnd by opposing end them.\n")


def write_samples(folder: Path) -> None:
    """Small data files of every kind the data layers read, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.txt").write_text(CORPUS * 4, encoding="utf-8")
    (folder / "mnist").mkdir(exist_ok=True)
    rows = ["time,co2"] + [f"2020-{1 + w // 4:02d}-{1 + 7 * (w % 4):02d},"
                           f"{410 + 2 * math.sin(w / 8):.2f}" for w in range(48)]
    (folder / "series.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    rows = ["series_id,time,x1,x2,label"] + [
        f"s{s},{t},{math.sin(s + t):.3f},{math.cos(s * t):.3f},{'ab'[s % 2]}"
        for s in range(6) for t in range(4 + s)]
    (folder / "sequences.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    with wave.open(str(folder / "speech.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / 9)))
                               for i in range(1600)))


def net_for(type_id: str, folder: Path) -> Graph:
    """The layer ``type_id`` (named after its type; the graph's last layer) and
    what feeds it, in a graph whose data files are in ``folder`` (see :func:`write_samples`).
    Of the nets that feed it without an error, the one that leaves it fewest warnings, then the
    fewest inputs fed twice from one output, then the most inputs fed by an output of their
    name, then the fewest layers."""
    load_layers()
    spec = registry.get(type_id)
    if not spec.inputs:
        g = Graph(project_dir=folder)
        g.add_layer(type_id, _name(type_id), params=SAMPLE_PARAMS.get(type_id))
        return g
    found = []
    for data, chain in FEEDERS:
        g = _feeder(data, chain, folder)
        name = g.unique_name(_name(type_id))
        g.add_layer(type_id, name)
        if _feed(g, name):
            net = _with_ancestors(g, name, folder)
            errors, warnings = _problems(net, name)
            links = net.links_into(name)
            twice = len(links) - len({(k.src, k.src_port) for k in links})
            unnamed = sum(k.dst_port not in (k.src, k.src_port) for k in links)
            found.append(((errors, warnings, twice, unnamed, len(net)), net))
    if found:
        return min(found, key=lambda f: f[0])[1]
    g = Graph(project_dir=folder)
    g.add_layer(type_id, _name(type_id))
    return g


def _name(type_id: str) -> str:
    """The layer's name on its card: its type in lower case, or, where that would not fit
    beside the type, the type's last word (SoftmaxWithLoss: ``loss``, SequencePool: ``pool``)."""
    if len(type_id) <= 10:
        return type_id.lower()
    return re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", type_id)[-1].lower()


def _feeder(data: str, chain, folder: Path) -> Graph:
    g = Graph(project_dir=folder)
    with g.bulk():
        g.add_layer(data, "data", params=SAMPLE_PARAMS.get(data))
        for name, kind, params, (src, port, dst_port) in chain:
            g.add_layer(kind, name, params=params)
            g.connect(src, port, name, dst_port)
    return g


def _outputs(g: Graph, exclude: str) -> list[tuple[str, str]]:
    """Every output of the feeding net: its layers' in the order they were added, the data
    layer's last."""
    names = [n for n in g.names() if n not in ("data", exclude)] + ["data"]
    return [(name, p.name) for name in names for p in g.layer(name).spec.outputs]


def _errors(g: Graph, name: str) -> int:
    """The errors inference finds on layer ``name``; an output whose shape is not known
    counts as one (what feeds it has an error)."""
    info = g.info(name)
    return len(info.problems) + (sum(t is None for t in info.outputs) or not info.outputs)


def _problems(g: Graph, name: str) -> tuple[int, int]:
    """(errors, warnings) told about layer ``name`` in the whole net's check."""
    own = [p for p in g.problems() if p.layer == name]
    warnings = sum(isinstance(p, GraphWarning) for p in own)
    return max(len(own) - warnings, _errors(g, name)), warnings


def _feed(g: Graph, name: str) -> bool:
    """Link the required inputs of ``name`` so that it has no error (trying the outputs in
    turn, those of the port's own name first), then its optional inputs that an output of
    their name can feed; False when no choice leaves it without an error."""
    spec = g.layer(name).spec
    outs = _outputs(g, name)

    def ranked(port: str):  # an output named as the port (or from a layer so named) first
        return sorted(outs, key=lambda o: port not in o)

    required = [p.name for p in spec.inputs if not p.optional]
    for choice in itertools.product(*(ranked(p) for p in required)):
        made = []
        try:
            for port, (src, src_port) in zip(required, choice):
                made.append(g.connect(src, src_port, name, port))
        except GraphError:
            pass
        else:
            if _errors(g, name) == 0:
                break
        for link in made:
            g.disconnect(link)
    else:
        return False
    for port in (p.name for p in spec.inputs if p.optional):
        same = [o for o in outs if o[1] == port]
        if not same:
            continue
        try:
            link = g.connect(same[0][0], port, name, port)
        except GraphError:
            continue
        if _errors(g, name):
            g.disconnect(link)
    return True


def _with_ancestors(g: Graph, name: str, folder: Path) -> Graph:
    """A new graph of ``name`` and the layers it reads from, linked as in ``g``."""
    keep, todo = {name}, [name]
    while todo:
        for link in g.links_into(todo.pop()):
            if link.src not in keep:
                keep.add(link.src)
                todo.append(link.src)
    out = Graph(project_dir=folder)
    with out.bulk():
        for layer in g.layers():
            if layer.name in keep:
                out.add_layer(layer.type, layer.name, params=dict(layer.params))
        for link in g.links():
            if link.src in keep and link.dst in keep:
                out.connect(link.src, link.src_port, link.dst, link.dst_port)
    return out
