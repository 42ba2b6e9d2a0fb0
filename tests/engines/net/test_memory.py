"""The activation estimate against what torch really keeps for the backward pass (its saved
tensors, each storage once, the weights left out), on the CPU, per recurrent kind and engine."""
import pytest
import torch

from designer.engines.net.build import Net
from designer.engines.measure.bench import random_feeds
from designer.graph import Graph
from designer.graph.memory import Setup, estimate
from tests.engines.probes import saved_bytes as saved_by
from tests.nets import link_all


def net_graph(kind: str, levels: int, dropout: float, cont: bool, both: bool = False) -> Graph:
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 24, "batch_size": 8})
    g.add_layer("Embed", "embed", {"num_output": 32, "input_dim": 40})
    params = {"num_output": 64, "num_layers": levels, "dropout_ratio": dropout,
              "bidirectional": both}
    g.add_layer(kind, "rnn", params if kind != "LSTMSimple" else {"num_output": 64})
    g.add_layer("Dropout", "drop", {"dropout_ratio": 0.2})
    g.add_layer("InnerProduct", "ip1", {"num_output": 40, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    links = [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "drop.x"),
             ("drop.y", "ip1.x"), ("ip1.y", "loss.logits"), ("data.label", "loss.label")]
    if cont:
        links.append(("data.cont", "rnn.cont"))
    link_all(g, links)
    g.pin_dims({"V": 40})
    return g


def saved_bytes(net: Net, feeds: dict) -> int:
    """Bytes of the tensors one forward pass keeps for backward, weights and the batch left
    out (counted elsewhere in the estimate)."""
    return saved_by(lambda: net.loss(net(feeds)), *net.parameters(), *feeds.values())


CASES = [("LSTM", "caffe", 2, 0.3, True), ("LSTM", "caffe", 1, 0.0, False),
         ("GRU", "caffe", 2, 0.0, False), ("RNN", "caffe", 2, 0.3, False),
         ("LSTMSimple", "caffe", 1, 0.0, True),
         ("GRU", "cudnn", 2, 0.3, False), ("RNN", "cudnn", 1, 0.0, False),
         ("LSTM", "caffe", 2, 0.0, False, True), ("GRU", "caffe", 1, 0.0, False, True)]


@pytest.mark.parametrize("kind,engine,levels,dropout,cont,both",
                         [c if len(c) == 6 else c + (False,) for c in CASES])
def test_the_estimate_matches_the_saved_tensors(kind, engine, levels, dropout, cont, both):
    g = net_graph(kind, levels, dropout, cont, both)
    torch.manual_seed(0)
    net = Net(g, engine if kind != "LSTMSimple" else None).train()
    measured = saved_bytes(net, random_feeds(g, torch.device("cpu")))
    est = estimate(g, Setup("cpu", engine)).activations
    assert abs(est - measured) / measured < 0.10, (est, measured)


def test_onednn_keeps_a_larger_workspace_than_it_writes():
    """The cuDNN engine's LSTM on the CPU runs on oneDNN, whose workspace is reserved larger
    than what it writes: the estimate counts what becomes resident (RSS), a share of it."""
    g = net_graph("LSTM", 2, 0.3, False)
    net = Net(g, "cudnn").train()
    measured = saved_bytes(net, random_feeds(g, torch.device("cpu")))
    est = estimate(g, Setup("cpu", "cudnn")).activations
    assert 0.5 < est / measured < 0.9, (est, measured)
