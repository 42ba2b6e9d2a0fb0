"""GELU, the Gaussian error linear unit (x times the normal CDF of x), through the designer: its
spec and memory, its torch module (the exact erf form), ONNX (run in ONNX Runtime; opset 17
has no Gelu, so it is written with Erf), model.py, prototxt read back, and a model from
elsewhere whose ONNX holds a Gelu."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from designer.exchange.source import ModelSource
from designer.graph import Graph, registry
from designer.graph.memory_layers import Context, rule
from designer.graph.project import Project
from tests.exchange.conftest import TEXT, link_all


def gelu_project(folder) -> Project:
    """CharText -> Embed 8 -> InnerProduct 16 -> GELU -> InnerProduct V -> loss."""
    (folder / "corpus.txt").write_text(TEXT)
    g = Graph(project_dir=folder)
    g.add_layer("CharText", "data", {"corpus": "corpus.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.add_layer("InnerProduct", "ip0", {"num_output": 16, "axis": 2})
    g.add_layer("GELU", "act")
    g.add_layer("InnerProduct", "ip1", {"num_output": "V", "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "embed.x"), ("embed.y", "ip0.x"), ("ip0.y", "act.x"),
                 ("act.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")])
    p = Project(g, "gelu", "", {"type": "Adam", "base_lr": 0.01, "max_steps": 4},
                {"device": "cpu"})
    p.save(folder / "gelu.json")
    return p


def test_the_palette_offers_it_among_the_activations():
    spec = registry.get("GELU")
    assert spec in registry.by_category()["Activation"] and spec.caffe_type == "GELU"
    assert "x * Φ(x)" in spec.tooltip() and "erf" in spec.tooltip()
    ctx = Context("GELU", {}, [((5, 4, 16), "float")], [((5, 4, 16), "float")], "cpu", "", 4)
    assert rule(ctx, 0).inputs == [0]  # its backward reads its input


def test_its_module_is_the_exact_gelu(tmp_path):
    net = ModelSource(gelu_project(tmp_path), tmp_path / "gelu.json").build_net()
    x = torch.linspace(-4, 4, 81)
    want = x * 0.5 * (1 + torch.erf(x / math.sqrt(2)))
    assert torch.allclose(net.layers["act"](x), want, atol=1e-6)
    assert torch.equal(net.layers["act"](x), F.gelu(x))


def test_onnx_runtime_and_model_py_match_the_net(tmp_path):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from designer.exchange.pytorch_export.code import export_pytorch
    from tests.exchange.onnx_export.test_export import TOL, session, torch_run
    from tests.exchange.pytorch_export.test_code import load_module
    project = gelu_project(tmp_path)
    source = ModelSource(project, tmp_path / "gelu.json")
    model, _ = build_model(source)
    assert "Erf" in {n.op_type for n in model.graph.node}
    tokens = torch.randint(0, project.graph.dims["V"], (7, 3),
                           generator=torch.Generator().manual_seed(0))
    ref, _ = torch_run(source.build_net(), {"data.data": tokens})
    got = session(model).run(None, {"tokens": tokens.numpy()})[0]
    assert np.abs(got - ref).max() < TOL
    export_pytorch(source, tmp_path / "export")
    assert "nn.functional.gelu(" in (tmp_path / "export" / "model.py").read_text()
    theirs = load_module(tmp_path / "export", "gelu_model").load(tmp_path / "export")
    with torch.no_grad():
        out, _ = theirs(tokens)
    assert np.abs(out.numpy() - ref).max() < 1e-6


def test_prototxt_writes_mycaffes_gelu_and_reads_it_back(tmp_path):
    from tests.exchange.caffe.test_exporter import layers, links, round_trip
    project = gelu_project(tmp_path)
    back = round_trip(project, tmp_path)
    assert layers(back) == layers(project) and links(back) == links(project)
    assert 'type: "GELU"' in (tmp_path / "train_val.prototxt").read_text()


class GeluModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.hidden = torch.nn.Embedding(20, 8), torch.nn.Linear(8, 12)
        self.out = torch.nn.Linear(12, 20)

    def forward(self, x):
        return self.out(F.gelu(self.hidden(self.embed(x))))


def test_a_foreign_models_gelu_becomes_a_gelu_layer(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    from designer.engines.net.build import Net
    from designer.exchange.onnx_import import import_onnx
    from tests.exchange.onnx_import.test_foreign import export
    torch.manual_seed(0)
    x = torch.randint(0, 20, (7, 3))
    path = export(GeluModel(), (x,), tmp_path / "gelu.onnx", ["tokens"],
                  {"tokens": {0: "T", 1: "N"}}, opset=20)
    import onnx
    assert "Gelu" in {n.op_type for n in onnx.load(str(path)).graph.node}
    result = import_onnx(path, project_dir=tmp_path)
    types = [layer.type for layer in result.project.graph.layers()]
    assert types == ["CharText", "Embed", "InnerProduct", "GELU", "InnerProduct",
                     "SoftmaxWithLoss"]
    net = Net(result.project.graph)
    net.load_state_dict(result.weights)
    layer, port, axes = result.outputs["out"]
    with torch.no_grad():
        got = net.eval()({"data.data": x}, None, want=(layer,)).blobs[(layer, 0)].numpy()
    ref = ort.InferenceSession(str(path)).run(None, {"tokens": x.numpy()})[0]
    assert np.abs(got - ref).max() < 1e-4
