"""The ONNX export, checked in ONNX Runtime against the torch net."""
import json

import numpy as np
import pytest
import torch

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from designer.cli import main  # noqa: E402
from designer.exchange.onnx_export.export import build_model  # noqa: E402
from designer.exchange.source import ModelSource, load_source  # noqa: E402
from designer.graph import Graph  # noqa: E402
from designer.graph.project import Project  # noqa: E402
from designer.training.trained.generate import generate_text, load_trained  # noqa: E402
from tests.exchange.conftest import link_all, shapes_project, text_project  # noqa: E402

TOL = 1e-4


def session(model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # the state inputs' zero defaults are overridable on purpose
    return ort.InferenceSession(model.SerializeToString(), opts)


def torch_run(net, feeds, state=None):
    with torch.no_grad():
        out = net(feeds, state, want=(net.logits_source()[0],))
    return out.blobs[net.logits_source()].numpy(), out.state


@pytest.mark.parametrize("kind, engine, unrolled", [
    ("LSTM", "CUDNN", False), ("LSTM", "CAFFE", False), ("LSTM", "CUDNN", True),
    ("LSTM", "CAFFE", True), ("GRU", "CUDNN", False), ("GRU", "CAFFE", True),
    ("RNN", "CAFFE", False), ("RNN", "CUDNN", True), ("LSTMSimple", None, False),
    ("LSTMSimple", None, True),
])
def test_onnx_runtime_matches_torch(tmp_path, kind, engine, unrolled):
    project = text_project(tmp_path, kind, engine or "CUDNN",
                           extra={"nonlinearity": "relu"} if kind == "RNN" else None)
    source = ModelSource(project, tmp_path / "tiny.json")
    model, notes = build_model(source, unrolled=unrolled, steps=7)
    sess = session(model)
    net = source.build_net()
    tokens = torch.randint(0, project.graph.dims["V"], (7, 3), generator=torch.Generator()
                           .manual_seed(0))
    ref, state = torch_run(net, {"data.data": tokens})
    got = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {"tokens": tokens.numpy()})))
    assert np.abs(got["logits"] - ref).max() < TOL
    assert np.abs(got["rnn1.hT"] - state["rnn1"][0].numpy()).max() < TOL
    if kind in ("LSTM", "LSTMSimple"):
        assert np.abs(got["rnn1.cT"] - state["rnn1"][1].numpy()).max() < TOL


def test_dynamic_t_and_n_and_the_state_carried_from_ht_to_h0(tmp_path):
    project = text_project(tmp_path, "LSTM", "CAFFE")
    source = ModelSource(project, tmp_path / "tiny.json")
    model, _ = build_model(source)
    sess = session(model)
    ins = {i.name: i.shape for i in sess.get_inputs() + sess.get_overridable_initializers()}
    assert ins == {"tokens": ["T", "N"], "rnn1.h0": [2, "N", 16], "rnn1.c0": [2, "N", 16]}
    assert [i.name for i in model.graph.input] == ["tokens", "rnn1.h0", "rnn1.c0"]
    assert [o.shape for o in sess.get_outputs()][0] == ["T", "N", project.graph.dims["V"]]
    net = source.build_net()
    tokens = torch.randint(0, project.graph.dims["V"], (9, 5))
    whole, _ = torch_run(net, {"data.data": tokens})
    first = sess.run(None, {"tokens": tokens[:4].numpy()})
    second = sess.run(None, {"tokens": tokens[4:].numpy(), "rnn1.h0": first[1],
                             "rnn1.c0": first[2]})
    assert np.abs(np.concatenate([first[0], second[0]]) - whole).max() < TOL


