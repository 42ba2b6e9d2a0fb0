"""Models made by torch.onnx.export from plain nn.Module code import, match ONNX Runtime and
train; what cannot be read is refused in one sentence."""
import warnings

import numpy as np
import onnx
import pytest
import torch
from torch import nn

ort = pytest.importorskip("onnxruntime")

from designer.cli import main  # noqa: E402
from designer.engines.net.build import Net  # noqa: E402
from designer.exchange.errors import ExchangeError  # noqa: E402
from designer.exchange.onnx_import import import_onnx  # noqa: E402


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.lstm, self.out = nn.Embedding(20, 8), nn.LSTM(8, 12, 2), \
            nn.Linear(12, 20)

    def forward(self, x):
        return self.out(self.lstm(self.embed(x))[0])


class GruClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru, self.fc = nn.GRU(3, 10, batch_first=True), nn.Linear(10, 4)

    def forward(self, x):
        _, h = self.gru(x)
        return self.fc(h[-1])


def export(model, args, path, names, axes, opset=17):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), args, str(path), dynamo=False, opset_version=opset,
                          input_names=names, output_names=["out"], dynamic_axes=axes)
    return path


@pytest.mark.parametrize("opset", [14, 17])
def test_a_char_model_matches_onnx_runtime_and_trains(tmp_path, opset):
    torch.manual_seed(0)
    x = torch.randint(0, 20, (7, 3))
    path = export(CharModel(), (x,), tmp_path / "char.onnx", ["tokens"],
                  {"tokens": {0: "T", 1: "N"}}, opset)
    result = import_onnx(path, project_dir=tmp_path)
    types = [layer.type for layer in result.project.graph.layers()]
    assert types == ["CharText", "Embed", "LSTM", "LSTM", "InnerProduct", "SoftmaxWithLoss"]
    net = Net(result.project.graph)
    net.load_state_dict(result.weights)
    layer, port, axes = result.outputs["out"]
    with torch.no_grad():
        got = net.eval()({"data.data": x}, None, want=(layer,)).blobs[(layer, 0)].numpy()
    ref = ort.InferenceSession(str(path)).run(None, {"tokens": x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4


def test_a_gru_classifier_reads_its_last_state_and_trains_on_both_engines(tmp_path):
    x = torch.randn(2, 6, 3)
    path = export(GruClassifier(), (x,), tmp_path / "gru.onnx", ["data"],
                  {"data": {0: "batch", 1: "time"}})
    rows = ["series_id,step,a,b,c,label"] + [
        f"{s},{t},{s * 0.1:.2f},{t * 0.2:.2f},{(s + t) % 3 * 0.5:.2f},{'wxyz'[s % 4]}"
        for s in range(12) for t in range(5)]
    (tmp_path / "seqs.csv").write_text("\n".join(rows) + "\n")
    result = import_onnx(path, "seqs.csv", project_dir=tmp_path)
    g = result.project.graph
    assert [layer.type for layer in g.layers()] == ["SequenceClasses", "GRU", "SequenceLast",
                                                    "InnerProduct", "SoftmaxWithLoss"]
    net = Net(g)
    net.load_state_dict(result.weights)
    layer, _, _ = result.outputs["out"]
    with torch.no_grad():
        got = net.eval()({"data.data": x.transpose(0, 1)}, None, want=(layer,)).blobs[
            (layer, 0)].numpy()
    ref = ort.InferenceSession(str(path)).run(None, {"data": x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
    result.project.save(tmp_path / "gru.json")
    out = tmp_path / "imported.json"
    assert main(["import", str(path), "--out", str(out), "--data",
                 str(tmp_path / "seqs.csv"), "--run", str(tmp_path / "run")]) == 0
    for engine in ("cudnn", "caffe"):
        assert main(["train", str(out), "--resume", str(tmp_path / "run"), "--steps",
                     "2" if engine == "cudnn" else "4", "--engine", engine, "--quiet",
                     "--device", "cpu"]) == 0


def test_every_unsupported_operator_is_named_at_once_and_nothing_is_written(tmp_path, capsys):
    class Odd(nn.Module):
        def forward(self, x):
            return torch.erf(x) + torch.cumsum(x, 0)
    path = export(Odd(), (torch.randn(4, 2, 3),), tmp_path / "odd.onnx", ["data"], {})
    out = tmp_path / "odd.json"
    assert main(["import", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "Erf at node" in err and "CumSum at node" in err and "2 operators" in err
    assert err.count("\n") == 0 and not out.exists()


def test_bad_files_get_one_sentence_each(tmp_path):
    (tmp_path / "text.onnx").write_text("hello, not a model\n")
    with pytest.raises(ExchangeError, match="is not an ONNX model"):
        import_onnx(tmp_path / "text.onnx")
    x = torch.randint(0, 20, (7, 3))
    whole = export(CharModel(), (x,), tmp_path / "char.onnx", ["tokens"], {}).read_bytes()
    (tmp_path / "cut.onnx").write_bytes(whole[:len(whole) // 2])
    with pytest.raises(ExchangeError, match="is not an ONNX model"):
        import_onnx(tmp_path / "cut.onnx")
    model = onnx.load(str(tmp_path / "char.onnx"))
    onnx.save(model, str(tmp_path / "ext.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="ext.data", size_threshold=0)
    (tmp_path / "ext.data").unlink()
    with pytest.raises(ExchangeError, match="external-data file ext.data, which is not"):
        import_onnx(tmp_path / "ext.onnx")
    model = onnx.load_from_string(whole)
    lstm = next(n for n in model.graph.node if n.op_type == "LSTM")
    for a in list(lstm.attribute):
        if a.name == "hidden_size":
            lstm.attribute.remove(a)
    onnx.save(model, str(tmp_path / "dyn.onnx"))
    with pytest.raises(ExchangeError, match="no hidden_size"):
        import_onnx(tmp_path / "dyn.onnx")
