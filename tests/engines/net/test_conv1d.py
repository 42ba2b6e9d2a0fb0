"""Conv1D computes what its spec says: torch's conv1d along the steps with the padding asked
for, causal outputs blind to the future, padding after a sequence's end changing neither the
outputs nor the gradients, the parameter count and memory the designer shows, and the same net
with an LSTM behind it computing the same on the cuDNN and the unrolled engines."""
import pytest
import torch
import torch.nn.functional as F

from designer.engines.net.build import Net, count_parameters
from designer.engines.net.conv import Conv1D
from designer.engines.net.convert import convert_state_dict
from designer.graph.memory import Setup, estimate
from designer.graph.model import Graph
from tests.engines.probes import padded_and_junk


def conv_lstm(engine="CUDNN", lengths=True, batch_first=False, **conv) -> Graph:
    """Sequences of 3 features (T unknown, batch 4) -> Conv1D -> LSTM -> SequenceLast."""
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
    g.pin_dims({"F": 3})
    g.add_layer("Conv1D", "conv", {"num_output": 6, "kernel_size": 3, **conv})
    g.add_layer("LSTM", "lstm", {"num_output": 5, "engine": engine})
    g.add_layer("SequenceLast", "last")
    g.connect("data", "data", "conv", "x")
    g.connect("conv", "y", "lstm", "x")
    g.connect("lstm", "y", "last", "x")
    if lengths:
        for layer in ("conv", "lstm", "last"):
            g.connect("data", "lengths", layer, "lengths")
    assert g.errors() == []
    return g


def reference(x, conv, pads):
    """torch's conv1d on (N, C, T), from and to (T, N, C)."""
    y = F.conv1d(F.pad(x.permute(1, 2, 0), pads), conv.weight, conv.bias, conv.stride,
                 0, conv.dilation, conv.groups)
    return y.permute(2, 0, 1)


@pytest.mark.parametrize("params, pads", [
    ({}, (1, 1)), ({"padding": "causal", "dilation": 2}, (4, 0)),
    ({"padding": "valid", "stride": 2}, (0, 0)), ({"kernel_size": 4}, (1, 2)),
    ({"groups": 3, "num_output": 6}, (1, 1))])
def test_conv_is_torchs_conv1d_along_the_steps(params, pads):
    torch.manual_seed(0)
    net = Net(conv_lstm(lengths=False, **params))
    conv = net.layers["conv"]
    assert conv.pads == pads
    x = torch.randn(9, 4, 3)
    assert torch.allclose(conv(x), reference(x, conv.conv, pads), atol=1e-6)
    first = Conv1D(3, 6, 3, 1, 1, 1, True, pads, True)  # the same layer, batch-first
    first.conv = conv.conv
    assert torch.allclose(first(x.transpose(0, 1)).transpose(0, 1), conv(x), atol=1e-6)


def test_a_causal_conv_never_sees_the_future():
    torch.manual_seed(0)
    conv = Net(conv_lstm(lengths=False, padding="causal", dilation=2)).layers["conv"]
    x = torch.randn(8, 4, 3)
    later = x.clone()
    later[5:] = torch.randn(3, 4, 3)
    assert torch.equal(conv(x)[:5], conv(later)[:5])


@pytest.mark.parametrize("padding", ["same", "causal"])
def test_padding_after_the_end_changes_neither_outputs_nor_gradients(padding):
    torch.manual_seed(0)
    net = Net(conv_lstm(padding=padding))
    lengths = torch.tensor([2, 6, 4, 1])
    x, noisy = padded_and_junk(lengths, 6, 3)

    def run(data):
        net.zero_grad()
        out = net({"data.data": data, "data.lengths": lengths})
        out.blobs[("last", 0)].square().sum().backward()
        return out.blobs[("conv", 0)].detach(), out.blobs[("last", 0)].detach(), \
            [p.grad.clone() for p in net.parameters()]

    conv0, y0, g0 = run(x)
    conv1, y1, g1 = run(noisy)
    assert torch.equal(conv0, conv1) and torch.equal(y0, y1)
    assert all(torch.equal(a, b) for a, b in zip(g0, g1))
    padded = torch.arange(6).unsqueeze(1) >= lengths.unsqueeze(0)  # (T, N)
    assert torch.all(conv0[padded] == 0)  # like the recurrent layers: 0 at padded steps
    alone = net.layers["conv"](x[:2, :1])  # the first sequence on its own, unpadded
    assert torch.allclose(conv0[:2, :1], alone, atol=1e-6)


def test_the_designer_counts_the_parameters_the_engine_builds():
    g = conv_lstm(groups=3, num_output=9, bias_term=False)
    net = Net(g)
    assert g.info("conv").params == count_parameters(net.layers["conv"]) == 9 * 1 * 3


@pytest.mark.parametrize("src, dst", [("cudnn", "caffe"), ("caffe", "cudnn")])
def test_a_conv_and_lstm_net_computes_the_same_on_both_engines(src, dst):
    g = conv_lstm(padding="causal")
    torch.manual_seed(0)
    a, b = Net(g, src), Net(g, dst)
    b.load_state_dict(convert_state_dict(a.state_dict(), {"lstm": ("LSTM", 1)},
                                         {"lstm": a.engines["lstm"]},
                                         {"lstm": b.engines["lstm"]}))
    feeds = {"data.data": torch.randn(7, 4, 3), "data.lengths": torch.tensor([7, 3, 5, 1])}
    with torch.no_grad():
        ya, yb = a(feeds)[("last", 0)], b(feeds)[("last", 0)]
    assert torch.allclose(ya, yb, atol=2e-5)


@pytest.mark.parametrize("params", [{"padding": "valid"}, {"padding": "same"},
                                    {"lengths": True, "padding": "causal"}])
def test_the_memory_estimate_matches_the_saved_tensors(params):
    g = conv_lstm("CAFFE", lengths=params.pop("lengths", False), **params)
    g.pin_dims({"T": 16})
    torch.manual_seed(0)
    conv = Net(g).train().layers["conv"]
    x, lengths = torch.randn(16, 4, 3, requires_grad=True), torch.tensor([16, 3, 9, 1])
    skip = {t.untyped_storage().data_ptr() for t in (x, *conv.parameters())}
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in skip and t.dtype != torch.bool:  # the (N, T) flags are small
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        conv(x, lengths if g.link_into("conv", "lengths") else None)
    assert estimate(g, Setup("cpu", "caffe")).layers["conv"] == sum(seen.values())
