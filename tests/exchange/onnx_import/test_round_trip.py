"""Our own ONNX exports come back as the same project with the same weights."""
import json
from pathlib import Path

import pytest
import torch

pytest.importorskip("onnx")

from designer.cli import main  # noqa: E402
from designer.engines.net.build import Net  # noqa: E402
from designer.exchange.errors import ExchangeError  # noqa: E402
from designer.exchange.onnx_export.export import TRAINING_ONLY, build_model  # noqa: E402
from designer.exchange.onnx_import import import_onnx  # noqa: E402
from designer.exchange.source import load_source  # noqa: E402

PROJECTS = sorted((Path(__file__).parents[3] / "projects").glob("*.json"))
SMALL = {"num_output": 6}


def _design(project) -> dict:
    d = project.to_dict()["graph"]
    for layer in d["layers"]:
        layer.pop("pos", None)
    return d


def _feeds(net, graph, steps: int = 5) -> dict:
    """Random data of the data layers' shapes (T: ``steps``; the lengths: T, then T - 2)."""
    gen = torch.Generator().manual_seed(1)
    feeds = {}
    for name in net.sources:
        t = graph.output(name, "data")
        shape = [d if isinstance(d, int) else steps if i == 0 else 2
                 for i, d in enumerate(t.shape)]
        if graph.layer(name).type != "MnistRows":
            shape[0] = steps
        if t.dtype == "index":
            feeds[f"{name}.data"] = torch.randint(0, int(graph.dims["V"]), shape, generator=gen)
        else:
            feeds[f"{name}.data"] = torch.randn(*shape, generator=gen)
        if "lengths" in net.ports[name]:
            lengths = torch.full((shape[1],), steps)
            lengths[1::2] = steps - 2
            feeds[f"{name}.lengths"] = lengths
    return feeds


@pytest.mark.parametrize("path", PROJECTS, ids=lambda p: p.stem)
def test_every_example_comes_back_the_same_with_the_same_outputs(tmp_path, path):
    source = load_source(path)
    g = source.project.graph
    for layer in g.layers():  # small nets keep the test fast
        if layer.type in ("LSTM", "GRU", "RNN", "Embed", "Conv1D"):
            g.set_param(layer.name, "num_output", 6)
    try:
        model, _ = build_model(source)
    except ExchangeError:
        missing = [str(p) for p in g.problems() if "was not found" in str(p)]
        if missing:  # its data is elsewhere: the net's sizes are not known
            pytest.skip(missing[0])
        raise
    (tmp_path / "m.onnx").write_bytes(model.SerializeToString())
    result = import_onnx(tmp_path / "m.onnx", project_dir=path.parent)
    assert _design(result.project) == _design(source.project)
    ours = source.build_net()
    theirs = Net(result.project.graph)
    theirs.load_state_dict(result.weights)
    theirs.eval()
    feeds = _feeds(ours, g)
    ends = tuple(n for n in ours.order if n not in ours.sources
                 and g.layer(n).type not in TRAINING_ONLY)
    with torch.no_grad():
        a = ours(feeds, None, want=ends).blobs
        b = theirs(feeds, None, want=ends).blobs
    compared = 0
    for key, value in a.items():
        if value is not None and b.get(key) is not None and value.is_floating_point():
            assert (value - b[key]).abs().max().item() < 1e-5, key
            compared += 1
    assert compared >= 2
    assert {k: v.shape for k, v in result.weights.items()} == {
        k: v.shape for k, v in ours.state_dict().items()}


def test_a_run_comes_back_with_its_vocabulary_as_a_run_that_generates_and_resumes(
        tmp_path, trained_run):
    out = tmp_path / "m.onnx"
    assert main(["export", str(trained_run), "--format", "onnx", "--out", str(out)]) == 0
    project_dir = trained_run.parent
    assert main(["import", str(out), "--out", str(project_dir / "back.json"), "--run",
                 str(tmp_path / "run")]) == 0
    source, back = load_source(trained_run), load_source(tmp_path / "run")
    assert _design(back.project) == _design(source.project)
    assert back.meta["data"]["vocab"] == source.meta["data"]["vocab"]
    for key, value in source.weights.items():
        assert torch.equal(value, back.weights[key]), key
    assert main(["generate", str(tmp_path / "run"), "-n", "20", "--seed", "1",
                 "--temperature", "0"]) == 0
    assert main(["train", str(project_dir / "back.json"), "--resume", str(tmp_path / "run"),
                 "--steps", "2", "--quiet", "--device", "cpu"]) == 0
    assert json.loads((tmp_path / "run" / "last.json").read_text())["step"] == 2


def test_an_unrolled_export_comes_back_on_the_caffe_engine_with_the_same_outputs(
        tmp_path, trained_run):
    source = load_source(trained_run)
    model, _ = build_model(source, unrolled=True, steps=6)
    (tmp_path / "u.onnx").write_bytes(model.SerializeToString())
    result = import_onnx(tmp_path / "u.onnx", project_dir=trained_run.parent)
    assert result.project.graph.layer("rnn1").get("engine") == "CAFFE"
    assert any("CAFFE engine" in n for n in result.notes)
    ours, theirs = source.build_net(), Net(result.project.graph)
    theirs.load_state_dict(result.weights)
    tokens = torch.randint(0, int(source.project.graph.dims["V"]), (6, 3))
    with torch.no_grad():
        a = ours({"data.data": tokens}, None, want=("ip1",)).blobs[("ip1", 0)]
        b = theirs.eval()({"data.data": tokens}, None, want=("ip1",)).blobs[("ip1", 0)]
    assert (a - b).abs().max().item() < 1e-5
