"""The RG-LRU out of the designer: ONNX (Scan ops, or the unrolled units) run in ONNX Runtime,
the standalone model.py with its RGLRU, our own ONNX export imported back, prototxt read
back."""
import subprocess
import sys

import numpy as np
import pytest
import torch

from designer.cli import main
from designer.engines.net.build import Net
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from tests.exchange.conftest import classes_project, text_project
from tests.exchange.caffe.test_exporter import layers, links, round_trip
from tests.exchange.pytorch_export.test_code import imported_packages, load_module

DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: no output, the state as it came in


def ours(source, data=DATA, lengths=LENGTHS):
    net = source.build_net()
    feeds = {"data.data": data} if lengths is None else {"data.data": data,
                                                         "data.lengths": lengths}
    with torch.no_grad():
        out = net(feeds, want=("ip1",))
    return out.blobs[("ip1", 0)], out.state["rnn1"][0]


@pytest.mark.parametrize("engine, both, levels", [("SCAN", False, 1), ("SCAN", True, 2),
                                                  ("CAFFE", True, 1)])
@pytest.mark.parametrize("unrolled", [False, True])
def test_onnx_runtime_matches_torch_on_padded_sequences(tmp_path, engine, both, levels,
                                                        unrolled):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = ModelSource(classes_project(tmp_path, "RGLRU", engine, both, levels), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    ops = {n.op_type for n in model.graph.node}
    assert ("Scan" in ops) != unrolled and "Softplus" in ops
    assert f"rnn1.Lambda_l{levels - 1}" in {i.name for i in model.graph.initializer}
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert ins["rnn1.h0"] == [levels * (2 if both else 1), "N", 5]
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})))
    ref, h = ours(source)
    assert np.abs(got["logits"] - ref.numpy()).max() < TOL
    assert np.abs(got["rnn1.hT"] - h.numpy()).max() < TOL


def test_onnx_steps_on_from_the_state_it_gave_back(tmp_path):
    """T and N are dynamic: two halves, hT fed back as h0, give the whole sequence."""
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session, torch_run
    project = text_project(tmp_path, "RGLRU", "SCAN")
    source = ModelSource(project, tmp_path / "tiny.json")
    sess = session(build_model(source)[0])
    tokens = torch.randint(0, project.graph.dims["V"], (9, 5),
                           generator=torch.Generator().manual_seed(2))
    whole, _ = torch_run(source.build_net(), {"data.data": tokens})
    first = sess.run(None, {"tokens": tokens[:4].numpy()})
    second = sess.run(None, {"tokens": tokens[4:].numpy(), "rnn1.h0": first[1]})
    assert np.abs(np.concatenate([first[0], second[0]]) - whole).max() < TOL


@pytest.mark.parametrize("unrolled", [False, True])
def test_our_onnx_export_imports_back_with_the_same_predictions(tmp_path, unrolled):
    """The design travels in the file and every weight, Lambda as the layer holds it, is read
    back from the initializers."""
    pytest.importorskip("onnx")
    from designer.exchange.onnx_export.export import build_model
    from designer.exchange.onnx_import import import_onnx
    source = ModelSource(classes_project(tmp_path, "RGLRU", "SCAN", True, 2), tmp_path)
    model, _ = build_model(source, unrolled, steps=7)
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    result = import_onnx(tmp_path / "m.onnx", project_dir=tmp_path)
    layer = result.project.graph.layer("rnn1")
    assert layer.type == "RGLRU" and layer.get("engine") == "SCAN"
    theirs = Net(result.project.graph)
    theirs.load_state_dict(result.weights)
    for key, value in source.build_net().state_dict().items():
        assert torch.equal(result.weights[key], value), key
    feeds = {"data.data": DATA, "data.lengths": LENGTHS}
    with torch.no_grad():
        b = theirs.eval()(feeds, want=("ip1",)).blobs[("ip1", 0)]
    assert torch.equal(ours(source)[0], b)


def test_the_import_command_reads_our_export(tmp_path):
    project = text_project(tmp_path, "RGLRU", "SCAN")
    out = tmp_path / "m.onnx"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "onnx", "--out",
                 str(out)]) == 0
    assert main(["import", str(out), "--out", str(tmp_path / "back.json")]) == 0
    from designer.graph import project as P
    back = P.load(tmp_path / "back.json")
    assert back.graph.layer("rnn1").type == "RGLRU"
    assert back.graph.total_params() == project.graph.total_params()


@pytest.mark.parametrize("engine, both, levels", [("SCAN", True, 2), ("CAFFE", False, 1)])
def test_model_py_matches_our_net_on_padded_sequences(tmp_path, engine, both, levels):
    source = ModelSource(classes_project(tmp_path, "RGLRU", engine, both, levels), tmp_path)
    out = tmp_path / "export"
    export_pytorch(source, out)
    assert imported_packages(out) <= {"pathlib", "torch", "safetensors"}
    assert "self.rnn1 = RGLRU(" in (out / "model.py").read_text()
    model = load_module(out, f"rglru_{engine}_{both}").load(out)
    with torch.no_grad():
        theirs, state = model(DATA, LENGTHS)
        whole, _ = model(DATA)  # without lengths every step counts
    ref, h = ours(source)
    assert (theirs - ref).abs().max() < 1e-6 and (state["rnn1"] - h).abs().max() < 1e-6
    ref_whole, _ = ours(source, lengths=None)
    assert (whole - ref_whole).abs().max() < 1e-6


def test_model_py_runs_on_its_own_and_carries_its_state(tmp_path):
    project = text_project(tmp_path, "RGLRU", "SCAN")
    out = tmp_path / "export"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "pytorch", "--out",
                 str(out)]) == 0
    run = subprocess.run([sys.executable, "model.py"], cwd=out, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "output (5, 2, " in run.stdout
    model = load_module(out, "rglru_text").load(out)
    tokens = torch.randint(0, project.graph.dims["V"], (9, 3))
    with torch.no_grad():
        whole, _ = model(tokens)
        first, s1 = model(tokens[:4])
        second, _ = model(tokens[4:], s1)
    assert (torch.cat([first, second]) - whole).abs().max() < 1e-6


def test_prototxt_names_the_layer_and_reads_it_back(tmp_path):
    from designer.exchange.caffe.exporter import export_messages
    project = text_project(tmp_path, "RGLRU", "CAFFE")
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()
    notes = export_messages(project)[2]
    assert "rnn1: Caffe and MyCaffe have no RGLRU layer; the file names it RGLRU, which " \
        "rnn-designer reads back" in notes
