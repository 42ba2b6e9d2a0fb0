"""BatchNorm and LayerNorm through the three exports: ONNX (run in ONNX Runtime), the standalone
model.py, and prototxt (imported back exactly, and as Caffe and MyCaffe would write it)."""
import importlib.util

import numpy as np
import pytest
import torch

from designer.engines.net.build import Net
from designer.exchange.caffe.exporter import export_messages
from designer.exchange.caffe.importer import import_prototxt
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.exchange.caffe.textformat import dumps
from designer.graph import Graph
from designer.graph.project import Project
from tests.engines.net.test_norm_layers import LENGTHS, norm_net, padded, sequences_file
from tests.exchange.caffe.test_exporter import layers, links, round_trip

DATA = padded(7)


def trained_looking(graph: Graph) -> dict:
    """A state dict whose norms hold scales, shifts and running statistics far from their
    starting values (fresh ones would make both norms almost the identity)."""
    torch.manual_seed(3)
    net = Net(graph)
    with torch.no_grad():
        for name, t in net.state_dict().items():
            if name.endswith(("running_mean", "weight", "bias")) and "lstm" not in name:
                t.copy_(torch.rand_like(t) * 2 - 0.5)
            elif name.endswith("running_var"):
                t.copy_(torch.rand_like(t) + 0.2)
    return net.state_dict()


def norms_source(folder, engine="CUDNN", affine=True) -> ModelSource:
    g = norm_net(sequences_file(folder), engine)
    for name in ("bn", "ln", "bn_last"):
        g.set_param(name, "affine", affine)
    project = Project(g, "norms")
    project.save(folder / "norms.json")
    return ModelSource(project, folder / "norms.json", weights=trained_looking(g))


def batch_first_source(folder) -> ModelSource:
    """MNIST rows read batch-first: (N, 28, 28) -> LSTM -> BatchNorm -> LayerNorm ->
    SequenceLast -> InnerProduct, all batch-first."""
    g = Graph(project_dir=folder)
    g.add_layer("MnistRows", "data", {"batch_size": 2, "batch_first": True})
    g.add_layer("LSTM", "lstm", {"num_output": 6, "batch_first": True})
    g.add_layer("BatchNorm", "bn", {"batch_first": True})
    g.add_layer("LayerNorm", "ln", {"affine": False})
    g.add_layer("SequenceLast", "last", {"batch_first": True})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10})
    for link in (("data", "data", "lstm", "x"), ("lstm", "y", "bn", "x"), ("bn", "y", "ln", "x"),
                 ("ln", "y", "last", "x"), ("last", "y", "ip1", "x")):
        g.connect(*link)
    assert g.errors() == []
    return ModelSource(Project(g, "rows"), folder / "rows.json", weights=trained_looking(g))


def ours(source, *inputs, train=False):
    net = source.build_net()
    net.train(train)
    feeds = {"data.data": inputs[0]}
    if len(inputs) > 1:
        feeds["data.lengths"] = inputs[1]
    with torch.no_grad():
        out = net(feeds, want=("ip",) if "ip" in net.layers else ("ip1",))
    return out.blobs[("ip", 0) if "ip" in net.layers else ("ip1", 0)]


@pytest.mark.parametrize("engine", ["CUDNN", "CAFFE"])
@pytest.mark.parametrize("affine", [True, False])
def test_onnx_runtime_matches_torch(tmp_path, engine, affine):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = norms_source(tmp_path, engine, affine)
    model, _ = build_model(source)
    ops = {n.op_type for n in model.graph.node}
    assert {"BatchNormalization", "LayerNormalization", "Transpose"} <= ops
    sess = session(model)
    got = sess.run(["logits"], {"data": DATA.numpy(), "lengths": LENGTHS.numpy()})[0]
    assert np.abs(got - ours(source, DATA, LENGTHS).numpy()).max() < TOL
    more = padded(8, steps=9)  # T and N stay dynamic
    got = sess.run(["logits"], {"data": more.numpy(), "lengths": (LENGTHS + 3).numpy()})[0]
    assert np.abs(got - ours(source, more, LENGTHS + 3).numpy()).max() < TOL


def test_onnx_runtime_matches_torch_batch_first(tmp_path):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    source = batch_first_source(tmp_path)
    model, _ = build_model(source)
    rows = torch.rand(3, 28, 28, generator=torch.Generator().manual_seed(2))
    got = session(model).run(None, {"data": rows.numpy()})[0]
    assert np.abs(got - ours(source, rows).numpy()).max() < TOL


def load_model(folder, name):
    spec = importlib.util.spec_from_file_location(name, folder / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load(folder)


@pytest.mark.parametrize("affine", [True, False])
def test_model_py_matches_our_net(tmp_path, affine):
    source = norms_source(tmp_path, "CAFFE", affine)
    export_pytorch(source, tmp_path / "export")
    code = (tmp_path / "export" / "model.py").read_text()
    assert "nn.BatchNorm1d(5" in code and "nn.LayerNorm(5" in code and "def batch_norm(" in code
    model = load_model(tmp_path / "export", f"norms_{affine}")
    model.eval()
    with torch.no_grad():
        theirs, _ = model(DATA, LENGTHS)
    assert (theirs - ours(source, DATA, LENGTHS)).abs().max() < 1e-6
    model.train()  # training: the masked statistics, as our net computes them
    with torch.no_grad():
        theirs, _ = model(DATA, LENGTHS)
    assert (theirs - ours(source, DATA, LENGTHS, train=True)).abs().max() < 1e-5


def test_prototxt_round_trips_exactly(tmp_path):
    project = norms_source(tmp_path).project
    project.graph.set_param("bn", "momentum", 0.3)
    project.graph.set_param("ln", "eps", 1e-6)
    project.graph.set_param("bn_last", "affine", False)
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.total_params() == project.graph.total_params()


def test_the_file_reads_as_caffe_and_mycaffe_write_it(tmp_path):
    project = norms_source(tmp_path).project
    project.graph.set_param("bn", "momentum", 0.3)
    project.graph.set_param("ln", "eps", 1e-6)
    net, _, notes = export_messages(project)
    text = dumps(net)
    assert 'type: "BatchNorm"' in text and 'type: "LayerNorm"' in text
    assert "moving_average_fraction: 0.7" in text and "scale_bias: True" in text
    assert "epsilon: 1e-06" in text
    assert any("bn: Caffe and MyCaffe normalise axis 1" in n for n in notes)
    # what Caffe and MyCaffe see of the two norms: no #@ lines (the data layer keeps its own)
    kept = "".join(line for line in text.splitlines(True) if "#@" not in line or
                   "BatchNorm" not in line and "LayerNorm" not in line)
    (tmp_path / "plain.prototxt").write_text(kept)
    result = import_prototxt(tmp_path / "plain.prototxt", None, None, tmp_path)
    g = result.project.graph
    assert g.layer("bn").params == {"momentum": 0.3, "eps": 1e-5, "affine": True}
    assert g.layer("bn_last").params == {"momentum": 0.1, "eps": 1e-5, "affine": True}
    assert g.layer("ln").params == {"eps": 1e-6, "affine": False}  # MyCaffe's has no affine
    assert links(result.project) == links(project)
    assert g.errors() == []
