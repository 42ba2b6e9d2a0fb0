"""More foreign models from torch.onnx.export (TorchScript path): a bidirectional LSTM over
packed sequences and a Conv1d + LSTM classifier, exported with the data's shapes; each
imports, matches ONNX Runtime within 1e-4 and trains a few steps on both engines."""
import warnings

import numpy as np
import pytest
import torch
from torch import nn

ort = pytest.importorskip("onnxruntime")

from designer.cli import main  # noqa: E402
from designer.engines.net.build import Net  # noqa: E402
from designer.exchange.onnx_import import import_onnx  # noqa: E402
from designer.exchange.onnx_import.save import save_import  # noqa: E402

LENGTHS = torch.tensor([5, 4, 3, 2])  # pack_padded_sequence wants them longest first


class BiPacked(nn.Module):
    """A tagger: each step of each padded sequence, read both ways, scored by a Linear."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(12, 4)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.fc(out)


class ConvLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 5, 3, padding=1)
        self.lstm, self.fc = nn.LSTM(5, 7, batch_first=True), nn.Linear(7, 4)

    def forward(self, x):  # (N, T, C), as the data is read
        y = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        return self.fc(self.lstm(y)[0][:, -1])


def sequences(folder):
    """Twelve labelled sequences of five steps and three features, as the models read."""
    rows = ["series_id,step,a,b,c,label"] + [
        f"{s},{t},{s * 0.1:.2f},{t * 0.2:.2f},{(s + t) % 3 * 0.5:.2f},{'wxyz'[s % 4]}"
        for s in range(12) for t in range(5)]
    (folder / "seqs.csv").write_text("\n".join(rows) + "\n")
    return folder / "seqs.csv"


def export(model, args, path, names):
    torch.manual_seed(0)
    axes = {"data": {0: "batch", 1: "time"}, "lengths": {0: "batch"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), args, str(path), dynamo=False, opset_version=17,
                          input_names=names, output_names=["out"],
                          dynamic_axes={n: axes[n] for n in names})
    return path


def outputs(result, feeds):
    net = Net(result.project.graph)
    net.load_state_dict(result.weights)
    layer, _, axes = result.outputs["out"]
    with torch.no_grad():
        got = net.eval()(feeds, None, want=(layer,)).blobs[(layer, 0)].numpy()
    return got.transpose(1, 0, 2) if axes == "NTC" else got


def trains(result, folder):
    out, run = folder / "imported.json", folder / "run"
    save_import(result, out, run, "model.onnx")
    for engine, steps in (("cudnn", "2"), ("caffe", "4")):
        assert main(["train", str(out), "--resume", str(run), "--steps", steps, "--engine",
                     engine, "--quiet", "--device", "cpu"]) == 0


def test_a_bidirectional_lstm_over_packed_sequences(tmp_path):
    torch.manual_seed(0)
    path = export(BiPacked(), (torch.randn(4, 5, 3), LENGTHS), tmp_path / "bi.onnx",
                  ["data", "lengths"])
    result = import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)
    g = result.project.graph
    assert [la.type for la in g.layers()] == ["SequenceClasses", "LSTM", "InnerProduct"]
    assert g.layer("lstm1").get("bidirectional") is True
    assert any(k.src_port == "lengths" and k.dst == "lstm1" for k in g.links())
    x = torch.randn(4, 5, 3)
    got = outputs(result, {"data.data": x.transpose(0, 1), "data.lengths": LENGTHS})
    ref = ort.InferenceSession(str(path)).run(None, {"data": x.numpy(),
                                                     "lengths": LENGTHS.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
    assert "no loss layer" in result.notes[-1]  # a tagger's output, a classifier's data:
    g.add_layer("SequencePool", "pool", {"method": "mean"})  # the user draws the rest
    g.add_layer("SoftmaxWithLoss", "loss")
    for src, sp, dst, dp in (("ip1", "y", "pool", "x"), ("data", "lengths", "pool", "lengths"),
                             ("pool", "y", "loss", "logits"), ("data", "label", "loss", "label")):
        g.connect(src, sp, dst, dp)
    trains(result, tmp_path)


def test_a_conv1d_feeding_an_lstm(tmp_path):
    torch.manual_seed(0)
    path = export(ConvLstm(), (torch.randn(4, 5, 3),), tmp_path / "conv.onnx", ["data"])
    result = import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)
    g = result.project.graph
    assert [la.type for la in g.layers()] == ["SequenceClasses", "Conv1D", "ReLU", "LSTM",
                                              "SequenceLast", "InnerProduct", "SoftmaxWithLoss"]
    assert g.layer("conv1").get("padding") == "same"
    x = torch.randn(4, 5, 3)
    got = outputs(result, {"data.data": x.transpose(0, 1)})
    ref = ort.InferenceSession(str(path)).run(None, {"data": x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
    trains(result, tmp_path)


class NormPool(nn.Module):
    """Conv1d, ReLU and BatchNorm1d (after the ReLU, so the exporter cannot fold it into the
    convolution's weights), a GRU, the mean and the max over time side by side,
    LayerNorm and the classifier's log-probabilities: the normalisations and the pooling
    over time that exporters write as BatchNormalization, ReduceMean, ReduceMax,
    LayerNormalization and LogSoftmax."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv1d(3, 6, 3, padding=1), nn.BatchNorm1d(6)
        self.gru = nn.GRU(6, 5, batch_first=True)
        self.norm, self.fc = nn.LayerNorm(10), nn.Linear(10, 4)

    def forward(self, x):  # (N, T, C)
        y = self.bn(torch.relu(self.conv(x.transpose(1, 2)))).transpose(1, 2)
        h = self.gru(y)[0]
        pooled = torch.cat([h.mean(dim=1), h.amax(dim=1)], dim=1)
        return torch.log_softmax(self.fc(self.norm(pooled)), dim=1)


def test_batch_and_layer_norm_and_the_mean_and_max_over_time(tmp_path):
    torch.manual_seed(0)
    model = NormPool()
    with torch.no_grad():  # statistics of a trained BatchNorm, not its initial 0 and 1
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    path = export(model, (torch.randn(4, 5, 3),), tmp_path / "norm.onnx", ["data"])
    result = import_onnx(path, str(sequences(tmp_path)), project_dir=tmp_path)
    types = [la.type for la in result.project.graph.layers()]
    assert types == ["SequenceClasses", "Conv1D", "ReLU", "BatchNorm", "GRU", "SequencePool",
                     "SequencePool", "Concat", "LayerNorm", "InnerProduct", "SoftmaxWithLoss"]
    assert sorted(la.get("method") for la in result.project.graph.layers()
                  if la.type == "SequencePool") == ["max", "mean"]
    x = torch.randn(4, 5, 3)
    scores = outputs_2d(result, {"data.data": x.transpose(0, 1)})
    ref = ort.InferenceSession(str(path)).run(None, {"data": x.numpy()})[0]
    # the LogSoftmax is the one inside SoftmaxWithLoss: the net gives the scores before it
    assert any("LogSoftmax" in note and "scores before it" in note for note in result.notes)
    got = torch.log_softmax(torch.from_numpy(scores), dim=1).numpy()
    assert np.abs(got - ref).max() < 1e-4
    trains(result, tmp_path)


def outputs_2d(result, feeds):
    net = Net(result.project.graph)
    net.load_state_dict(result.weights)
    layer, _, _ = result.outputs["out"]
    with torch.no_grad():
        return net.eval()(feeds, None, want=(layer,)).blobs[(layer, 0)].numpy()
