"""Difference, a sequence's first difference, through the designer: its shapes and checks in
both layouts, its module (numpy's diff, zeros from each sequence's last valid step on), and the
three exports: ONNX (run in ONNX Runtime, with and without lengths, batch-first), model.py and
prototxt read back; and MiniRocket over it, as ``init`` draws it beside one over the series."""
import numpy as np
import pytest
import torch

from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource
from designer.graph import Graph, registry
from designer.graph.memory_layers import Context, rule
from designer.graph.project import Project
from tests.exchange.caffe.test_exporter import layers, links, round_trip
from tests.exchange.conftest import link_all, sequences_graph
from tests.exchange.pytorch_export.test_code import load_module


def diff_project(folder, lengths=True, rocket=False) -> Project:
    """Labelled sequences of different lengths -> Difference (reading the lengths) -> and,
    with ``rocket``, MiniRocket -> InnerProduct -> loss."""
    g = sequences_graph(folder, (12, 5, 9, 3, 11, 7), False)
    g.add_layer("Difference", "diff")
    pairs = [("data.data", "diff.x")] + [("data.lengths", "diff.lengths")] * lengths
    if rocket:
        g.add_layer("MiniRocket", "rocket", {"num_features": 168, "max_dilations": 4})
        g.add_layer("InnerProduct", "ip1", {"num_output": "K"})
        g.add_layer("SoftmaxWithLoss", "loss")
        pairs += [("diff.y", "rocket.x"), ("data.lengths", "rocket.lengths"),
                  ("rocket.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")]
    link_all(g, pairs)
    assert g.errors() == []
    p = Project(g, "diff", "", {"type": "Adam", "base_lr": 1e-3, "max_steps": 2},
                {"device": "cpu", "log_interval": 1, "eval_interval": 2, "eval_batches": 1,
                 "checkpoint_interval": 2, "sample_interval": 0})
    p.save(folder / "diff.json")
    return p


