"""A convolution over time ahead of the recurrent layer, through the three exports: ONNX (run in
ONNX Runtime, the Transposes between time-major and (N, C, T) around a 1-D Conv), the standalone
model.py, and prototxt (imported back, with and without our #@ lines)."""
from pathlib import Path

import numpy as np
import pytest
import torch

from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.graph.project import Project
from tests.exchange.conftest import link_all, sequences_graph
from tests.exchange.pytorch_export.test_code import load_module
from tests.exchange.caffe.test_exporter import layers, links, round_trip

DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: no output at all
CASES = {  # name: (Conv1D parameters, whether the layers read the lengths, LSTM engine)
    "causal": ({"padding": "causal", "dilation": 2}, True, "CUDNN"),
    "same_groups": ({"kernel_size": 5, "groups": 2}, True, "CAFFE"),
    "valid_stride": ({"padding": "valid", "stride": 2, "bias_term": False}, False, "CUDNN"),
}


def conv_project(folder: Path, case: str) -> Project:
    """Labelled sequences of different lengths: SequenceClasses -> Conv1D -> LSTM ->
    SequenceLast -> InnerProduct -> loss."""
    params, lengths, engine = CASES[case]
    g = sequences_graph(folder)
    g.add_layer("Conv1D", "conv", {"num_output": 6, **params})
    g.add_layer("LSTM", "rnn1", {"num_output": 5, "engine": engine})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip1", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "conv.x"), ("conv.y", "rnn1.x"), ("rnn1.y", "last.x"),
                 ("last.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    if lengths:
        link_all(g, [("data.lengths", "conv.lengths"), ("data.lengths", "rnn1.lengths"),
                     ("data.lengths", "last.lengths")])
    assert g.errors() == []
    return Project(g, "conv")


def ours(source, lengths=LENGTHS):
    with torch.no_grad():
        out = source.build_net()({"data.data": DATA, "data.lengths": lengths}, want=("ip1",))
    return out.blobs[("ip1", 0)]


@pytest.mark.parametrize("case, unrolled", [(c, False) for c in CASES] + [("causal", True)])
def test_onnx_runtime_matches_torch(tmp_path, case, unrolled):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = ModelSource(conv_project(tmp_path, case), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = [n.op_type for n in model.graph.node]
    assert "Conv" in ops and ops.count("Transpose") >= 2
    sess = session(model)
    feeds = {"data": DATA.numpy()}
    if CASES[case][1]:
        feeds["lengths"] = LENGTHS.numpy()
    got = sess.run(["logits"], feeds)[0]
    ref = ours(source, LENGTHS if CASES[case][1] else None)
    assert np.abs(got - ref.numpy()).max() < TOL


@pytest.mark.parametrize("case", CASES)
def test_model_py_matches_our_net(tmp_path, case):
    source = ModelSource(conv_project(tmp_path, case), tmp_path)
    export_pytorch(source, tmp_path / "export")
    code = (tmp_path / "export" / "model.py").read_text()
    assert "nn.Conv1d(2, 6" in code and "def conv_over_time" in code
    model = load_module(tmp_path / "export", f"conv_{case}").load(tmp_path / "export")
    with torch.no_grad():
        theirs = model(DATA, LENGTHS)[0] if CASES[case][1] else model(DATA)[0]
    ref = ours(source, LENGTHS if CASES[case][1] else None)
    assert (theirs - ref).abs().max() < 1e-6


@pytest.mark.parametrize("case", CASES)
def test_prototxt_round_trips(tmp_path, case):
    project = conv_project(tmp_path, case)
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()
    text = (tmp_path / "train_val.prototxt").read_text()
    assert 'type: "Convolution1D"' in text and "convolution_param" in text


@pytest.mark.parametrize("case", ["same_groups", "valid_stride"])
def test_caffes_convolution_param_alone_gives_the_same_layer(tmp_path, case):
    from designer.exchange.caffe.importer import import_prototxt
    project = conv_project(tmp_path, case)
    round_trip(project, tmp_path)
    raw = (tmp_path / "train_val.prototxt").read_text()
    kept = "".join(line for line in raw.splitlines(True)
                   if "#@" not in line or "Conv1D" not in line)
    (tmp_path / "train_val.prototxt").write_text(kept)
    back = import_prototxt(tmp_path / "train_val.prototxt", None, None, tmp_path).project
    want = project.graph.layer("conv").effective_params()
    assert back.graph.layer("conv").effective_params() == want
    assert back.graph.errors() == []


def test_a_causal_padding_cannot_be_said_in_caffes_pad(tmp_path):
    from designer.exchange.caffe.exporter import export_messages
    _, _, notes = export_messages(conv_project(tmp_path, "causal"))
    assert any("adds 4 steps before and 0 after" in n for n in notes)
