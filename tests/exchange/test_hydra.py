"""Hydra through the three exports: a run trained for two steps (which fits the layer to its
first batch) exported as ONNX (run in ONNX Runtime at the fit's number of steps, longer and
shorter, zero-padded sequences whose responses tie included) and as model.py (its buffers
loaded from the exported weights), both giving what the net gives; the ONNX converter alone
with and without lengths, batch-first, and for a layer fitted to one step; model.py
batch-first; prototxt read back, with and without our #@ lines; a design never trained is
refused in one sentence, and so is importing its ONNX model."""

import numpy as np
import pytest
import torch

from designer.exchange.errors import ExchangeError
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.graph.project import Project
from tests.exchange.caffe.test_exporter import layers, links, round_trip, written_by_hand
from tests.exchange.conftest import link_all, sequences_graph
from tests.exchange.pytorch_export.test_code import load_module

LENGTHS = (40, 35, 38, 9, 37, 34)  # any first batch is fitted to 34 steps or more: 3 dilations
FIT = torch.randn(40, 6, 2, generator=torch.Generator().manual_seed(1))  # (T, N, C)
FIT_LENGTHS = torch.tensor([40, 33, 9, 25, 3, 17])
PARAMS = {"num_features": 256, "kernels": 8, "max_dilations": 3, "max_channels": 2,
          "seed": 3}


