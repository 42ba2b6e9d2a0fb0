"""MinGRU and MinLSTM as the designer knows them: specs, shapes, counts, memory, warnings."""
import pytest

from designer.graph import Graph, registry
from designer.graph.errors import DesignWarning
from designer.graph.hints import apply
from tests.nets import char_net

KINDS = ["MinGRU", "MinLSTM"]
GATES = {"MinGRU": 2, "MinLSTM": 3}


def warnings(g: Graph, layer: str = "rnn") -> list[DesignWarning]:
    return [p for p in g.problems() if isinstance(p, DesignWarning) and p.layer == layer]


def net(kind: str, **params) -> Graph:
    """data -> Embed 8 -> the layer -> InnerProduct V -> loss, V pinned to 20."""
    return char_net(kind, {"num_output": 16, **params})


@pytest.mark.parametrize("kind", KINDS)
def test_the_spec_holds_the_recurrent_layers_parameters(kind):
    spec = registry.get(kind)
    for name in ("num_output", "num_layers", "dropout_ratio", "batch_first", "bidirectional",
                 "weight_filler", "bias_filler"):
        assert spec.has_param(name)


def test_the_tooltips_give_the_equations_in_words():
    gru, lstm = registry.get("MinGRU").tooltip(), registry.get("MinLSTM").tooltip()
    assert "z = sigmoid(W_z x + b_z)" in gru and "h = (1 - z) * h_prev + z * h~" in gru
    assert "f' = f / (f + i)" in lstm and "h = f' * h_prev + i' * h~" in lstm
    for tip in (gru, lstm):
        assert "g(v) = v + 0.5 for v >= 0 and sigmoid(v) below" in tip
        assert "Were RNNs All We Needed?" in tip and "starts at zero" in tip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("levels,both", [(1, False), (3, False), (2, True)])
def test_parameters_are_the_input_transforms_alone(kind, levels, both):
    g = net(kind, num_layers=levels, bidirectional=both)
    h, d, gates = 16, 2 if both else 1, GATES[kind]
    want = sum(d * (gates * h * (8 if k == 0 else d * h) + gates * h) for k in range(levels))
    assert g.info("rnn").params == want
    gru = net("GRU", num_layers=levels, bidirectional=both)
    assert g.info("rnn").params < gru.info("rnn").params  # no recurrent matrix
    assert g.info("rnn").flops > 0


def test_ids_straight_into_the_layer_are_refused_in_words():
    g = net("MinGRU")
    g.disconnect(g.link_into("rnn", "x"))
    g.connect("data", "data", "rnn", "x")
    assert "token ids must go through an Embed layer first" in str(g.errors()[0])


@pytest.mark.parametrize("kind", KINDS)
def test_one_lone_level_is_warned_about_and_the_fix_stacks_a_second(kind):
    g = net(kind)
    (warning,) = warnings(g)
    text = str(warning)
    assert text.startswith(f"rnn is a {kind} of one level") and "the paper stacks three" in text
    apply(g, warning.fix)
    assert g.layer("rnn").get("num_layers") == 2
    assert not warnings(g)


def test_a_recurrent_layer_after_it_is_enough():
    g = net("MinGRU")
    g.add_layer("MinLSTM", "rnn2", {"num_output": 16, "num_layers": 2})
    g.disconnect(g.link_into("ip1", "x"))
    g.connect("rnn", "y", "rnn2", "x")
    g.connect("rnn2", "y", "ip1", "x")
    assert g.errors() == [] and not warnings(g) and not warnings(g, "rnn2")
