"""The mLSTM as the designer knows it: spec, shapes, counts, memory, its two errors and fixes."""
import pytest

from designer.graph import Graph, registry
from designer.graph.hints import apply
from designer.cells.mlstm.spec import nearest_divisor
from tests.nets import char_net


def net(**params) -> Graph:
    """data -> Embed 8 -> mLSTM 16 -> InnerProduct V -> loss, V pinned to 20."""
    return char_net("mLSTM", {"num_output": 16, "num_heads": 2, **params})


def test_the_forget_gate_is_a_sigmoid_or_an_exponential():
    assert registry.get("mLSTM").param("forget_gate").choices == ("sigmoid", "exp")


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
