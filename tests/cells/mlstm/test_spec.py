"""The mLSTM as the designer knows it: spec, shapes, counts, memory, its two errors and fixes."""
import pytest

from designer.graph import Graph, registry
from designer.graph.errors import ParamError
from designer.graph.hints import apply
from designer.cells.mlstm.spec import nearest_divisor
from designer.graph.registry import engine_for, weight_layout
from designer.graph.memory import Setup, estimate


def net(**params) -> Graph:
    """data -> Embed 8 -> mLSTM 16 -> InnerProduct V -> loss, V pinned to 20."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, "input_dim": 20})
    g.add_layer("mLSTM", "rnn", {"num_output": 16, "num_heads": 2, **params})
    g.add_layer("InnerProduct", "ip1", {"num_output": 20, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for a, b in [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    g.pin_dims({"V": 20})
    return g


def test_the_spec_offers_the_chunkwise_form_by_default_and_the_unrolled_net():
    spec = registry.get("mLSTM")
    assert spec.category == "Recurrent"
    assert spec.param("engine").choices == ("CHUNK", "CAFFE")
    assert spec.param("engine").default == "CHUNK"
    assert spec.param("forget_gate").choices == ("sigmoid", "exp")
    assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
    with pytest.raises(ParamError, match="one of CHUNK, CAFFE"):
        spec.param("engine").check("CUDNN")


def test_the_tooltip_gives_the_equations_in_words():
    tip = registry.get("mLSTM").tooltip()
    for words in ("q = W_q x + b_q", "k = (W_k x + b_k) / sqrt(d)", "v = W_v x + b_v",
                  "i = exp(i~)", "f = sigmoid(f~) (or exp(f~))", "C_t = f C_{t-1} + i v k^T",
                  "n_t = f n_{t-1} + i k", "h~ = (C q) / max(|n^T q|, 1)",
                  "normalised per head", "h = o * h~",
                  "m_t = max(log f + m_{t-1}, i~)", "xLSTM", "lengths"):
        assert words in tip


@pytest.mark.parametrize("levels", [1, 3])
def test_parameters_flops_and_shapes(levels):
    g = net(num_layers=levels)
    rows = 4 * 16 + 2 * 2
    want = sum(rows * ((8 if k == 0 else 16) + 1) for k in range(levels))
    assert g.errors() == [] and g.info("rnn").params == want
    assert g.output("rnn", "y").shape == (12, 4, 16)
    assert g.info("rnn").flops > levels * 2 * rows * 8  # the projections and the memory
    g.set_param("rnn", "batch_first", True)
    assert "rnn reads (12, 4, 8) as (N, T, E) since batch_first is true" in str(g.errors()[0])


@pytest.mark.parametrize("h,heads,good", [(16, 3, 2), (12, 5, 4), (48, 5, 4), (10, 20, 10)])
def test_the_nearest_head_count_that_divides(h, heads, good):
    assert nearest_divisor(h, heads) == good


def test_heads_that_do_not_divide_the_hidden_size_are_an_error_with_its_fix():
    g = net(num_heads=3)
    (error,) = g.errors()
    assert str(error) == ("rnn splits its 16 hidden units into 3 heads, but 3 does not divide "
                          "16: every head holds an equal share of q, k and v; set rnn's "
                          "num_heads to 2")
    assert error.layer == "rnn" and error.fix.param == "num_heads"
    apply(g, error.fix)
    assert g.layer("rnn").get("num_heads") == 2 and g.errors() == []


def test_bidirectional_is_an_error_whose_fix_turns_it_off():
    g = net(bidirectional=True)
    (error,) = g.errors()
    assert "rnn is an mLSTM asked to run bidirectional, which it cannot" in str(error)
    assert str(error).endswith("set rnn's bidirectional to false")
    apply(g, error.fix)
    assert g.errors() == [] and g.output("rnn", "y").shape == (12, 4, 16)


def test_the_engines_and_their_tensors():
    assert weight_layout("CHUNK") == "CAFFE"  # the chunkwise form holds the unrolled tensors
    assert engine_for("mLSTM", "cudnn") == "CHUNK" and engine_for("mLSTM", "persist") == "CHUNK"
    assert engine_for("mLSTM", "caffe") == "CAFFE"


def test_the_memory_estimate_knows_both_engines():
    g = net(num_layers=2)
    chunk = estimate(g, Setup("cpu", "cudnn"))
    unrolled = estimate(g, Setup("cpu", "caffe"))
    assert chunk.layers["rnn"] > 0 and unrolled.layers["rnn"] > 0
    assert chunk.layers["rnn"] != unrolled.layers["rnn"]
    g.set_param("rnn", "engine", "CAFFE")
    assert estimate(g, Setup("cpu")).layers["rnn"] == unrolled.layers["rnn"]
