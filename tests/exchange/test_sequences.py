"""Forecasters and classifiers of padded sequences through the three exports: ONNX (run in ONNX
Runtime), the standalone model.py, and prototxt (imported back)."""
import json

import numpy as np
import pytest
import torch

from designer.cli import main
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from tests.exchange.conftest import classes_project, series_project
from tests.exchange.pytorch_export.test_code import load_module
from tests.exchange.caffe.test_exporter import layers, links, round_trip

CASES = [("LSTM", "CUDNN", False, 1), ("LSTM", "CAFFE", True, 1), ("LSTM", "CUDNN", True, 2),
         ("GRU", "CUDNN", True, 1), ("GRU", "CAFFE", False, 2), ("RNN", "CAFFE", True, 1),
         ("RNN", "CUDNN", True, 1)]
DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: no output, the state as it came in


def ours(source, data=DATA, lengths=LENGTHS):
    net = source.build_net()
    with torch.no_grad():
        out = net({"data.data": data, "data.lengths": lengths}, want=("ip1",))
    return out.blobs[("ip1", 0)], out.state["rnn1"]


@pytest.mark.parametrize("kind, engine, both, levels", CASES)
@pytest.mark.parametrize("unrolled", [False, True])
def test_onnx_runtime_matches_torch_on_padded_sequences(tmp_path, kind, engine, both, levels,
                                                        unrolled):
    ort = pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    sess = session(model)
    dirs = 2 if both else 1
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert ins["rnn1.h0"] == [levels * dirs, "N", 5] and ins["lengths"] == ["N"]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, state = ours(source)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    for i, suffix in enumerate(("hT", "cT")[:len(state)]):
        assert np.abs(got[f"rnn1.{suffix}"] - state[i].numpy()).max() < TOL
    assert ort is not None


@pytest.mark.parametrize("kind, engine, both, levels", CASES)
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, kind, engine, both, levels):
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    export_pytorch(source, tmp_path / "export")
    model = load_module(tmp_path / "export", f"seq_{kind}_{engine}_{both}_{levels}").load(
        tmp_path / "export")
    with torch.no_grad():
        theirs, state = model(DATA, LENGTHS)
        whole, _ = model(DATA)  # without lengths: every step counts, the last one is read
    ref, ref_state = ours(source)
    assert (theirs - ref).abs().max() < 1e-6
    h = state["rnn1"][0] if isinstance(state["rnn1"], tuple) else state["rnn1"]
    assert (h - ref_state[0]).abs().max() < 1e-6
    ref_whole, _ = ours(source, lengths=None)
    assert (whole - ref_whole).abs().max() < 1e-6


def test_a_trained_forecaster_exports_what_it_takes_to_read_its_output(tmp_path):
    pytest.importorskip("onnxruntime")
    import onnx
    from designer.training.run.loop import RunOptions, train
    from tests.exchange.onnx_export.test_export import TOL, session
    project = series_project(tmp_path)
    list(train(project, RunOptions(out=tmp_path / "run", steps=4)))
    out = tmp_path / "m.onnx"
    assert main(["export", str(tmp_path / "run"), "--format", "onnx", "--out", str(out)]) == 0
    model = onnx.load(str(out))
    meta = {p.key: p.value for p in model.metadata_props}
    kept = json.loads(meta["data"])
    assert json.loads(meta["inputs"]) == ["co2", "temp"] and json.loads(meta["targets"]) == \
        ["co2"]
    assert json.loads(meta["input_mean"]) == kept["stats"]["x_mean"]
    assert json.loads(meta["target_std"]) == kept["stats"]["y_std"]
    assert (meta["horizon"], meta["predict"], meta["seq_len"]) == ("3", "change", "8")
    assert "last value in the window" in meta["denormalise"]
    sess = session(model)
    assert [o.name for o in sess.get_outputs()][0] == "prediction"
    from designer.exchange.source import load_source
    source = load_source(tmp_path / "run")
    x = torch.rand(8, 5, 2)
    with torch.no_grad():
        ref = source.build_net()({"data.data": x}, want=("ip1",)).blobs[("ip1", 0)]
    assert np.abs(sess.run(None, {"data": x.numpy()})[0] - ref.numpy()).max() < TOL


def test_a_trained_classifier_names_its_classes(tmp_path):
    pytest.importorskip("onnxruntime")
    import onnx
    from designer.training.run.loop import RunOptions, train
    project = classes_project(tmp_path)
    project.solver, project.training = {"type": "Adam", "base_lr": 0.01, "max_steps": 2}, {
        "log_interval": 1, "eval_interval": 2, "eval_batches": 1, "checkpoint_interval": 2,
        "sample_interval": 0, "device": "cpu"}
    list(train(project, RunOptions(out=tmp_path / "run", steps=2)))
    out = tmp_path / "m.onnx"
    assert main(["export", str(tmp_path / "run"), "--format", "onnx", "--out", str(out)]) == 0
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert json.loads(meta["classes"]) == ["a", "b"]
    assert json.loads(meta["features"]) == ["a", "b"] and len(json.loads(meta["feature_std"])) == 2
    pt = tmp_path / "pt"
    assert main(["export", str(tmp_path / "run"), "--format", "pytorch", "--out", str(pt)]) == 0
    assert '"classes": ["a", "b"]' in (pt / "model.py").read_text()


@pytest.mark.parametrize("both", [False, True])
@pytest.mark.parametrize("loss", ["SoftmaxWithLoss", "EuclideanLoss", "L1Loss"])
def test_padded_sequences_and_the_regression_losses_round_trip_as_prototxt(tmp_path, both,
                                                                           loss):
    if loss == "SoftmaxWithLoss":
        project = classes_project(tmp_path, "GRU", "CUDNN", both)
    else:
        project = series_project(tmp_path, loss)
        if both:  # a bidirectional layer reading lengths, with no 'cont' before them
            g = project.graph
            g.set_param("lstm1", "bidirectional", True)
            g.set_param("last", "bidirectional", True)
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()


def test_caffes_euclidean_loss_and_mycaffes_mae_loss_import_without_our_lines(tmp_path):
    for loss, ours_ in (("EuclideanLoss", "EuclideanLoss"), ("L1Loss", "L1Loss")):
        project = series_project(tmp_path, loss)
        text = round_trip(project, tmp_path, strip=False)
        del text
        raw = (tmp_path / "train_val.prototxt").read_text()
        assert ('type: "MAELoss"' if loss == "L1Loss" else 'type: "EuclideanLoss"') in raw
        kept = "".join(line for line in raw.splitlines(True)
                       if "#@" not in line or "SequenceLast" in line or "TimeSeries" in line)
        (tmp_path / "train_val.prototxt").write_text(kept)
        from designer.exchange.caffe.importer import import_prototxt
        back = import_prototxt(tmp_path / "train_val.prototxt", None, None, tmp_path).project
        assert back.graph.layer("loss").type == ours_
        assert back.graph.errors() == []
