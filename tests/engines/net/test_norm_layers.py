"""BatchNorm and LayerNorm compute what their specs say: the masked batch norm's statistics are
those of the valid steps alone, padded steps change no valid output, evaluation uses the running
statistics, and a net with them and an LSTM computes the same on the cuDNN and unrolled
engines."""
import pytest
import torch

from designer.engines.net.build import Net
from designer.engines.net.convert import convert_state_dict
from designer.engines.net.norm import SequenceBatchNorm
from designer.graph.model import Graph

LENGTHS = torch.tensor([6, 2, 4, 1])


def padded(seed: int = 0, steps: int = 6, channels: int = 3) -> torch.Tensor:
    return torch.randn(steps, 4, channels, generator=torch.Generator().manual_seed(seed))


def refill_padding(x: torch.Tensor, lengths=LENGTHS, batch_first=False) -> torch.Tensor:
    """``x`` with every padded step replaced by large random values."""
    y = x.clone()
    for n, length in enumerate(lengths.tolist()):
        noise = 100 * torch.randn(y.shape[-1]) + 50
        if batch_first:
            y[n, length:] = noise
        else:
            y[length:, n] = noise
    return y


def valid_values(x: torch.Tensor, lengths=LENGTHS) -> torch.Tensor:
    """The valid steps of (T, N, C) ``x`` as rows of C."""
    return torch.cat([x[:length, n] for n, length in enumerate(lengths.tolist())])


def test_the_masked_statistics_are_those_of_the_valid_steps_alone():
    x = padded()
    bn = SequenceBatchNorm(3, 1e-5, 0.25, affine=False, batch_first=False)
    y = bn(x, LENGTHS)
    rows = valid_values(x)  # what a batch norm over the valid steps alone sees
    ref = torch.nn.BatchNorm1d(3, momentum=0.25, affine=False)
    want = ref(rows)
    assert torch.allclose(valid_values(y), want, atol=1e-5)
    assert torch.allclose(bn.running_mean, ref.running_mean, atol=1e-6)
    assert torch.allclose(bn.running_var, ref.running_var, atol=1e-6)
    assert int(bn.num_batches_tracked) == 1


@pytest.mark.parametrize("batch_first", [False, True])
def test_padded_steps_change_neither_the_statistics_nor_the_valid_outputs(batch_first):
    x = padded(1)
    if batch_first:
        x = x.transpose(0, 1).contiguous()
    a = SequenceBatchNorm(3, 1e-5, 0.1, affine=True, batch_first=batch_first)
    b = SequenceBatchNorm(3, 1e-5, 0.1, affine=True, batch_first=batch_first)
    with torch.no_grad():
        a.weight.uniform_(0.5, 2), a.bias.uniform_(-1, 1)
    b.load_state_dict(a.state_dict())
    ya, yb = a(x, LENGTHS), b(refill_padding(x, batch_first=batch_first), LENGTHS)
    if batch_first:
        ya, yb = ya.transpose(0, 1), yb.transpose(0, 1)
    assert torch.allclose(valid_values(ya), valid_values(yb), atol=1e-5)
    assert torch.allclose(a.running_mean, b.running_mean)
    assert torch.allclose(a.running_var, b.running_var)


def test_without_lengths_it_is_torchs_batch_norm_over_every_step():
    x = padded(2)
    bn = SequenceBatchNorm(3, 1e-5, 0.1, affine=True, batch_first=False)
    ref = torch.nn.BatchNorm1d(3)
    ref.load_state_dict(bn.state_dict())
    assert torch.allclose(bn(x), ref(x.reshape(-1, 3)).reshape(x.shape), atol=1e-6)
    assert torch.allclose(bn.running_var, ref.running_var)
    bn.eval(), ref.eval()  # evaluation: the running statistics, whatever the lengths
    assert torch.allclose(bn(x, LENGTHS), ref(x.reshape(-1, 3)).reshape(x.shape), atol=1e-6)


def test_the_masked_batch_norm_passes_gradcheck_in_float64():
    x = padded(3, steps=4, channels=2).double().requires_grad_()
    bn = SequenceBatchNorm(2, 1e-5, 0.1, affine=True, batch_first=False).double()
    lengths = torch.tensor([4, 2, 3, 1])
    assert torch.autograd.gradcheck(lambda v: bn(v, lengths), (x,))


def test_layer_norm_keeps_padded_steps_off_the_valid_ones():
    g = Graph()
    g.add_layer("TimeSeries", "data", {"file": "nowhere.csv", "inputs": "a,b,c", "target": "a",
                                       "seq_len": 6, "batch_size": 4})
    g.add_layer("LayerNorm", "ln")
    g.connect("data", "data", "ln", "x")
    net = Net(g)
    x = padded(4)
    ya = net({"data.data": x}).blobs[("ln", 0)]
    yb = net({"data.data": refill_padding(x)}).blobs[("ln", 0)]
    assert torch.allclose(valid_values(ya), valid_values(yb))
    assert torch.allclose(ya.mean(-1), torch.zeros(6, 4), atol=1e-5)


