"""The layers of a sequence head compute what their specs say: SequenceLast picks each
sequence's last valid step (padding after the end changes nothing, forward or backward),
EuclideanLoss is Caffe's sum of squares / 2N, L1Loss the sum of absolute values / N."""
import torch

from designer.engines.net.build import Net
from designer.graph.model import Graph
from tests.engines.probes import padded_and_junk


def head(loss: str = "EuclideanLoss", horizon: int = 3) -> Net:
    g = Graph()
    g.add_layer("TimeSeries", "data", {"file": "nowhere.csv", "inputs": "a,b", "target": "a",
                                       "seq_len": 6, "batch_size": 4, "horizon": horizon})
    g.add_layer("LSTM", "lstm", {"num_output": 5})
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip", {"num_output": "P"})
    g.add_layer(loss, "loss")
    for link in (("data", "data", "lstm", "x"), ("lstm", "y", "last", "x"),
                 ("last", "y", "ip", "x"), ("ip", "y", "loss", "pred"),
                 ("data", "label", "loss", "label")):
        g.connect(*link)
    assert g.errors() == []
    return Net(g)


def test_euclidean_loss_is_the_sum_of_squares_over_twice_the_batch():
    torch.manual_seed(0)
    net = head()
    x, label = torch.randn(6, 4, 2), torch.randn(4, 3, 1)
    out = net({"data.data": x, "data.label": label})
    pred = out[("ip", 0)]
    want = ((pred - label.reshape(4, 3)) ** 2).sum() / (2 * 4)
    assert torch.allclose(net.loss(out), want)
    assert torch.allclose(net.squared_error(out, "loss"),
                          ((pred - label.reshape(4, 3)) ** 2).mean())


def test_l1_loss_is_the_sum_of_absolute_differences_over_the_batch():
    torch.manual_seed(0)
    net = head("L1Loss")
    x, label = torch.randn(6, 4, 2), torch.randn(4, 3, 1)
    out = net({"data.data": x, "data.label": label})
    want = (out[("ip", 0)] - label.reshape(4, 3)).abs().sum() / 4
    assert torch.allclose(net.loss(out), want)


def test_the_squared_error_speaks_in_the_targets_units():
    torch.manual_seed(0)
    net = head()
    net.set_unit_scale(torch.tensor([10.0]))
    out = net({"data.data": torch.randn(6, 4, 2), "data.label": torch.zeros(4, 3, 1)})
    assert torch.allclose(net.squared_error(out, "loss"), (out[("ip", 0)] * 10).pow(2).mean())


def classifier(tmp_path, features: int) -> Net:
    f = tmp_path / "x.ts"
    f.write_text(f"@dimensions {features}\n@classLabel true a b\n@data\n"
                 + ":".join(["1,2"] * features) + ":a\n")
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": str(f), "batch_size": 3})
    g.add_layer("LSTM", "lstm", {"num_output": 4})
    g.add_layer("SequenceLast", "last")
    g.connect("data", "data", "lstm", "x")
    g.connect("lstm", "y", "last", "x")
    g.connect("data", "lengths", "last", "lengths")
    return Net(g)


def test_sequence_last_reads_each_sequence_at_its_own_end(tmp_path):
    torch.manual_seed(0)
    net = classifier(tmp_path, 7)
    lengths = torch.tensor([2, 5, 3])
    x = torch.randn(5, 3, 7)
    y_all = net.layers["lstm"](x)[0]
    got = net({"data.data": x, "data.lengths": lengths}).blobs[("last", 0)]
    for i, n in enumerate(lengths.tolist()):
        assert torch.equal(got[i], y_all[n - 1, i])


def test_padding_after_the_end_changes_neither_outputs_nor_gradients(tmp_path):
    torch.manual_seed(0)
    net = classifier(tmp_path, 2)
    lengths = torch.tensor([2, 4, 3])
    x, noisy = padded_and_junk(lengths, 4, 2)

    def run(data):
        net.zero_grad()
        y = net({"data.data": data, "data.lengths": lengths}).blobs[("last", 0)]
        y.square().sum().backward()
        return y.detach(), [p.grad.clone() for p in net.parameters()]

    y0, g0 = run(x)
    y1, g1 = run(noisy)
    assert torch.equal(y0, y1)
    assert all(torch.equal(a, b) for a, b in zip(g0, g1))


def test_after_a_bidirectional_layer_each_half_is_read_where_it_has_seen_everything():
    from designer.engines.net.layers import SequenceLast
    x = torch.randn(5, 3, 6)
    lengths = torch.tensor([5, 2, 4])
    y = SequenceLast(False, bidirectional=True)(x, lengths)
    for i, n in enumerate(lengths.tolist()):
        assert torch.equal(y[i, :3], x[n - 1, i, :3]) and torch.equal(y[i, 3:], x[0, i, 3:])
