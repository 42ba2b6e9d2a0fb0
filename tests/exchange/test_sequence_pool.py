"""SequencePool through the three exports: ONNX (run in ONNX Runtime, within 1e-4), the
standalone model.py (within 1e-6), and prototxt (imported back, with and without our #@
lines); each method, with and without the sequences' lengths."""

import numpy as np
import pytest
import torch

from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.graph.project import Project
from tests.exchange.conftest import link_all, sequences_graph
from tests.exchange.pytorch_export.test_code import load_module
from tests.exchange.caffe.test_exporter import layers, links, round_trip, written_by_hand

DATA = torch.rand(7, 4, 2, generator=torch.Generator().manual_seed(1))
LENGTHS = torch.tensor([7, 3, 0, 5])  # a 0: the pool gives zeros
CASES = [("mean", 0, False), ("max", 0, False), ("attention", 0, False),
         ("attention", 4, True), ("max", 0, True)]


def pool_project(folder, method="attention", units=0, batch_first=False,
                 lengths=True) -> Project:
    """Labelled sequences of different lengths (a long-format CSV): SequenceClasses -> LSTM
    (reading the lengths) -> SequencePool -> InnerProduct -> loss; batch-first, digits read
    row by row (MnistRows) instead, whole."""
    g = sequences_graph(folder, batch_first=batch_first)
    lengths = lengths and not batch_first  # digits row by row: every step counts
    g.add_layer("LSTM", "rnn1", {"num_output": 5, "batch_first": batch_first})
    pairs = [("data.data", "rnn1.x"), ("rnn1.y", "pool.x")]
    g.add_layer("SequencePool", "pool", {"method": method, "attention_units": units,
                                         "batch_first": batch_first})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10 if batch_first else "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    if lengths:
        pairs += [("data.lengths", "rnn1.lengths"), ("data.lengths", "pool.lengths")]
    link_all(g, pairs + [("pool.y", "ip1.x"), ("ip1.y", "loss.logits"),
                         ("data.label", "loss.label")])
    assert g.errors() == []
    p = Project(g, "pooled")
    p.save(folder / "pooled.json")
    return p


def source_with_scores(folder, *args, **kw) -> ModelSource:
    """The project with weights where the attention scores are not all zero."""
    source = ModelSource(pool_project(folder, *args, **kw), folder)
    net = source.build_net()
    with torch.no_grad():
        for p in net.layers["pool"].parameters():
            p.normal_()
    source.weights = net.state_dict()
    return source


def ours(source, data=DATA, lengths=LENGTHS):
    feeds = {"data.data": data} if lengths is None else {"data.data": data,
                                                         "data.lengths": lengths}
    with torch.no_grad():
        return source.build_net()(feeds, want=("ip1",)).blobs[("ip1", 0)]


@pytest.mark.parametrize("method, units, batch_first", CASES)
@pytest.mark.parametrize("lengths", [True, False])
def test_onnx_runtime_matches_torch(tmp_path, method, units, batch_first, lengths):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import TOL, session
    lengths = lengths and not batch_first  # the digits come whole
    source = source_with_scores(tmp_path, method, units, batch_first, lengths)
    model, _ = build_model(source)
    ops = {node.op_type for node in model.graph.node}
    if lengths:
        assert {"Range", "Less", "Where"} <= ops
    want = {"mean": "ReduceMean" if not lengths else "Div", "max": "ReduceMax",
            "attention": "Softmax"}[method]
    assert want in ops
    sess = session(model)
    if batch_first:
        digits = torch.rand(3, 28, 28, generator=torch.Generator().manual_seed(2))
        got = sess.run(["logits"], {"data": digits.numpy()})[0]
        assert np.abs(got - ours(source, digits, None).numpy()).max() < TOL
        return
    feeds = {"data": DATA.numpy()}
    if lengths:
        feeds["lengths"] = LENGTHS.numpy()
    got = sess.run(["logits"], feeds)[0]
    assert np.abs(got - ours(source, lengths=LENGTHS if lengths else None).numpy()).max() < TOL


@pytest.mark.parametrize("method, units, batch_first", CASES)
def test_model_py_matches_our_net(tmp_path, method, units, batch_first):
    source = source_with_scores(tmp_path, method, units, batch_first)
    export_pytorch(source, tmp_path / "export")
    code = (tmp_path / "export" / "model.py").read_text()
    assert "def sequence_pool(" in code
    assert ("nn.Sequential(" in code) == (method == "attention")
    model = load_module(tmp_path / "export", f"pool_{method}_{units}_{batch_first}").load(
        tmp_path / "export")
    with torch.no_grad():
        if batch_first:
            digits = torch.rand(3, 28, 28, generator=torch.Generator().manual_seed(2))
            assert (model(digits)[0] - ours(source, digits, None)).abs().max() < 1e-6
            return
        theirs, _ = model(DATA, LENGTHS)
        whole, _ = model(DATA)  # without lengths: every step counts
    assert (theirs - ours(source)).abs().max() < 1e-6
    assert (whole - ours(source, lengths=None)).abs().max() < 1e-6


@pytest.mark.parametrize("method, units, batch_first", CASES)
@pytest.mark.parametrize("strip", [False, True])
def test_prototxt_round_trips(tmp_path, method, units, batch_first, strip):
    project = pool_project(tmp_path, method, units, batch_first)
    back = (written_by_hand(project, tmp_path, "SequencePool") if strip
            else round_trip(project, tmp_path))
    raw = (tmp_path / "train_val.prototxt").read_text()
    assert 'type: "SequencePool"' in raw and f"method: {method.upper()}" in raw
    assert back.graph.layer("pool").effective_params() == \
        project.graph.layer("pool").effective_params()
    assert links(back) == links(project)
    if not strip:
        assert layers(back) == layers(project)
    assert back.graph.total_params() == project.graph.total_params()
    assert back.graph.errors() == []


def test_an_unknown_pooling_method_is_refused_in_one_sentence(tmp_path):
    from designer.exchange.caffe.importer import import_prototxt
    from designer.exchange.errors import ExchangeError
    written_by_hand(pool_project(tmp_path), tmp_path, "SequencePool")
    path = tmp_path / "train_val.prototxt"
    path.write_text(path.read_text().replace("method: ATTENTION", "method: MEDIAN"))
    with pytest.raises(ExchangeError) as e:
        import_prototxt(path, None, None, tmp_path)
    assert "pool" in str(e.value) and "MEDIAN" in str(e.value)
