"""Shared pieces of the exchange tests: tiny nets, a trained run, the fixture files."""
from __future__ import annotations

from pathlib import Path

import pytest

from designer.graph import Graph
from designer.graph.project import Project
from tests.nets import link_all  # noqa: F401 - the exchange tests import it from here

DATA = Path(__file__).parent / "data"
TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"
        * 30)


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("RNN_DESIGNER_OFFLINE", "1")


def text_project(folder: Path, kind: str = "LSTM", engine: str = "CUDNN", levels: int = 2,
                 extra: dict | None = None, name: str = "tiny") -> Project:
    """A Char-RNN in miniature: CharText -> Embed -> recurrent -> Dropout -> IP -> loss."""
    (folder / "corpus.txt").write_text(TEXT)
    g = Graph(project_dir=folder)
    g.add_layer("CharText", "data", {"corpus": "corpus.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8})
    params = {"num_output": 16, **(extra or {})}
    if kind != "LSTMSimple":
        params.update({"num_layers": levels, "engine": engine})
    g.add_layer(kind, "rnn1", params)
    g.add_layer("Dropout", "drop", {"dropout_ratio": 0.2})
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "rnn1.x"), ("data.cont", "rnn1.cont"),
                 ("rnn1.y", "drop.x"), ("drop.y", "ip1.x"), ("ip1.y", "loss.logits"),
                 ("data.label", "loss.label")])
    p = Project(g, name, "", {"type": "Adam", "base_lr": 0.01, "max_steps": 40},
                {"log_interval": 5, "eval_interval": 10, "eval_batches": 2,
                 "checkpoint_interval": 10, "sample_interval": 0, "device": "cpu"})
    p.save(folder / f"{name}.json")
    return p


@pytest.fixture(scope="session")
def trained_run(tmp_path_factory) -> Path:
    """A run folder: the tiny LSTM trained for 25 steps on the CPU."""
    from designer.training.run.loop import RunOptions, train
    folder = tmp_path_factory.mktemp("run")
    project = text_project(folder, levels=2)
    project.graph.set_param("drop", "dropout_ratio", 0.0)
    list(train(project, RunOptions(out=folder / "run", steps=25)))
    return folder / "run"


def shapes_project(folder: Path) -> Project:
    """Rows through an LSTM, then Caffe's shape layers: Slice, Concat, a learned Scale, Eltwise
    MAX, Reshape, an InnerProduct over all steps and a Softmax."""
    g = Graph(project_dir=folder)
    g.add_layer("MnistRows", "data", {"batch_size": 2, "batch_first": False})
    g.add_layer("LSTM", "lstm", {"num_output": 6, "engine": "CAFFE"})
    g.add_layer("Slice", "cut", {"axis": 2, "slice_point": 2})
    g.add_layer("Concat", "join", {"axis": 2})
    g.add_layer("Scale", "scale", {"axis": 2, "bias_term": True})
    g.add_layer("Eltwise", "max", {"operation": "MAX"})
    g.add_layer("Reshape", "flat", {"shape": [0, -1], "axis": 1})
    g.add_layer("InnerProduct", "ip", {"num_output": 4, "axis": 0})
    g.add_layer("Softmax", "prob", {"axis": -1})
    link_all(g, [("data.data", "lstm.x"), ("lstm.y", "cut.x"), ("cut.b", "join.a"),
                 ("cut.a", "join.b"), ("join.y", "scale.x"), ("scale.y", "max.a"),
                 ("lstm.y", "max.b"), ("max.y", "flat.x"), ("flat.y", "ip.x"),
                 ("ip.y", "prob.x")])
    assert g.errors() == []
    return Project(g, "shapes")


def sequences_graph(folder: Path, lengths=(7, 3, 5, 1, 6, 2), batch_first: bool = False):
    """A graph that reads labelled sequences of ``lengths`` steps, two values a step (a
    long-format CSV written to ``folder``) with SequenceClasses as ``data``; batch-first, digits
    read row by row (MnistRows, ``(N, T, F)``: no lengths) instead."""
    rows = ["series_id,step,a,b,label"]
    for s, n in enumerate(lengths):
        rows += [f"{s},{t},{(s * 7 + t) % 5 * 0.3:.2f},{(t * 3 - s) * 0.1:.2f},"
                 f"{'ab'[s % 2]}" for t in range(n)]
    (folder / "seqs.csv").write_text("\n".join(rows) + "\n")
    g = Graph(project_dir=folder)
    if batch_first:
        g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4,
                                          "batch_first": True})
    else:
        g.add_layer("SequenceClasses", "data", {"file": "seqs.csv", "batch_size": 4})
    return g


