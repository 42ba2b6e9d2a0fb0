"""A strided or 'valid' Conv1D ahead of an LSTM shortens the sequences: T steps of data become
T' = ceil((T - reach) / stride) steps for the LSTM. The unrolled ONNX export unrolls each
recurrent layer over its own T' (not the data's T), and the model, the standalone model.py and
the unrolled engine all compute what the cuDNN engine computes, from a design and from a run
trained on the unrolled engine."""
import importlib.util

import numpy as np
import pytest
import torch

from designer.cli import main
from designer.engines.net.build import Net
from designer.engines.net.convert import convert_state_dict
from designer.exchange.errors import ExchangeError
from designer.exchange.pytorch_export.code import export_pytorch
from designer.exchange.source import ModelSource, load_source
from designer.training.run.loop import RunOptions, train
from tests.exchange.conftest import link_all, series_project
from tests.exchange.test_conv1d import CASES, DATA, conv_project

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
from designer.exchange.onnx_export.export import build_model

TOL = 1e-5
SHORTENING = {  # name: (Conv1D parameters, LSTM engine, the LSTM's steps for 7 of data)
    "valid_stride": ({"padding": "valid", "stride": 2, "bias_term": False}, "CUDNN", 3),
    "valid_stride_unrolled": ({"padding": "valid", "stride": 2}, "CAFFE", 3),
    "same_stride": ({"stride": 2}, "CAFFE", 4),
    "valid_wide": ({"padding": "valid", "kernel_size": 4}, "CUDNN", 4),
    "causal_stride_dilated": ({"padding": "causal", "stride": 3, "dilation": 2}, "CAFFE", 3),
}


@pytest.fixture(autouse=True)
def _cases(monkeypatch):
    for name, (params, engine, _) in SHORTENING.items():
        monkeypatch.setitem(CASES, name, (params, False, engine))


