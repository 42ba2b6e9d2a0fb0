"""Bidirectional recurrent layers and sequence lengths in the designer: shapes, counts and the
problems told in words."""
import pytest

from designer.graph import Graph, registry


def rows_net(kind="LSTM", batch_first=False, **params) -> Graph:
    """Digit rows (T=28, N=4) into a recurrent layer; the labels are an (N,) index tensor."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4,
                                      "batch_first": batch_first})
    g.add_layer(kind, "rnn", {"num_output": 8, "batch_first": batch_first, **params})
    g.connect("data", "data", "rnn", "x")
    return g


@pytest.mark.parametrize("batch_first,shape,batch", [(False, (28, 4, 16), 1),
                                                     (True, (4, 28, 16), 0)])
def test_a_bidirectional_layer_outputs_both_directions_on_the_same_batch_axis(batch_first,
                                                                            shape, batch):
    g = rows_net(batch_first=batch_first, bidirectional=True)
    y = g.output("rnn", "y")
    assert y.shape == shape and y.batch == batch
    assert g.errors() == []


@pytest.mark.parametrize("kind,gates", [("LSTM", 4), ("GRU", 3), ("RNN", 1)])
def test_the_backward_chain_doubles_the_weights_and_the_next_layer_reads_2h(kind, gates):
    g = rows_net(kind, num_layers=2, engine="CAFFE")
    one_way = g.info("rnn").params
    g.set_param("rnn", "bidirectional", True)
    h, e = 8, 28
    biases = 2 if kind == "GRU" else 1
    level = lambda inp: gates * h * (inp + h) + biases * gates * h  # noqa: E731
    assert one_way == level(e) + level(h)
    assert g.info("rnn").params == 2 * (level(e) + level(2 * h))


def test_lengths_are_one_whole_number_per_sequence():
    g = rows_net(batch_first=True)
    g.connect("data", "label", "rnn", "lengths")  # (N,) ids: accepted
    assert g.errors() == [] and g.info("rnn").inputs[2].shape == (4,)
    g.disconnect(g.link_into("rnn", "lengths"))
    g.add_layer("CharText", "text", {"corpus": "missing.txt", "seq_len": 28, "batch_size": 4})
    g.connect("text", "data", "rnn", "lengths")
    (p,) = g.errors()
    assert p.layer == "rnn" and p.port == "lengths"
    assert str(p).startswith("rnn expects one length per sequence, (4,) on 'lengths', but "
                             "text gives (28, 4) ids")
    g.disconnect(g.link_into("rnn", "lengths"))
    g.connect("data", "data", "rnn", "lengths")
    (p,) = g.errors()
    assert "rnn expects integer ids on 'lengths'" in str(p)


def test_cont_on_a_bidirectional_layer_is_refused_with_the_fix():
    g = Graph()
    g.add_layer("CharText", "text", {"corpus": "missing.txt", "seq_len": 10, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 6, "input_dim": 30})
    g.add_layer("GRU", "gru", {"num_output": 8, "bidirectional": True})
    g.connect("text", "data", "embed", "x")
    g.connect("embed", "y", "gru", "x")
    assert g.errors() == []
    g.connect("text", "cont", "gru", "cont")
    (p,) = g.errors()
    assert p.layer == "gru" and p.port == "cont"
    assert "gru is bidirectional" in str(p) and "disconnect 'cont'" in str(p)
    assert (p.fix.kind, p.fix.param, p.fix.value) == ("set", "bidirectional", False)


def test_bidirectional_is_a_shaping_parameter_and_documented():
    for kind in ("LSTM", "GRU", "RNN"):
        spec = registry.get(kind)
        assert spec.param("bidirectional").shaping and spec.param("bidirectional").default is False
        assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
        tip = spec.tooltip()
        assert "lengths (optional)" in tip and "bidirectional = False" in tip
        assert "2H" in spec.outputs[0].help
    simple = registry.get("LSTMSimple")  # the caffe-lstm layer stays as MyCaffe has it
    assert not simple.has_param("bidirectional")
    assert [p.name for p in simple.inputs] == ["x", "cont"]
