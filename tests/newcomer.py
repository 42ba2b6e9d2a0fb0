"""The mistakes newcomers make most, each drawn as a small net.

Every entry says which layer the designer should name and which fix it should offer. The graph
tests check the words and that the fix mends the net; the training tests check that each net,
broken, is refused in one sentence, and, mended, trains.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from designer.graph import Graph
from designer.graph.project import Project
from tests.nets import link_all

CORPUS = "The quick brown fox jumps over the lazy dog.\nPack my box with five dozen jugs!\n" * 40


@dataclass(frozen=True)
class Mistake:
    name: str
    build: Callable[[Path, Path], Graph]  # (text corpus, MNIST folder) -> graph
    layer: str            # where the designer should tell it
    fix: str              # words the message and the fix share
    severity: str = "error"
    needs_mnist: bool = False


def write_corpus(folder: Path) -> Path:
    path = folder / "corpus.txt"
    path.write_text(CORPUS)
    return path


def char_net(corpus: Path, *, embed: dict | None = None, ip: dict | None = None,
             loss: dict | None = None, lstm: dict | None = None, wire: bool = True) -> Graph:
    """The Char-RNN, small: data -> embed -> lstm -> ip -> loss."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": str(corpus), "seq_len": 8, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, **(embed or {})})
    g.add_layer("LSTM", "lstm", {"num_output": 16, **(lstm or {})})
    g.add_layer("InnerProduct", "ip", {"num_output": "V", "axis": 2, **(ip or {})})
    g.add_layer("SoftmaxWithLoss", "loss", loss or {})
    if wire:
        link_all(g, [("data.data", "embed.x"), ("embed.y", "lstm.x"), ("lstm.y", "ip.x"),
                     ("ip.y", "loss.logits"), ("data.label", "loss.label")])
    return g


def mnist_net(folder: Path, *, data: dict | None = None, lstm: dict | None = None,
              acc: dict | None = None) -> Graph:
    """MNIST rows: data -> lstm -> ip (over all steps) -> loss and accuracy."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": str(folder), "batch_size": 8, "holdout": 100,
                                      **(data or {})})
    g.add_layer("LSTM", "lstm", {"num_output": 16, "batch_first": True, **(lstm or {})})
    g.add_layer("InnerProduct", "ip", {"num_output": 10, "axis": 1})
    g.add_layer("SoftmaxWithLoss", "loss", {"axis": 1})
    g.add_layer("Accuracy", "acc", {"axis": 1, **(acc or {})})
    g.connect("data", "data", "lstm", "x")
    g.connect("lstm", "y", "ip", "x")
    for m in ("loss", "acc"):
        g.connect("ip", "y", m, "logits")
        g.connect("data", "label", m, "label")
    return g


def _ids_into_lstm(corpus, mnist):
    g = char_net(corpus, wire=False)
    g.remove_layer("embed")
    link_all(g, [("data.data", "lstm.x"), ("lstm.y", "ip.x"), ("ip.y", "loss.logits"),
                 ("data.label", "loss.label")])
    return g


def _label_from_cont(corpus, mnist):
    g = char_net(corpus)
    g.disconnect(g.link_into("loss", "label"))
    g.connect("data", "cont", "loss", "label")
    return g


def _labels_are_inputs(corpus, mnist):
    g = char_net(corpus)
    g.disconnect(g.link_into("loss", "label"))
    g.connect("data", "data", "loss", "label")
    return g


def _two_widths(corpus, mnist):
    g = char_net(corpus)
    g.add_layer("LSTM", "lstm2", {"num_output": 32})
    g.add_layer("Eltwise", "sum")
    g.connect("embed", "y", "lstm2", "x")
    g.disconnect(g.link_into("ip", "x"))
    g.connect("lstm", "y", "sum", "a")
    g.connect("lstm2", "y", "sum", "b")
    g.connect("sum", "y", "ip", "x")
    return g


def _softmax_before_loss(corpus, mnist):
    g = char_net(corpus)
    g.add_layer("Softmax", "prob")
    g.disconnect(g.link_into("loss", "logits"))
    g.connect("ip", "y", "prob", "x")
    g.connect("prob", "y", "loss", "logits")
    return g


def _flat_branch_added_back(corpus, mnist):
    """A Caffe-style branch over rows (T*N, H) summed with the (T, N, H) it came from."""
    g = char_net(corpus)
    g.add_layer("Reshape", "rows", {"shape": [-1, 16], "axis": 0, "num_axes": -1})
    g.add_layer("InnerProduct", "mix", {"num_output": 16, "axis": 1})
    g.add_layer("Eltwise", "skip")
    g.disconnect(g.link_into("ip", "x"))
    g.connect("lstm", "y", "rows", "x")
    g.connect("rows", "y", "mix", "x")
    g.connect("lstm", "y", "skip", "a")
    g.connect("mix", "y", "skip", "b")
    g.connect("skip", "y", "ip", "x")
    return g


MISTAKES = (
    Mistake("caffe_default_axis", lambda c, m: char_net(c, ip={"axis": 1}),
            "ip", "set axis to 2"),
    Mistake("too_few_outputs", lambda c, m: char_net(c, ip={"num_output": 10}),
            "ip", "set ip's num_output to V"),
    Mistake("embed_too_small", lambda c, m: char_net(c, embed={"input_dim": 10}),
            "embed", "set embed's input_dim to V"),
    Mistake("ids_without_embed", _ids_into_lstm, "lstm",
            "insert an Embed layer between data and lstm"),
    Mistake("batch_first_mismatch", lambda c, m: mnist_net(m, lstm={"batch_first": False}),
            "lstm", "set batch_first to true", needs_mnist=True),
    Mistake("label_from_cont", _label_from_cont, "loss",
            "connect data.label to loss.label instead of data.cont"),
    Mistake("class_axis_is_batch", lambda c, m: char_net(c, loss={"axis": 1}),
            "loss", "set axis to -1"),
    Mistake("different_widths_summed", _two_widths, "lstm2",
            "set lstm2's num_output to 16"),
    Mistake("flat_branch_added_back", _flat_branch_added_back, "skip",
            "insert a Reshape layer between mix and skip (shape [8, 4, 16])"),
    Mistake("top_k_above_classes", lambda c, m: mnist_net(m, acc={"top_k": 20}),
            "acc", "set acc's top_k to", needs_mnist=True),
    Mistake("softmax_before_loss", _softmax_before_loss, "prob",
            "remove prob and connect ip straight to loss", severity="warning"),
    Mistake("labels_are_the_input", _labels_are_inputs, "loss",
            "connect data.label to loss.label instead of data.data", severity="warning"),
)


def as_project(graph: Graph, name: str, steps: int = 1) -> Project:
    """A project around ``graph`` that trains ``steps`` steps on the CPU and checks nothing."""
    p = Project(graph=graph, name=name)
    p.solver = {"max_steps": steps}
    p.training = {"device": "cpu", "eval_interval": 1000, "checkpoint_interval": 1000,
                  "sample_interval": 0, "log_interval": 1}
    return p