def session(model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # the state inputs' zero defaults are overridable on purpose
    return ort.InferenceSession(model.SerializeToString(), opts)


def on_cudnn(source: ModelSource):
    """The source's net with every recurrent layer moved to the cuDNN engine, same weights."""
    net, graph = source.build_net(), source.project.graph
    ref = Net(graph, engine="cudnn").eval()
    layers = {n: (graph.layer(n).type, graph.layer(n).effective_params().get("num_layers", 1))
              for n in net.recurrent}
    ref.load_state_dict(convert_state_dict(net.state_dict(), layers, net.engines, ref.engines))
    return net, ref


def outputs(net, data=DATA):
    with torch.no_grad():
        out = net({"data.data": data}, want=("ip1",))
    return out.blobs[("ip1", 0)], out.state["rnn1"]


def assert_onnx_matches(model, ref, data=DATA, name="logits"):
    got = dict(zip([o.name for o in model.graph.output],
                   session(model).run(None, {"data": data.numpy()})))
    want, state = outputs(ref, data)
    worst = max(np.abs(got[name] - want.numpy()).max(),
                np.abs(got["rnn1.hT"] - state[0].numpy()).max(),
                np.abs(got["rnn1.cT"] - state[1].numpy()).max())
    assert worst < TOL, worst
    return worst


@pytest.mark.parametrize("case", SHORTENING)
def test_the_lstm_unrolls_over_the_steps_the_conv_leaves(tmp_path, case):
    source = ModelSource(conv_project(tmp_path, case), tmp_path)
    net, ref = on_cudnn(source)
    assert (outputs(net)[0] - outputs(ref)[0]).abs().max() < TOL  # the engines agree
    model, notes = build_model(source, unrolled=True, steps=7)
    steps = SHORTENING[case][2]
    splits = [n for n in model.graph.node if n.name.endswith("rnn1/cont_slice")]
    assert len(splits) == 1 and len(splits[0].output) == steps
    assert f"rnn1: unrolled over {steps} steps, what the layers before it make of 7 steps, " \
           "so the model reads exactly 7 steps" in notes
    assert_onnx_matches(model, ref)


def test_the_cli_writes_a_model_that_runs(tmp_path, capsys):
    conv_project(tmp_path, "valid_stride").save(tmp_path / "conv.json")
    out = tmp_path / "conv.onnx"
    assert main(["export", str(tmp_path / "conv.json"), "--format", "onnx", "--unrolled",
                 "--steps", "7", "--out", str(out)]) == 0
    assert "unrolled over 3 steps" in capsys.readouterr().out
    import onnx
    _, ref = on_cudnn(load_source(tmp_path / "conv.json"))
    assert_onnx_matches(onnx.load(out), ref)


def test_too_few_steps_for_the_kernel_is_one_sentence(tmp_path):
    source = ModelSource(conv_project(tmp_path, "valid_wide"), tmp_path)
    with pytest.raises(ExchangeError, match=r"rnn1: cannot be unrolled over what 2 steps of data "
                       r"become \(.*conv.*kernel that spans 4 steps"):
        build_model(source, unrolled=True, steps=2)


def conv_series(folder, engine: str):
    """A forecaster whose data T is known (8 rows a window): TimeSeries -> Conv1D (stride 2,
    valid) -> LSTM -> SequenceLast -> InnerProduct -> EuclideanLoss."""
    project = series_project(folder)
    g = project.graph
    g.disconnect(g.link_into("lstm1", "x"))
    g.add_layer("Conv1D", "conv", {"num_output": 4, "padding": "valid", "stride": 2})
    g.set_param("lstm1", "engine", engine)
    link_all(g, [("data.data", "conv.x"), ("conv.y", "lstm1.x")])
    g.rename_layer("lstm1", "rnn1")
    assert g.errors() == [] and g.info("rnn1").inputs[0].shape[0] == 3
    return project


@pytest.mark.parametrize("steps, unrolled_over", [(None, 3), (8, 3), (12, 5)])
def test_a_known_sequence_length_and_other_steps(tmp_path, steps, unrolled_over):
    source = ModelSource(conv_series(tmp_path, "CAFFE"), tmp_path)
    _, ref = on_cudnn(source)
    model, notes = build_model(source, unrolled=True, steps=steps)
    assert any(f"unrolled over {unrolled_over} steps, what the layers before it make of "
               f"{steps or 8} steps" in n for n in notes)
    data = torch.rand(steps or 8, 4, 2, generator=torch.Generator().manual_seed(2))
    assert_onnx_matches(model, ref, data, "prediction")
    assert source.project.graph.info("rnn1").inputs[0].shape[0] == 3  # the design is unchanged


def test_a_run_trained_on_the_unrolled_engine_exports_in_every_format(tmp_path):
    project = conv_project(tmp_path, "valid_stride_unrolled")
    project.solver = {"type": "Adam", "base_lr": 0.02, "max_steps": 3}
    project.training = {"log_interval": 1, "eval_interval": 3, "eval_batches": 1,
                        "checkpoint_interval": 3, "sample_interval": 0, "device": "cpu"}
    records = list(train(project, RunOptions(out=tmp_path / "run", steps=3, device="cpu",
                                             engine="caffe")))
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2, 3]
    source = load_source(tmp_path / "run", "last")
    assert source.trained
    net, ref = on_cudnn(source)
    assert net.engines["rnn1"] == "CAFFE"
    assert (outputs(net)[0] - outputs(ref)[0]).abs().max() < TOL
    for unrolled in (False, True):
        assert_onnx_matches(build_model(source, unrolled, steps=7)[0], ref)
    export_pytorch(source, tmp_path / "export")
    spec = importlib.util.spec_from_file_location("conv_run", tmp_path / "export" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.no_grad():
        theirs = module.load(tmp_path / "export")(DATA)[0]
    assert (theirs - outputs(ref)[0]).abs().max() < TOL
    assert main(["export", str(tmp_path / "run"), "--format", "prototxt", "--out",
                 str(tmp_path / "proto")]) == 0
    assert 'engine: CAFFE' in (tmp_path / "proto" / "train_val.prototxt").read_text()
