"""MiniRocket through the three exports: ONNX (run in ONNX Runtime at the fit's number of
steps and at others, with and without the sequences' lengths, batch-first), the standalone
model.py (its buffers loaded from the exported weights, the same numbers), prototxt (imported
back, with and without our #@ lines); a design never trained, whose layer was never fitted,
is refused in one sentence; and a run trained for two steps exports as it computes."""

import numpy as np
import pytest
import torch

from designer.exchange.errors import ExchangeError
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.graph.project import Project
from tests.exchange.conftest import link_all, sequences_graph
from tests.exchange.pytorch_export.test_code import load_module
from tests.exchange.caffe.test_exporter import layers, links, round_trip, written_by_hand

FIT = torch.randn(40, 6, 2, generator=torch.Generator().manual_seed(1))  # (T, N, C)
FIT_LENGTHS = torch.tensor([40, 33, 9, 25, 3, 17])  # dilations 1, 2 and 4


def batch(steps: int, n: int = 5, seed: int = 2):
    """(T, N, 2) values and lengths: one whole, one empty, one shorter than a window."""
    x = torch.randn(steps, n, 2, generator=torch.Generator().manual_seed(seed))
    return x, torch.tensor([steps, 3, 0, max(steps // 2, 1), 1][:n])


def rocket_project(folder, batch_first=False, lengths=True, classifier=False,
                   features=168) -> Project:
    """Labelled sequences of different lengths (a long-format CSV): SequenceClasses ->
    MiniRocket (reading the lengths), alone or -> InnerProduct -> loss; batch-first, digits
    read row by row (MnistRows) instead, whole."""
    g = sequences_graph(folder, (12, 5, 9, 3, 11, 7), batch_first)
    lengths = lengths and not batch_first  # digits row by row: every step counts
    g.add_layer("MiniRocket", "rocket", {"num_features": features, "max_dilations": 4,
                                         "seed": 3, "batch_first": batch_first})
    pairs = [("data.data", "rocket.x")] + [("data.lengths", "rocket.lengths")] * lengths
    if classifier:
        g.add_layer("InnerProduct", "ip1", {"num_output": 10 if batch_first else "K"})
        g.add_layer("SoftmaxWithLoss", "loss")
        pairs += [("rocket.y", "ip1.x"), ("ip1.y", "loss.logits"),
                  ("data.label", "loss.label")]
    link_all(g, pairs)
    assert g.errors() == []
    p = Project(g, "rocket", "", {"type": "Adam", "base_lr": 1e-4, "max_steps": 2},
                {"log_interval": 1, "eval_interval": 2, "eval_batches": 1,
                 "checkpoint_interval": 2, "sample_interval": 0, "device": "cpu"})
    p.save(folder / "rocket.json")
    return p


def digits(n: int = 3, seed: int = 2) -> torch.Tensor:
    return torch.rand(n, 28, 28, generator=torch.Generator().manual_seed(seed))


def fitted(folder, *args, **kw) -> ModelSource:
    """The project with the MiniRocket fitted (to FIT, or to digits batch-first), as a run's
    first training batch would fit it."""
    source = ModelSource(rocket_project(folder, *args, **kw), folder / "rocket.json")
    net = source.build_net()
    rocket = net.layers["rocket"]
    if rocket.batch_first:
        rocket.fit(digits(6, 1))
    else:
        rocket.fit(FIT, FIT_LENGTHS)
    source.weights = net.state_dict()
    return source


def ours(source, x, lengths=None, layer="rocket"):
    feeds = {"data.data": x} if lengths is None else {"data.data": x, "data.lengths": lengths}
    with torch.no_grad():
        return source.build_net()(feeds, want=(layer,)).blobs[(layer, 0)].numpy()


def assert_close(got, want):
    """The same proportions but where a response sits at a bias, which rounding in another
    convolution may move by one step: a few features at most, by 1/(steps counted) each."""
    d = np.abs(got - want)
    assert got.shape == want.shape
    assert (d > 1e-6).sum() <= 3 and d.mean() < 1e-3


@pytest.mark.parametrize("lengths", [True, False])
def test_onnx_runtime_matches_torch_at_any_number_of_steps(tmp_path, lengths):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import session
    source = fitted(tmp_path, lengths=lengths, features=840)
    plan = source.build_net().layers["rocket"].plan()
    assert [d for d, _ in plan] == [1, 2, 4]  # 6, 2 and 2 biases a kernel; each a Conv
    model, _ = build_model(source)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    assert len(convs) == len(plan)
    assert [i.name for i in model.graph.input] == ["data"] + ["lengths"] * lengths
    sess = session(model)
    for steps in (40, 64, 9):  # the fit's, longer, shorter than the widest window
        x, ends = batch(steps)
        feeds = {"data": x.numpy()} | ({"lengths": ends.numpy()} if lengths else {})
        got = sess.run(["rocket"], feeds)[0]
        assert got.shape == (5, 840)
        assert_close(got, ours(source, x, ends if lengths else None))


def test_onnx_runtime_matches_torch_batch_first(tmp_path):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import session
    source = fitted(tmp_path, batch_first=True, classifier=True)
    got = session(build_model(source)[0]).run(["logits"], {"data": digits().numpy()})[0]
    want = ours(source, digits(), layer="ip1")
    assert np.abs(got - want).max() < 1e-4


@pytest.mark.parametrize("lengths", [True, False])
def test_the_onnx_converter_reads_batch_first_padded_sequences(lengths):
    """The converter alone, on an (N, T, C) input with and without lengths (no data layer
    serves padded sequences batch-first)."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from designer.engines.net.rocket import MiniRocket
    from designer.exchange.onnx_export.ops import OnnxBuilder
    from designer.exchange.onnx_export.rocket import mini_rocket
    from tests.exchange.onnx_export.test_export import session
    module = MiniRocket(2, 168, 4, 5, batch_first=True)
    module.fit(FIT.transpose(0, 1), FIT_LENGTHS if lengths else None)
    b = OnnxBuilder()
    x = b.add_input("x", TensorProto.FLOAT, ["N", "T", 2])
    ends = b.add_input("lengths", TensorProto.INT64, ["N"]) if lengths else None
    y = mini_rocket(b, "rocket", module, {"batch_first": True}, [x, ends], None)[0]
    b.add_output("y", y)
    model = helper.make_model(helper.make_graph(b.nodes, "rocket", b.inputs, b.outputs,
                                                b.initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = session(model)
    for steps in (40, 23):
        x, ends = batch(steps, seed=steps)
        x = x.transpose(0, 1).contiguous()
        feeds = {"x": x.numpy()} | ({"lengths": ends.numpy()} if lengths else {})
        with torch.no_grad():
            want = module(x, ends if lengths else None).numpy()
        assert_close(sess.run(["y"], feeds)[0], want)


def model_py(folder, tag):
    """The exported model.py, imported."""
    return load_module(folder, f"rocket_{tag}")


@pytest.mark.parametrize("batch_first", [False, True])
def test_model_py_holds_our_buffers_and_matches_our_net(tmp_path, batch_first):
    from safetensors.torch import load_file
    source = fitted(tmp_path, batch_first=batch_first, classifier=True)
    export_pytorch(source, tmp_path / "export")
    code = (tmp_path / "export" / "model.py").read_text()
    assert "class MiniRocket(nn.Module):" in code and "designer" not in code.replace(
        "rnn-designer", "")  # torch and safetensors alone
    saved = load_file(str(tmp_path / "export" / "weights.safetensors"))
    mine = source.build_net().layers["rocket"].state_dict()
    assert {k: tuple(v.shape) for k, v in saved.items() if k.startswith("rocket.")} == \
        {f"rocket.{k}": tuple(v.shape) for k, v in mine.items()}
    module = model_py(tmp_path / "export", batch_first)
    model = module.load(tmp_path / "export")
    assert set(model.rocket.state_dict()) == set(mine)
    with torch.no_grad():
        out, _ = model(*module.test_input())  # what `python model.py` prints
        assert out.shape[0] == 2 and torch.isfinite(out).all()
        if batch_first:
            theirs, _ = model(digits())
            assert np.abs(theirs.numpy() - ours(source, digits(), layer="ip1")).max() < 1e-6
            return
        for steps in (40, 57):
            x, ends = batch(steps)
            theirs, _ = model(x, ends)
            whole, _ = model(x)
            assert np.abs(theirs.numpy() - ours(source, x, ends, "ip1")).max() < 1e-6
            assert np.abs(whole.numpy() - ours(source, x, None, "ip1")).max() < 1e-6
            features = model.rocket(x, ends).numpy()
            assert np.array_equal(features, ours(source, x, ends))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("strip", [False, True])
def test_prototxt_round_trips(tmp_path, batch_first, strip):
    from designer.exchange.caffe.exporter import export_messages
    project = rocket_project(tmp_path, batch_first, classifier=True, features=840)
    back = (written_by_hand(project, tmp_path, "MiniRocket") if strip
            else round_trip(project, tmp_path))
    raw = (tmp_path / "train_val.prototxt").read_text()
    assert 'type: "MiniRocket"' in raw and "mini_rocket_param" in raw
    assert "num_features: 840" in raw and "max_dilations: 4" in raw and "seed: 3" in raw
    assert back.graph.layer("rocket").effective_params() == \
        project.graph.layer("rocket").effective_params()
    assert links(back) == links(project)
    if not strip:
        assert layers(back) == layers(project)
    assert back.graph.errors() == []
    notes = export_messages(project)[2]
    assert any(n.startswith("rocket:") and "no MiniRocket layer" in n and
               "prototxt does not hold" in n for n in notes)


def test_a_design_never_trained_is_refused_in_one_sentence(tmp_path):
    """A project's MiniRocket was never fitted (its buffers are zeros, fitted at a run's first
    training batch) and the exporter reads no data: ONNX and PyTorch refuse, naming the file
    and the layer; the prototxt, which holds no weights, is written."""
    from designer.exchange.commands import run_export
    rocket_project(tmp_path, classifier=True)
    for fmt, out in (("onnx", "m.onnx"), ("pytorch", "pt")):
        with pytest.raises(ExchangeError) as e:
            run_export(tmp_path / "rocket.json", fmt, tmp_path / out)
        message = str(e.value)
        assert str(tmp_path / "rocket.json") in message and "rocket (MiniRocket)" in message
        assert "\n" not in message and ". " not in message and "export the run" in message
        assert not (tmp_path / out).exists()
    written, notes = run_export(tmp_path / "rocket.json", "prototxt", tmp_path / "caffe")
    assert any("no MiniRocket layer" in n for n in notes) and written


def test_a_trained_run_exports_what_it_computes(tmp_path):
    """Two training steps fit the layer on the first batch; the run folder's ONNX and model.py
    give what its checkpoint's net gives."""
    pytest.importorskip("onnxruntime")
    import onnx

    from designer.cli import main
    from designer.exchange.source import load_source
    from designer.training.run.loop import RunOptions, train
    from tests.exchange.onnx_export.test_export import session
    project = rocket_project(tmp_path, classifier=True)
    list(train(project, RunOptions(out=tmp_path / "run", steps=2)))
    source = load_source(tmp_path / "run")
    assert bool(source.weights["layers.rocket.fitted"])
    for fmt, out in (("onnx", "m.onnx"), ("pytorch", "pt")):
        assert main(["export", str(tmp_path / "run"), "--format", fmt, "--out",
                     str(tmp_path / out)]) == 0
    x, ends = batch(15)
    want = ours(source, x, ends, "ip1")
    got = session(onnx.load(str(tmp_path / "m.onnx"))).run(
        ["logits"], {"data": x.numpy(), "lengths": ends.numpy()})[0]
    assert np.abs(got - want).max() < 1e-4
    with torch.no_grad():
        theirs, _ = model_py(tmp_path / "pt", "run").load(tmp_path / "pt")(x, ends)
    assert np.abs(theirs.numpy() - want).max() < 1e-6


def test_importing_its_onnx_model_is_refused_in_one_sentence(tmp_path):
    """Reading the fitted buffers back from the Conv weights and biases is not done: the
    import says so, naming the file and the layer."""
    pytest.importorskip("onnx")
    from designer.exchange.onnx_export.export import export_onnx
    from designer.exchange.onnx_import import import_onnx
    export_onnx(fitted(tmp_path, classifier=True), tmp_path / "m.onnx")
    with pytest.raises(ExchangeError) as e:
        import_onnx(tmp_path / "m.onnx")
    message = str(e.value)
    assert str(tmp_path / "m.onnx") in message and "rocket is a MiniRocket layer" in message
    assert "\n" not in message and ". " not in message
