"""Small nets the tests of many rooms draw: the Char-RNN in miniature around one recurrent
layer, and wiring written as "layer.port" pairs."""
from __future__ import annotations

from designer.graph import Graph


def link_all(g: Graph, pairs) -> None:
    """Connect each ``("from.port", "to.port")`` pair, in order."""
    for a, b in pairs:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)


def char_net(kind: str, params: dict, *, name: str = "rnn", steps: int = 12, batch: int = 4,
             embed: int = 8, vocab: int | None = 20, cont: bool = False,
             corpus: str = "missing.txt", project_dir=None) -> Graph:
    """data -> Embed ``embed`` -> the recurrent layer ``name`` -> InnerProduct V -> loss.

    The embedding and the inner product both read ``vocab`` symbols, pinned as ``V`` (``None``:
    the symbols the corpus holds, nothing pinned); ``cont`` also links the data's sequence
    starts into the layer.
    """
    g = Graph(project_dir=project_dir)
    g.add_layer("CharText", "data", {"corpus": corpus, "seq_len": steps, "batch_size": batch})
    g.add_layer("Embed", "embed", {"num_output": embed, **({} if vocab is None else
                                                          {"input_dim": vocab})})
    g.add_layer(kind, name, params)
    g.add_layer("InnerProduct", "ip1", {"num_output": "V" if vocab is None else vocab,
                                        "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", f"{name}.x")]
             + ([("data.cont", f"{name}.cont")] if cont else [])
             + [(f"{name}.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    if vocab is not None:
        g.pin_dims({"V": vocab})
    return g


def digits_net(data: dict, hidden: int, project_dir=None) -> Graph:
    """MNIST read row by row: MnistRows (``data``) -> LSTM ``hidden`` (batch-first) ->
    InnerProduct 10 over its last step -> loss."""
    g = Graph(project_dir=project_dir)
    g.add_layer("MnistRows", "data", data)
    g.add_layer("LSTM", "lstm1", {"num_output": hidden, "batch_first": True})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10, "axis": 1})
    g.add_layer("SoftmaxWithLoss", "loss", {"axis": 1})
    link_all(g, [("data.data", "lstm1.x"), ("lstm1.y", "ip1.x"), ("ip1.y", "loss.logits"),
                 ("data.label", "loss.label")])
    return g


def lengths_cut_short(g: Graph, layer: str) -> list:
    """Feed ``layer`` only the first two of the data's lengths (through a Slice, ``cut``): the
    problems the layer then has."""
    g.add_layer("Slice", "cut", {"axis": 0, "slice_point": 2})
    g.connect("data", "lengths", "cut", "x")
    g.connect("cut", "a", layer, "lengths")
    return g.info(layer).problems