def test_a_batch_first_net_on_real_values(tmp_path):
    """MNIST-style rows: data (N, 28, 28), an LSTM over the rows, a classifier over all."""
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"batch_size": 3, "batch_first": True})
    g.add_layer("LSTM", "lstm1", {"num_output": 6, "batch_first": True, "engine": "CAFFE"})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10, "axis": 1})
    g.add_layer("Softmax", "prob", {"axis": 1})
    link_all(g, [("data.data", "lstm1.x"), ("lstm1.y", "ip1.x"), ("ip1.y", "prob.x")])
    source = ModelSource(Project(g, "rows"), tmp_path / "rows.json")
    sess = session(build_model(source)[0])
    assert [o.name for o in sess.get_outputs()] == ["prob", "lstm1.hT", "lstm1.cT"]
    x = torch.rand(4, 28, 28)
    net = source.build_net()
    with torch.no_grad():
        ref = net({"data.data": x}).blobs[("prob", 0)].numpy()
    assert np.abs(sess.run(None, {"data": x.numpy()})[0] - ref).max() < TOL


def test_caffes_shape_layers_match_torch(tmp_path):
    source = ModelSource(shapes_project(tmp_path), tmp_path / "shapes.json")
    sess = session(build_model(source)[0])
    x = torch.rand(28, 2, 28)  # the InnerProduct over axis 0 fixes T and N here
    with torch.no_grad():
        ref = source.build_net()({"data.data": x}).blobs[("prob", 0)].numpy()
    assert np.abs(sess.run(None, {"data": x.numpy()})[0] - ref).max() < TOL


def test_greedy_decoding_in_onnx_runtime_writes_what_generate_writes(trained_run, tmp_path,
                                                                     capsys):
    out = tmp_path / "model.onnx"
    assert main(["export", str(trained_run), "--format", "onnx", "--out", str(out)]) == 0
    import onnx
    model = onnx.load(str(out))
    meta = {p.key: p.value for p in model.metadata_props}
    vocab = json.loads(meta["vocab"])
    assert json.loads(meta["data"])["kind"] == "text"
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(out), opts)
    prime, n = "Before we", 60
    ids = np.array([[vocab.index(c)] for c in prime], dtype=np.int64)
    feeds, text = {"tokens": ids}, ""
    for _ in range(n):
        logits, h, c = sess.run(["logits", "rnn1.hT", "rnn1.cT"], feeds)
        best = int(logits[-1, 0].argmax())
        text += vocab[best]
        feeds = {"tokens": np.array([[best]], dtype=np.int64), "rnn1.h0": h, "rnn1.c0": c}
    expected = generate_text(load_trained(trained_run), prime, n, temperature=0.0)
    assert text == expected
    capsys.readouterr()
    assert main(["generate", str(trained_run), "--prime", prime, "-n", str(n),
                 "--temperature", "0"]) == 0
    assert capsys.readouterr().out == prime + text + "\n"


def test_a_project_exports_with_fresh_weights_and_says_so(tmp_path, capsys):
    text_project(tmp_path)
    assert main(["export", str(tmp_path / "tiny.json"), "--format", "onnx", "--out",
                 str(tmp_path / "m.onnx")]) == 0
    assert "freshly initialised" in capsys.readouterr().out
    assert load_source(tmp_path / "tiny.json").trained is False


def test_a_folder_that_is_no_run_is_refused_in_one_sentence(tmp_path, capsys):
    assert main(["export", str(tmp_path), "--format", "onnx", "--out",
                 str(tmp_path / "m.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert str(tmp_path) in err and "\n" not in err and not (tmp_path / "m.onnx").exists()


@pytest.mark.parametrize("unrolled", [False, True])
def test_a_layer_type_no_cell_writes_is_one_sentence_naming_the_layer(tmp_path, monkeypatch,
                                                                      unrolled):
    from designer.exchange.onnx_export import recurrent as onnx_recurrent
    from designer.exchange.errors import ExchangeError
    onnx_recurrent.FUSED.known()  # the cells' writers in, then one taken out
    monkeypatch.delitem(onnx_recurrent.FUSED, "GRU")
    monkeypatch.delitem(onnx_recurrent.NODES, "GRU_UNIT")
    source = ModelSource(text_project(tmp_path, "GRU", "CAFFE", levels=1), tmp_path)
    with pytest.raises(ExchangeError) as e:
        build_model(source, unrolled, 12)
    assert str(e.value) == ("rnn1: a GRU_UNIT unrolled node has no ONNX form yet" if unrolled
                            else "rnn1: a GRU layer has no ONNX form yet")
