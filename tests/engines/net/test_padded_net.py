"""A whole net with a bidirectional layer over padded sequences: built on either engine, with
the parameter count the designer shows, converted between engines, trained a step."""
import pytest
import torch

from designer.engines.measure.bench import random_feeds
from designer.engines.net.build import Net, count_parameters
from designer.engines.net.convert import convert_state_dict
from designer.engines.train_step.step import TrainStep, make_optimizer
from designer.graph import Graph, settings
from tests.nets import link_all


def padded_net(kind="LSTM", engine="CUDNN", bidirectional=True) -> Graph:
    """Digits read row by row; the class labels (0-9) double as sequence lengths, which is all
    a shape-valid test needs (the sequence data layers that give real lengths are elsewhere)."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4,
                                      "batch_first": True})
    g.add_layer(kind, "rnn", {"num_output": 5, "num_layers": 2, "batch_first": True,
                              "bidirectional": bidirectional, "engine": engine})
    g.add_layer("InnerProduct", "ip", {"num_output": 10, "axis": 1})
    g.add_layer("SoftmaxWithLoss", "loss", {"axis": 1})
    link_all(g, [("data.data", "rnn.x"), ("data.label", "rnn.lengths"), ("rnn.y", "ip.x"),
                 ("ip.y", "loss.logits"), ("data.label", "loss.label")])
    return g


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("engine", ["CUDNN", "CAFFE"])
def test_the_designer_counts_the_parameters_the_engine_builds(kind, engine):
    g = padded_net(kind, engine)
    assert g.errors() == []
    assert g.output("rnn", "y").shape == (4, 28, 10) and g.output("rnn", "y").batch == 0
    net = Net(g)
    assert g.info("rnn").params == count_parameters(net.layers["rnn"])
    one_way = padded_net(kind, engine, bidirectional=False)
    assert g.info("rnn").params > 2 * one_way.info("rnn").params  # layer 2 reads 2H


def test_flops_double_with_the_backward_chain():
    g = padded_net()
    g.set_param("rnn", "num_layers", 1)
    both = g.info("rnn").flops
    g.set_param("rnn", "bidirectional", False)
    assert both == 2 * g.info("rnn").flops


def test_initial_state_and_capture_blockers():
    net = Net(padded_net())
    h, c = net.initial_state(3)["rnn"]
    assert h.shape == c.shape == (4, 3, 5)  # 2 layers x 2 directions
    (why,) = net.capture_blockers()
    assert "rnn runs on cuDNN with a 'lengths' input" in why and "host" in why
    assert Net(padded_net(), "caffe").capture_blockers() == []


@pytest.mark.parametrize("src,dst", [("cudnn", "caffe"), ("caffe", "cudnn")])
def test_trained_weights_convert_both_directions_and_agree(src, dst):
    g = padded_net("GRU")
    feeds = random_feeds(g, torch.device("cpu"))
    lengths = feeds["data.label"]
    assert lengths.min() >= 0 and lengths.max() <= 28
    torch.manual_seed(0)
    a = Net(g, src)
    solver = settings.effective("solver", {"base_lr": 0.01})
    step = TrainStep(a, make_optimizer(a.parameters(), solver, torch.device("cpu")), 5.0)
    losses = [step(feeds).loss.item() for _ in range(3)]
    assert losses[-1] < losses[0]
    b = Net(g, dst)
    layers = {"rnn": ("GRU", 2)}
    b.load_state_dict(convert_state_dict(a.state_dict(), layers, {"rnn": a.engines["rnn"]},
                                         {"rnn": b.engines["rnn"]}))  # strict: all keys
    assert any(k.endswith("_reverse") for k in b.state_dict())
    a.eval(), b.eval()
    with torch.no_grad():
        ya, yb = a(feeds)[("rnn", 0)], b(feeds)[("rnn", 0)]
    assert torch.allclose(ya, yb, atol=2e-5)
    padded = torch.arange(28).unsqueeze(0) >= lengths.unsqueeze(1)  # (N, T), batch first
    assert torch.all(ya[padded] == 0) and torch.all(yb[padded] == 0)


def pooled_net(method: str) -> Graph:
    """Digits row by row as padded sequences (the labels as lengths, a 0 among them):
    LSTM (reading the lengths) -> SequencePool (by the lengths) -> InnerProduct -> loss."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 6,
                                      "batch_first": True})
    g.add_layer("LSTM", "rnn", {"num_output": 5, "batch_first": True})
    g.add_layer("SequencePool", "pool", {"method": method, "attention_units": 3,
                                         "batch_first": True})
    g.add_layer("InnerProduct", "ip", {"num_output": 10})
    g.add_layer("SoftmaxWithLoss", "loss")
    link_all(g, [("data.data", "rnn.x"), ("data.label", "rnn.lengths"), ("rnn.y", "pool.x"),
                 ("data.label", "pool.lengths"), ("pool.y", "ip.x"), ("ip.y", "loss.logits"),
                 ("data.label", "loss.label")])
    assert g.errors() == []
    return g


@pytest.mark.parametrize("method", ["attention", "mean", "max"])
def test_pooling_gives_the_same_outputs_and_gradients_on_both_engines(method):
    g = pooled_net(method)
    feeds = random_feeds(g, torch.device("cpu"))
    lengths = torch.tensor([9, 3, 0, 7, 1, 5])  # labels too: below 10
    feeds["data.label"] = lengths
    padded = torch.arange(28).unsqueeze(0) >= lengths.unsqueeze(1)  # (N, T), batch first
    feeds["data.data"][padded] = 0.0
    torch.manual_seed(0)
    a = Net(g, "cudnn")
    with torch.no_grad():  # scores that are not all zero (attention starts as the mean)
        for p in a.layers["pool"].parameters():
            p.normal_()
    b = Net(g, "caffe")
    layers, src, dst = {"rnn": ("LSTM", 1)}, {"rnn": "CUDNN"}, {"rnn": "CAFFE"}
    b.load_state_dict(convert_state_dict(a.state_dict(), layers, src, dst))
    runs = []
    for net in (a, b):
        x = feeds["data.data"].clone().requires_grad_(True)
        out = net({**feeds, "data.data": x})
        net.loss(out).backward()
        grads = {k: p.grad for k, p in net.named_parameters()}
        runs.append((out[("pool", 0)].detach(), x.grad, grads))
    (ya, xa, ga), (yb, xb, gb) = runs
    assert torch.allclose(ya, yb, atol=2e-5) and torch.equal(ya[2], torch.zeros(5))
    assert torch.allclose(xa, xb, atol=2e-5) and torch.all(xa[padded] == 0)
    ga = convert_state_dict(ga, layers, src, dst)  # cuDNN's gradients in Caffe's layout
    assert ga.keys() == gb.keys()
    for k in ga:  # cuDNN's two biases get one gradient each: converted, they add up
        twice = k.startswith("layers.rnn.b")
        assert torch.allclose(ga[k] / 2 if twice else ga[k], gb[k], atol=2e-5), k
