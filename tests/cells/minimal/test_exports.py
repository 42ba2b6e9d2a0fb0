"""MinGRU and MinLSTM out of the designer: ONNX (Scan ops, or the unrolled units) run in ONNX
Runtime, the standalone model.py with its MinRNN, and prototxt read back."""
import subprocess
import sys

import numpy as np
import pytest
import torch

from designer.cli import main
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from tests.exchange.conftest import classes_project, text_project
from tests.exchange.caffe.test_exporter import layers, links, round_trip
from tests.exchange.pytorch_export.test_code import imported_packages, load_module

KINDS = ["MinGRU", "MinLSTM"]
DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: no output, the state as it came in


def ours(source, data=DATA, lengths=LENGTHS):
    net = source.build_net()
    feeds = {"data.data": data} if lengths is None else {"data.data": data,
                                                         "data.lengths": lengths}
    with torch.no_grad():
        out = net(feeds, want=("ip1",))
    return out.blobs[("ip1", 0)], out.state["rnn1"][0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine, both, levels", [("SCAN", False, 1), ("SCAN", True, 2),
                                                  ("CAFFE", True, 1), ("CAFFE", False, 2)])
@pytest.mark.parametrize("unrolled", [False, True])
def test_onnx_runtime_matches_torch_on_padded_sequences(tmp_path, kind, engine, both, levels,
                                                        unrolled):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = {n.op_type for n in model.graph.node}
    assert ("Scan" in ops) != unrolled
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert ins["rnn1.h0"] == [levels * (2 if both else 1), "N", 5]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, h = ours(source)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    assert np.abs(got["rnn1.hT"] - h.numpy()).max() < TOL


@pytest.mark.parametrize("kind", KINDS)
def test_onnx_steps_on_from_the_state_it_gave_back(tmp_path, kind):
    """T and N are dynamic: two halves, hT fed back as h0, give the whole sequence."""
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session, torch_run
    project = text_project(tmp_path, kind, "SCAN")
    source = ModelSource(project, tmp_path / "tiny.json")
    model, _ = build_model(source)
    sess = session(model)
    tokens = torch.randint(0, project.graph.dims["V"], (9, 5),
                           generator=torch.Generator().manual_seed(2))
    whole, _ = torch_run(source.build_net(), {"data.data": tokens})
    first = sess.run(None, {"tokens": tokens[:4].numpy()})
    second = sess.run(None, {"tokens": tokens[4:].numpy(), "rnn1.h0": first[1]})
    assert np.abs(np.concatenate([first[0], second[0]]) - whole).max() < TOL


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("engine, both, levels", [("SCAN", True, 2), ("CAFFE", False, 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, kind, engine, both, levels):
    source = ModelSource(classes_project(tmp_path, kind, engine, both, levels), tmp_path)
    out = tmp_path / "export"
    export_pytorch(source, out)
    assert imported_packages(out) <= {"pathlib", "torch", "safetensors"}
    assert "self.rnn1 = MinRNN(" in (out / "model.py").read_text()
    model = load_module(out, f"min_{kind}_{engine}_{both}").load(out)
    with torch.no_grad():
        theirs, state = model(DATA, LENGTHS)
        whole, _ = model(DATA)  # without lengths every step counts
    ref, h = ours(source)
    assert (theirs - ref).abs().max() < 1e-6 and (state["rnn1"] - h).abs().max() < 1e-6
    ref_whole, _ = ours(source, lengths=None)
    assert (whole - ref_whole).abs().max() < 1e-6


@pytest.mark.parametrize("kind", KINDS)
def test_model_py_runs_on_its_own_and_carries_its_state(tmp_path, kind):
    project = text_project(tmp_path, kind, "SCAN")
    out = tmp_path / "export"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "pytorch", "--out",
                 str(out)]) == 0
    run = subprocess.run([sys.executable, "model.py"], cwd=out, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "output (5, 2, " in run.stdout
    model = load_module(out, f"min_text_{kind}").load(out)
    tokens = torch.randint(0, project.graph.dims["V"], (9, 3))
    with torch.no_grad():
        whole, _ = model(tokens)
        first, s1 = model(tokens[:4])
        second, _ = model(tokens[4:], s1)
    assert (torch.cat([first, second]) - whole).abs().max() < 1e-6


@pytest.mark.parametrize("kind", KINDS)
def test_prototxt_names_the_layer_and_reads_it_back(tmp_path, kind):
    from designer.exchange.caffe.exporter import export_messages
    project = text_project(tmp_path, kind, "CAFFE")
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()
    notes = export_messages(project)[2]
    assert f"rnn1: Caffe and MyCaffe have no {kind} layer; the file names it {kind}, which " \
        "rnn-designer reads back" in notes
