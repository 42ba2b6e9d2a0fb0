"""A model trained on one engine loads and runs on the other."""
import pytest
import torch

from designer.engines.measure.bench import random_feeds
from designer.engines.net.build import Net
from designer.engines.net.convert import CONVERTERS, convert_layer, convert_state_dict
from designer.engines.train_step.step import TrainStep, make_optimizer
from designer.graph import settings


def _train(net, feeds, steps=3):
    solver = settings.effective("solver", {"base_lr": 0.01})
    step = TrainStep(net, make_optimizer(net.parameters(), solver, torch.device("cpu")), 5.0)
    for _ in range(steps):
        step(feeds)


@pytest.mark.parametrize("src,dst", [("cudnn", "caffe"), ("caffe", "cudnn")])
def test_trained_weights_convert_and_give_the_same_outputs(every_layer, src, dst):
    g = every_layer()
    feeds = random_feeds(g, torch.device("cpu"))
    torch.manual_seed(0)
    a = Net(g, src)
    _train(a, feeds)
    b = Net(g, dst)
    layers = {n: (g.layer(n).type, g.layer(n).get("num_layers")) for n in ("lstm", "gru", "rnn",
                                                                         "lstm_bf")}
    state = convert_state_dict(a.state_dict(), layers, {n: a.engines[n] for n in layers},
                               {n: b.engines[n] for n in layers})
    b.load_state_dict(state)  # strict: every key converted, none left over
    a.eval(), b.eval()
    with torch.no_grad():
        oa, ob = a(feeds), b(feeds)
    for name in a.order:
        for i in range(len(a.ports[name])):
            if (name, i) in oa.blobs and oa.blobs[(name, i)] is not None:
                assert torch.allclose(oa.blobs[(name, i)], ob.blobs[(name, i)], atol=2e-5), name


def test_each_layer_type_converts_through_the_converter_its_cell_registered(monkeypatch):
    calls = []

    def recording(kind, sd, levels, src, dst):
        calls.append((kind, sorted(sd), levels, src, dst))
        return {"converted": sd["w"]}
    monkeypatch.setitem(CONVERTERS, "GRU", recording)
    w = torch.ones(2)
    state = {"layers.gru.w": w, "layers.fc.weight": torch.zeros(1)}
    got = convert_state_dict(state, {"gru": ("GRU", 2)}, {"gru": "AUTO"}, {"gru": "CAFFE"})
    # AUTO holds the cuDNN engine's tensors: the converter sees the layouts, not the engines
    assert calls == [("GRU", ["w"], 2, "CUDNN", "CAFFE")]
    assert got == {"layers.fc.weight": state["layers.fc.weight"], "layers.gru.converted": w}


def test_engines_that_hold_the_same_tensors_need_no_converter():
    sd = {"W_xc_l0": torch.ones(2, 3), "b_c_l0": torch.zeros(2)}
    for kind, src in (("MinGRU", "SCAN"), ("sLSTM", "FUSED"), ("mLSTM", "CHUNK")):
        assert kind not in CONVERTERS
        assert convert_layer(kind, sd, 1, src, "CAFFE") == sd
    with pytest.raises(ValueError, match="an LSTMSimple layer's weights cannot be converted"):
        convert_layer("LSTMSimple", sd, 1, "CAFFE", "CUDNN")