def hydra_project(folder, batch_first=False, features=256) -> Project:
    """Labelled sequences of different lengths (a long-format CSV): SequenceClasses -> Hydra
    (reading the lengths) -> InnerProduct -> loss; batch-first, digits read row by row
    (MnistRows) instead, whole."""
    g = sequences_graph(folder, LENGTHS, batch_first)
    g.add_layer("Hydra", "hydra", {**PARAMS, "num_features": features,
                                   "batch_first": batch_first})
    g.add_layer("InnerProduct", "ip1", {"num_output": 10 if batch_first else "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "hydra.x")] + [("data.lengths", "hydra.lengths")] *
             (not batch_first) + [("hydra.y", "ip1.x"), ("ip1.y", "loss.logits"),
                                  ("data.label", "loss.label")])
    assert g.errors() == []
    p = Project(g, "hydra", "", {"type": "Adam", "base_lr": 1e-3, "max_steps": 2},
                {"log_interval": 1, "eval_interval": 2, "eval_batches": 1,
                 "checkpoint_interval": 2, "sample_interval": 0, "device": "cpu"})
    p.save(folder / "hydra.json")
    return p


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(the run folder, its source, its ONNX model, its model.py folder): the project trained
    for two steps on the CPU, exported by the command line."""
    from designer.cli import main
    from designer.exchange.source import load_source
    from designer.training.run.loop import RunOptions, train
    folder = tmp_path_factory.mktemp("hydra")
    list(train(hydra_project(folder), RunOptions(out=folder / "run", steps=2)))
    for fmt, out in (("onnx", "m.onnx"), ("pytorch", "pt")):
        assert main(["export", str(folder / "run"), "--format", fmt, "--out",
                     str(folder / out)]) == 0
    return folder, load_source(folder / "run")


def batch(steps: int, n: int = 5, seed: int = 2, channels: int = 2):
    """(T, N, C) values and lengths: one whole, one empty (all zeros: every response ties),
    one of a single step, one half."""
    x = torch.randn(steps, n, channels, generator=torch.Generator().manual_seed(seed))
    return x, torch.tensor([steps, 3, 0, max(steps // 2, 1), 1][:n])


def ours(source, x, lengths=None, layer="hydra"):
    """What a freshly built net gives (so that no features remembered from an earlier batch
    stand in for these)."""
    feeds = {"data.data": x} if lengths is None else {"data.data": x, "data.lengths": lengths}
    with torch.no_grad():
        return source.build_net()(feeds, want=(layer,)).blobs[(layer, 0)].numpy()


def assert_close(got, want):
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())


def test_zeros_follow_the_groups_and_ties_go_to_the_first_kernel():
    """What the other tests lean on: fitted to 40 steps, the layer makes 192 features and
    zeros after them; an all-zero sequence's responses tie at every step, and the first kernel
    of each group takes every count of the minima (40 steps, 39 of the difference)."""
    from designer.engines.net.hydra import Hydra
    module = Hydra(2, 256, 8, 3, 2, 3, False)
    module.fit(FIT, FIT_LENGTHS)
    used, g = module.plan()
    assert used == [1, 2, 4] and g == 2  # 3 x 2 views x 2 counts x 8 kernels x 2 = 192
    with torch.no_grad():
        y = module(torch.zeros(40, 1, 2)).numpy()[0]
    assert (y[192:] == 0).all()
    counts = y[:192].reshape(3, 2, 2, 2, 8)[:, :, 1] ** 2  # (dilation, view, group, kernel)
    assert (counts[:, 0, :, 0] == 40).all() and (counts[:, 1, :, 0] == 39).all()
    assert (counts[..., 1:] == 0).all()


def test_onnx_runtime_matches_the_trained_net(trained):
    pytest.importorskip("onnxruntime")
    import onnx

    from tests.exchange.onnx_export.test_export import session
    folder, source = trained
    assert bool(source.weights["layers.hydra.fitted"])
    module = source.build_net().layers["hydra"]
    used, _ = module.plan()
    assert used == [1, 2, 4] and module.steps() >= 34
    model = onnx.load(str(folder / "m.onnx"))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("Conv") == 2 * len(used) and ops.count("ArgMax") == 2 * len(used)
    assert [i.name for i in model.graph.input] == ["data", "lengths"]
    model.graph.output.append(onnx.helper.make_tensor_value_info(  # the features too
        "hydra", onnx.TensorProto.FLOAT, None))
    sess = session(model)
    for steps in (module.steps(), 64, 9):  # the fit's, longer, shorter (padded: ties)
        x, ends = batch(steps, seed=steps)
        feeds = {"data": x.numpy(), "lengths": ends.numpy()}
        got, logits = sess.run(["hydra", "logits"], feeds)
        want = ours(source, x, ends)
        assert got.shape == (5, 256) and (want[:, 192:] == 0).all()
        assert (want[2] > 0).any()  # the empty sequence counts its minima
        assert_close(got, want)
        assert_close(logits, ours(source, x, ends, "ip1"))


@pytest.mark.parametrize("first, lengths, features, fit_steps", [
    (False, True, 256, 40), (False, False, 192, 40), (True, True, 192, 40),
    (True, False, 256, 40), (False, True, 256, 1)])
def test_the_onnx_converter_matches_the_module(first, lengths, features, fit_steps):
    """The converter alone: time-major or batch-first, with and without lengths, every
    feature made or zeros after them, fitted to many steps or to one (whose difference the
    module reads as a zero step)."""
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from designer.engines.net.hydra import Hydra
    from designer.exchange.onnx_export.ops import CONVERTERS, OnnxBuilder
    from tests.exchange.onnx_export.test_export import session
    module = Hydra(3, features, 8, 3, 2, 5, first)
    fit, fit_ends = FIT[:fit_steps], FIT_LENGTHS.clamp(max=fit_steps)
    fit = torch.cat([fit, fit[..., :1]], 2)  # three channels: groups sum two of them
    module.fit(fit.transpose(0, 1) if first else fit, fit_ends if lengths else None)
    b = OnnxBuilder()
    x = b.add_input("x", TensorProto.FLOAT, ["N", "T", 3] if first else ["T", "N", 3])
    ends = b.add_input("lengths", TensorProto.INT64, ["N"]) if lengths else None
    y = CONVERTERS["Hydra"](b, "hydra", module, {"batch_first": first}, [x, ends], None)[0]
    b.add_output("y", y)
    model = helper.make_model(helper.make_graph(b.nodes, "hydra", b.inputs, b.outputs,
                                                b.initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = session(model)
    for steps in (fit_steps, 23, 1, 57):
        x, ends = batch(steps, seed=steps, channels=3)
        if first:
            x = x.transpose(0, 1).contiguous()
        feeds = {"x": x.numpy()} | ({"lengths": ends.numpy()} if lengths else {})
        fresh = Hydra(3, features, 8, 3, 2, 5, first)
        fresh.load_state_dict(module.state_dict())  # nothing remembered from before
        with torch.no_grad():
            want = fresh(x, ends if lengths else None).numpy()
        assert np.abs(want).max() > 0.5
        assert_close(sess.run(["y"], feeds)[0], want)


def test_model_py_holds_our_buffers_and_matches_the_trained_net(trained):
    from safetensors.torch import load_file
    folder, source = trained
    code = (folder / "pt" / "model.py").read_text()
    assert "class Hydra(nn.Module):" in code and "designer" not in code.replace(
        "rnn-designer", "")  # torch and safetensors alone
    saved = load_file(str(folder / "pt" / "weights.safetensors"))
    mine = source.build_net().layers["hydra"].state_dict()
    assert {k: tuple(v.shape) for k, v in saved.items() if k.startswith("hydra.")} == \
        {f"hydra.{k}": tuple(v.shape) for k, v in mine.items()}
    module = load_module(folder / "pt", "hydra_run")
    model = module.load(folder / "pt")
    with torch.no_grad():
        out, _ = model(*module.test_input())  # what `python model.py` prints
        assert out.shape[0] == 2 and torch.isfinite(out).all()
        for steps in (40, 57, 9):
            x, ends = batch(steps, seed=steps)
            assert np.array_equal(model.hydra(x, ends).numpy(), ours(source, x, ends))
            assert np.array_equal(model.hydra(x).numpy(), ours(source, x))
            theirs, _ = model(x, ends)
            assert np.abs(theirs.numpy() - ours(source, x, ends, "ip1")).max() < 1e-6


def test_model_py_matches_the_net_batch_first(tmp_path):
    """Digits row by row (batch-first), the layer fitted as a run's first batch would fit
    it."""
    source = ModelSource(hydra_project(tmp_path, batch_first=True), tmp_path / "hydra.json")
    net = source.build_net()
    net.layers["hydra"].fit(torch.rand(6, 28, 28, generator=torch.Generator().manual_seed(1)))
    source.weights = net.state_dict()
    export_pytorch(source, tmp_path / "export")
    model = load_module(tmp_path / "export", "hydra_first").load(tmp_path / "export")
    digits = torch.rand(3, 28, 28, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        theirs, _ = model(digits)
    assert np.abs(theirs.numpy() - ours(source, digits, layer="ip1")).max() < 1e-6
    assert np.array_equal(model.hydra(digits).numpy(), ours(source, digits))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("strip", [False, True])
def test_prototxt_round_trips(tmp_path, batch_first, strip):
    from designer.exchange.caffe.exporter import export_messages
    project = hydra_project(tmp_path, batch_first, features=512)
    project.graph.set_param("hydra", "kernels", 6)
    back = (written_by_hand(project, tmp_path, "Hydra") if strip
            else round_trip(project, tmp_path))
    raw = (tmp_path / "train_val.prototxt").read_text()
    assert 'type: "Hydra"' in raw and "hydra_param" in raw
    assert all(f"{k}: {v}" in raw for k, v in (("num_features", 512), ("kernels", 6),
                                                ("max_dilations", 3), ("max_channels", 2),
                                                ("seed", 3)))
    assert back.graph.layer("hydra").effective_params() == \
        project.graph.layer("hydra").effective_params()
    assert links(back) == links(project)
    if not strip:
        assert layers(back) == layers(project)
    assert back.graph.errors() == []
    notes = export_messages(project)[2]
    assert any(n.startswith("hydra:") and "no Hydra layer" in n and
               "prototxt does not hold" in n for n in notes)


def test_a_design_never_trained_is_refused_in_one_sentence(tmp_path):
    from designer.exchange.commands import run_export
    hydra_project(tmp_path)
    for fmt, out in (("onnx", "m.onnx"), ("pytorch", "pt")):
        with pytest.raises(ExchangeError) as e:
            run_export(tmp_path / "hydra.json", fmt, tmp_path / out)
        message = str(e.value)
        assert str(tmp_path / "hydra.json") in message and "hydra (Hydra)" in message
        assert "\n" not in message and ". " not in message and "export the run" in message
        assert not (tmp_path / out).exists()
    written, notes = run_export(tmp_path / "hydra.json", "prototxt", tmp_path / "caffe")
    assert any("no Hydra layer" in n for n in notes) and written


def test_importing_its_onnx_model_is_refused_in_one_sentence(trained):
    pytest.importorskip("onnx")
    from designer.exchange.onnx_import import import_onnx
    folder, _ = trained
    with pytest.raises(ExchangeError) as e:
        import_onnx(folder / "m.onnx")
    message = str(e.value)
    assert str(folder / "m.onnx") in message and "hydra is a Hydra layer" in message
    assert "\n" not in message and ". " not in message