def classes_project(folder: Path, kind: str = "LSTM", engine: str = "CUDNN",
                    bidirectional: bool = False, levels: int = 1,
                    loss: str = "SoftmaxWithLoss", extra: dict | None = None) -> Project:
    """Labelled sequences of different lengths (a long-format CSV): SequenceClasses ->
    recurrent (reading the lengths) -> SequenceLast (by the lengths) -> InnerProduct -> loss."""
    g = sequences_graph(folder)
    g.add_layer(kind, "rnn1", {"num_output": 5, "engine": engine, "num_layers": levels,
                               "bidirectional": bidirectional, **(extra or {})})
    g.add_layer("SequenceLast", "last", {"bidirectional": bidirectional})
    g.add_layer("InnerProduct", "ip1", {"num_output": "K"})
    g.add_layer(loss, "loss")
    link_all(g, [("data.data", "rnn1.x"), ("data.lengths", "rnn1.lengths"),
                 ("rnn1.y", "last.x"), ("data.lengths", "last.lengths"), ("last.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    assert g.errors() == []
    p = Project(g, "classes")
    p.save(folder / "classes.json")
    return p


def series_project(folder: Path, loss: str = "EuclideanLoss") -> Project:
    """A forecaster: TimeSeries -> LSTM -> SequenceLast -> InnerProduct (P) -> a regression
    loss."""
    rows = ["week,co2,temp"] + [f"{i},{300 + i * 0.1 + (i % 7) * 0.5:.3f},{(i % 11) * 0.4:.2f}"
                                for i in range(120)]
    (folder / "series.csv").write_text("\n".join(rows) + "\n")
    g = Graph(project_dir=folder)
    g.add_layer("TimeSeries", "data", {"file": "series.csv", "target": "co2", "seq_len": 8,
                                       "horizon": 3, "batch_size": 4})
    g.add_layer("LSTM", "lstm1", {"num_output": 6})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip1", {"num_output": "P"})
    g.add_layer(loss, "loss")
    link_all(g, [("data.data", "lstm1.x"), ("lstm1.y", "last.x"), ("last.y", "ip1.x"),
                 ("ip1.y", "loss.pred"), ("data.label", "loss.label")])
    assert g.errors() == []
    p = Project(g, "forecast", "", {"type": "Adam", "base_lr": 0.01, "max_steps": 4},
                {"log_interval": 2, "eval_interval": 2, "eval_batches": 1,
                 "checkpoint_interval": 2, "sample_interval": 0, "device": "cpu"})
    p.save(folder / "forecast.json")
    return p


def lstm_classifier_onnx(features=3, hidden=4, classes=4, weight_features=None):
    """A hand-made ONNX classifier (an onnx ``ModelProto``): float sequences (T, N,
    ``features``) -> LSTM -> its last state -> Gemm to ``classes`` scores. ``weight_features``:
    the input size the LSTM's weights are made for (default ``features``)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        return numpy_helper.from_array((rng.normal(size=shape) * 0.3).astype(np.float32), name)
    inits = [weight("W", 1, 4 * hidden, weight_features or features),
             weight("R", 1, 4 * hidden, hidden), weight("B", 1, 8 * hidden),
             weight("fc.weight", classes, hidden), weight("fc.bias", classes),
             numpy_helper.from_array(np.array([0], np.int64), "first")]
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "h"], hidden_size=hidden,
                              name="lstm"),
             helper.make_node("Squeeze", ["h", "first"], ["last"], name="squeeze"),
             helper.make_node("Gemm", ["last", "fc.weight", "fc.bias"], ["out"], transB=1,
                              name="fc")]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                      ["T", "N", features])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", classes])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def labelled_sequences(folder: Path) -> Path:
    """Twelve labelled sequences of five steps and three features, four classes (a CSV)."""
    rows = ["series_id,step,a,b,c,label"] + [
        f"{s},{t},{s * 0.1:.2f},{t * 0.2:.2f},{(s + t) % 3 * 0.5:.2f},{'wxyz'[s % 4]}"
        for s in range(12) for t in range(5)]
    (folder / "seqs.csv").write_text("\n".join(rows) + "\n")
    return folder / "seqs.csv"
