"""An imported model reads its inputs with the scaling it was trained with: a model from
elsewhere none (unless ``--normalize`` asks for it), an rnn-designer export the statistics
its run kept; ``import`` says which."""
import csv
import io
import warnings

import numpy as np
import pytest
import torch
from torch import nn

ort = pytest.importorskip("onnxruntime")

from designer.cli import main  # noqa: E402
from designer.training.trained.predict_sequences import predict_file  # noqa: E402

from tests.exchange.conftest import classes_project  # noqa: E402


class LstmClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm, self.fc = nn.LSTM(3, 8, batch_first=True), nn.Linear(8, 3)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h[-1])


def far_from_zero(folder, name="far.ts") -> tuple:
    """Twelve labelled sequences whose values are about 5 give or take 10 (a .ts file)."""
    rng = np.random.default_rng(0)
    series = [rng.normal(size=(6, 3)) * 10 + 5 for _ in range(12)]
    lines = ["@problemName far", "@dimensions 3", "@equalLength true",
             "@classLabel true a b c", "@data"]
    for i, s in enumerate(series):
        channels = [",".join(f"{v:.4f}" for v in channel) for channel in s.T]
        lines.append(":".join(channels + ["abc"[i % 3]]))
    (folder / name).write_text("\n".join(lines) + "\n")
    return folder / name, np.stack(series).round(4).astype(np.float32)


def exported(folder):
    torch.manual_seed(0)
    path = folder / "lstm.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(LstmClassifier().eval(), (torch.randn(2, 6, 3),), str(path),
                          dynamo=False, opset_version=17, input_names=["data"],
                          output_names=["out"], dynamic_axes={"data": {0: "batch", 1: "time"}})
    return path


def predicted(run, data, which: str = "last") -> np.ndarray:
    """Every class's probability for each sequence of ``data``, in the file's order, from the
    run's ``which`` checkpoint (an exported run's: ``best``, the model export writes)."""
    text, _ = predict_file(run, data, which=which)
    rows = list(csv.DictReader(io.StringIO(text)))
    rows.sort(key=lambda r: int(r["series"]))
    return np.array([[float(r[k]) for k in r if k.startswith("p_")] for r in rows])


def test_a_foreign_model_reads_its_inputs_as_they_are(tmp_path, capsys):
    model = exported(tmp_path)
    data, x = far_from_zero(tmp_path)
    out, run = tmp_path / "lstm.json", tmp_path / "run"
    assert main(["import", str(model), "--out", str(out), "--data", str(data), "--run",
                 str(run)]) == 0
    logits = ort.InferenceSession(str(model)).run(None, {"data": x})[0]
    want = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    assert np.abs(predicted(run, data) - want).max() < 1e-4
    assert "scaling: the data layer reads the inputs as they are" in capsys.readouterr().out


def test_normalize_asks_for_the_inputs_to_be_z_scored(tmp_path, capsys):
    model = exported(tmp_path)
    data, _ = far_from_zero(tmp_path)
    out = tmp_path / "lstm.json"
    assert main(["import", str(model), "--out", str(out), "--data", str(data),
                 "--normalize"]) == 0
    assert "scaling: the data layer z-scores the inputs" in capsys.readouterr().out
    assert '"normalize": true' in out.read_text()


def test_an_own_export_keeps_the_statistics_its_run_trained_with(tmp_path, capsys):
    classes_project(tmp_path)
    trained, model = tmp_path / "trained", tmp_path / "classes.onnx"
    assert main(["train", str(tmp_path / "classes.json"), "--out", str(trained), "--steps",
                 "3", "--quiet", "--device", "cpu"]) == 0
    assert main(["export", str(trained), "--format", "onnx", "--out", str(model)]) == 0
    rows = (tmp_path / "seqs.csv").read_text().splitlines()
    shifted = [rows[0]] + [",".join(cells[:2] + [f"{float(v) * 10 + 5:.2f}" for v in cells[2:4]]
                                    + cells[4:]) for cells in (r.split(",") for r in rows[1:])]
    (tmp_path / "shifted.csv").write_text("\n".join(shifted) + "\n")
    original = predicted(trained, tmp_path / "seqs.csv", "best")
    for data in ("shifted.csv", "seqs.csv"):  # the run's statistics, whichever file feeds it
        run = tmp_path / f"run-{data}"
        assert main(["import", str(model), "--out", str(tmp_path / f"{data}.json"), "--data",
                     str(tmp_path / data), "--run", str(run)]) == 0
        assert np.abs(predicted(run, tmp_path / "seqs.csv") - original).max() < 1e-4
        assert "by the statistics the model was trained with" in capsys.readouterr().out


def test_an_own_export_reads_data_given_where_its_design_had_none(tmp_path):
    classes_project(tmp_path)
    trained, model = tmp_path / "trained", tmp_path / "classes.onnx"
    assert main(["train", str(tmp_path / "classes.json"), "--out", str(trained), "--steps",
                 "2", "--quiet", "--device", "cpu"]) == 0
    assert main(["export", str(trained), "--format", "onnx", "--out", str(model)]) == 0
    (tmp_path / "elsewhere").mkdir()
    data = (tmp_path / "seqs.csv").rename(tmp_path / "elsewhere" / "moved.csv")
    run = tmp_path / "run"
    assert main(["import", str(model), "--out", str(tmp_path / "back.json"), "--data",
                 str(data), "--run", str(run)]) == 0
    assert np.abs(predicted(run, data) - predicted(trained, data, "best")).max() < 1e-4
