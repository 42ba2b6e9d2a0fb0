"""The standalone PyTorch export: a readable model.py that needs no rnn-designer."""
import ast
import importlib.util
import subprocess
import sys

import pytest
import torch

from designer.cli import main
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from tests.exchange.conftest import shapes_project, text_project


def load_module(folder, name):
    spec = importlib.util.spec_from_file_location(name, folder / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def imported_packages(folder) -> set:
    tree = ast.parse((folder / "model.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("kind, engine", [("LSTM", "CUDNN"), ("LSTM", "CAFFE"),
                                          ("GRU", "CAFFE"), ("RNN", "CUDNN"),
                                          ("LSTMSimple", None)])
def test_model_py_matches_our_net(tmp_path, kind, engine):
    project = text_project(tmp_path, kind, engine or "CUDNN")
    source = ModelSource(project, tmp_path / "tiny.json")
    out = tmp_path / "export"
    export_pytorch(source, out)
    assert imported_packages(out) <= {"pathlib", "torch", "safetensors"}
    code = (out / "model.py").read_text()
    for name in ("embed", "rnn1", "drop", "ip1"):
        assert f"# {name} (" in code  # every layer named as drawn
    model = load_module(out, f"exported_{kind}_{engine}").load(out)
    net = source.build_net()
    tokens = torch.randint(0, project.graph.dims["V"], (9, 3))
    with torch.no_grad():
        ours = net({"data.data": tokens}, want=("ip1",))
        theirs, state = model(tokens)
        # the state carries on: two halves give the whole
        first, s1 = model(tokens[:4])
        second, _ = model(tokens[4:], s1)
    assert (theirs - ours.blobs[("ip1", 0)]).abs().max() < 1e-6
    assert (torch.cat([first, second]) - theirs).abs().max() < 1e-6


def test_python_model_py_runs_on_its_own(tmp_path, capsys):
    text_project(tmp_path)
    out = tmp_path / "export"
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "pytorch", "--out",
                 str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["model.py", "weights.safetensors"]
    run = subprocess.run([sys.executable, "model.py"], cwd=out, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "output (5, 2, " in run.stdout and "sum" in run.stdout


def test_a_run_exports_its_vocabulary_and_writes_greedily(trained_run, tmp_path):
    out = tmp_path / "export"
    assert main(["export", str(trained_run), "--format", "pytorch", "--out", str(out)]) == 0
    from designer.training.trained.generate import load_trained
    module = load_module(out, "exported_run")
    assert module.VOCAB == load_trained(trained_run).vocab


def test_shape_layers_and_helpers_come_along(tmp_path):
    """Caffe's Reshape, a Slice and Concat, a learned Scale, Eltwise and Softmax."""
    source = ModelSource(shapes_project(tmp_path), tmp_path / "shapes.json")
    export_pytorch(source, tmp_path / "export")
    model = load_module(tmp_path / "export", "exported_shapes").load(tmp_path / "export")
    x = torch.rand(28, 2, 28)
    with torch.no_grad():
        ours = source.build_net()({"data.data": x}).blobs[("prob", 0)]
        theirs, _ = model(x)
    assert (theirs - ours).abs().max() < 1e-6


def test_a_layer_type_no_writer_knows_is_one_sentence_naming_the_layer(tmp_path, monkeypatch):
    from designer.exchange.errors import ExchangeError
    from designer.exchange.pytorch_export.layers import LAYERS
    LAYERS.known()  # the cells' writers in, then one taken out
    monkeypatch.delitem(LAYERS, "GRU")
    source = ModelSource(text_project(tmp_path, "GRU", "CAFFE", levels=1), tmp_path)
    with pytest.raises(ExchangeError, match="^rnn1: a GRU layer has no PyTorch form yet$"):
        export_pytorch(source, tmp_path / "export")
    assert not (tmp_path / "export").exists()