def sequences_file(folder) -> str:
    """A long-format CSV of six labelled sequences of three features, 1 to 6 steps long."""
    rows = ["series_id,step,a,b,c,label"]
    for s, n in enumerate((6, 2, 4, 1, 5, 3)):
        rows += [f"{s},{t},{(s * 7 + t) % 5 * 0.3:.2f},{(t * 3 - s) * 0.1:.2f},{t * 0.2:.1f},"
                 f"{'ab'[s % 2]}" for t in range(n)]
    path = folder / "seqs.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def norm_net(file: str, engine: str) -> Graph:
    """Labelled padded sequences -> LSTM -> BatchNorm (by the lengths) -> LayerNorm ->
    SequenceLast -> BatchNorm over vectors -> InnerProduct -> loss."""
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": file, "batch_size": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 5, "engine": engine})
    g.add_layer("BatchNorm", "bn", {"momentum": 0.3})
    g.add_layer("LayerNorm", "ln")
    g.add_layer("SequenceLast", "last")
    g.add_layer("BatchNorm", "bn_last")
    g.add_layer("InnerProduct", "ip", {"num_output": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for link in (("data", "data", "lstm", "x"), ("data", "lengths", "lstm", "lengths"),
                 ("lstm", "y", "bn", "x"), ("data", "lengths", "bn", "lengths"),
                 ("bn", "y", "ln", "x"), ("ln", "y", "last", "x"),
                 ("data", "lengths", "last", "lengths"), ("last", "y", "bn_last", "x"),
                 ("bn_last", "y", "ip", "x"), ("ip", "y", "loss", "logits"),
                 ("data", "label", "loss", "label")):
        g.connect(*link)
    return g


def test_a_net_with_norms_computes_the_same_on_cudnn_and_unrolled_engines(tmp_path):
    file = sequences_file(tmp_path)
    gs = {e: norm_net(file, e) for e in ("CUDNN", "CAFFE")}
    assert gs["CUDNN"].errors() == [] and gs["CUDNN"].info("bn").inputs[0].shape[1:] == (4, 5)
    feeds = {"data.data": padded(5), "data.lengths": LENGTHS,
             "data.label": torch.tensor([0, 1, 1, 0])}
    torch.manual_seed(0)
    a = Net(gs["CUDNN"])
    b = Net(gs["CAFFE"])
    with torch.no_grad():
        for m in a.modules():
            if isinstance(m, (SequenceBatchNorm, torch.nn.LayerNorm)):
                m.weight.uniform_(0.5, 2), m.bias.uniform_(-1, 1)
    b.load_state_dict(convert_state_dict(a.state_dict(), {"lstm": ("LSTM", 1)},
                                         {"lstm": "CUDNN"}, {"lstm": "CAFFE"}))
    oa, ob = a(feeds), b(feeds)  # training mode: the batch's (masked) statistics
    assert torch.allclose(oa.blobs[("ip", 0)], ob.blobs[("ip", 0)], atol=2e-5)
    la, lb = a.loss(oa), b.loss(ob)
    la.backward(), lb.backward()
    for key in ("bn.weight", "ln.bias", "bn_last.weight", "ip.linear.weight"):
        ga = a.layers.get_parameter(key).grad
        gb = b.layers.get_parameter(key).grad
        assert torch.allclose(ga, gb, atol=2e-5), key
    for key in ("bn.running_mean", "bn.running_var", "bn_last.running_var"):
        assert torch.allclose(a.layers.get_buffer(key), b.layers.get_buffer(key), atol=1e-6)
    a.eval(), b.eval()
    with torch.no_grad():
        ea, eb = a(feeds).blobs[("ip", 0)], b(feeds).blobs[("ip", 0)]
    assert torch.allclose(ea, eb, atol=2e-5)


def test_a_non_finite_batch_leaves_the_running_statistics_as_they_were():
    for lengths in (None, LENGTHS):
        bn = SequenceBatchNorm(3, 1e-5, 0.1, affine=True, batch_first=False)
        bn(padded(6), lengths)
        mean, var = bn.running_mean.clone(), bn.running_var.clone()
        x = padded(7)
        x[0, 0, 1] = float("nan")
        bn(x, lengths)
        assert torch.equal(bn.running_mean, mean) and torch.equal(bn.running_var, var)
        assert int(bn.num_batches_tracked) == 2


@pytest.mark.parametrize("lengths", [False, True])
def test_the_memory_estimate_matches_the_saved_tensors(tmp_path, lengths):
    from designer.engines.measure.bench import random_feeds
    from designer.graph.memory import Setup, estimate
    from tests.engines.net.test_memory import saved_bytes
    g = norm_net(sequences_file(tmp_path), "CAFFE")
    g.pin_dims({"T": 6})
    if not lengths:
        g.disconnect(g.link_into("bn", "lengths"))
    torch.manual_seed(0)
    net = Net(g).train()
    measured = saved_bytes(net, random_feeds(g, torch.device("cpu")))
    est = estimate(g, Setup("cpu", "caffe")).activations
    assert abs(est - measured) / measured < 0.10, (est, measured)