def batch(steps: int, first: bool = False):
    """(T, N, 2) values (or (N, T, 2)) and lengths: one whole, one of one step, one empty."""
    x = torch.randn(steps, 5, 2, generator=torch.Generator().manual_seed(steps))
    ends = torch.tensor([steps, 1, 0, max(steps // 2, 2), 3])
    return (x.transpose(0, 1).contiguous() if first else x), ends


def test_its_shapes_and_checks_in_both_layouts():
    spec = registry.get("Difference")
    assert spec in registry.by_category()["Sequence"]
    assert "x[t+1] - x[t]" in spec.tooltip()
    from designer.graph.spec import InferContext, TensorInfo
    for first, shape, want in ((False, (20, 4, 3), (19, 4, 3)), (True, (4, 20, 3), (4, 19, 3)),
                               (False, ("T", "N", 3), ("T-1", "N", 3))):
        ctx = InferContext("d", spec, {**spec.defaults(), "batch_first": first},
                           [TensorInfo(shape, "float", None, 0 if first else 1), None],
                           ["data", None])
        (out,) = spec.infer(ctx)
        assert out.shape == want and out.batch == (0 if first else 1)
    ctx = Context("Difference", {}, [((20, 4, 3), "float")], [((19, 4, 3), "float")], "cpu",
                  "", 4)
    assert rule(ctx, 0).inputs == []  # linear: its backward keeps nothing


def test_one_step_is_refused_and_the_batch_axis_is_checked(tmp_path):
    from designer.graph.errors import ShapeError
    from designer.graph.spec import InferContext, TensorInfo
    spec = registry.get("Difference")
    ctx = InferContext("d", spec, spec.defaults(), [TensorInfo((1, 4, 2), "float", None, 1),
                                                    None], ["data", None])
    with pytest.raises(ShapeError, match="at least 2 steps"):
        spec.infer(ctx)
    g = sequences_graph(tmp_path, (4, 2, 3), False)
    g.add_layer("Difference", "diff", {"batch_first": True})
    link_all(g, [("data.data", "diff.x")])
    (e,) = g.info("diff").problems
    assert "axis 1 is the batch" in str(e) and "batch_first to false" in str(e)


def test_the_module_is_numpys_diff_with_the_padding_zeroed(tmp_path):
    source = ModelSource(diff_project(tmp_path), tmp_path / "diff.json")
    module = source.build_net().layers["diff"]
    x, ends = batch(9)
    got = module(x, ends).numpy()
    want = np.diff(x.numpy(), axis=0)
    for n, end in enumerate(ends.tolist()):
        keep = max(end - 1, 0)
        assert np.allclose(got[:keep, n], want[:keep, n])
        assert (got[keep:, n] == 0).all()
    assert np.allclose(module(x).numpy(), want)  # without lengths: every step


@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("lengths", [True, False])
def test_onnx_runtime_matches_the_module(first, lengths):
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    from designer.engines.net.layers import Difference
    from designer.exchange.onnx_export.ops import CONVERTERS, OnnxBuilder
    from tests.exchange.onnx_export.test_export import session
    b = OnnxBuilder()
    x = b.add_input("x", TensorProto.FLOAT, ["N", "T", 2] if first else ["T", "N", 2])
    ends = b.add_input("lengths", TensorProto.INT64, ["N"]) if lengths else None
    module = Difference(first)
    y = CONVERTERS["Difference"](b, "diff", module, {"batch_first": first}, [x, ends], None)[0]
    b.add_output("y", y)
    model = helper.make_model(helper.make_graph(b.nodes, "diff", b.inputs, b.outputs,
                                                b.initializers),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    sess = session(model)
    for steps in (9, 2, 30):
        x, ends = batch(steps, first)
        feeds = {"x": x.numpy()} | ({"lengths": ends.numpy()} if lengths else {})
        with torch.no_grad():
            want = module(x, ends if lengths else None).numpy()
        assert np.abs(sess.run(["y"], feeds)[0] - want).max() < 1e-6


def test_model_py_and_onnx_of_a_rocket_over_the_difference_match_the_net(tmp_path):
    pytest.importorskip("onnxruntime")
    from designer.exchange.onnx_export.export import build_model
    from tests.exchange.onnx_export.test_export import session
    source = ModelSource(diff_project(tmp_path, rocket=True), tmp_path / "diff.json")
    net = source.build_net()
    fit, fit_ends = batch(30)
    net.layers["rocket"].fit(net.layers["diff"](fit, fit_ends), fit_ends)
    source.weights = net.state_dict()
    export_pytorch(source, tmp_path / "export")
    code = (tmp_path / "export" / "model.py").read_text()
    assert "def difference(x, lengths, batch_first):" in code
    module = load_module(tmp_path / "export", "diff_model")
    model = module.load(tmp_path / "export")
    sess = session(build_model(source)[0])
    for steps in (30, 17):
        x, ends = batch(steps)
        with torch.no_grad():
            want = source.build_net()({"data.data": x, "data.lengths": ends},
                                      want=("ip1",)).blobs[("ip1", 0)].numpy()
            theirs, _ = model(x, ends)
        assert np.abs(theirs.numpy() - want).max() < 1e-5
        got = sess.run(["logits"], {"data": x.numpy(), "lengths": ends.numpy()})[0]
        assert np.abs(got - want).max() < 1e-3


def test_prototxt_round_trips(tmp_path):
    from designer.exchange.caffe.exporter import export_messages
    project = diff_project(tmp_path, rocket=True)
    back = round_trip(project, tmp_path)
    assert 'type: "Difference"' in (tmp_path / "train_val.prototxt").read_text()
    assert layers(back) == layers(project) and links(back) == links(project)
    assert back.graph.errors() == []
    assert any(n.startswith("diff:") and "no Difference layer" in n
               for n in export_messages(project)[2])
