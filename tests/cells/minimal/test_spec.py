"""MinGRU and MinLSTM as the designer knows them: specs, shapes, counts, memory, warnings."""
import pytest

from designer.graph import Graph, registry
from designer.graph.errors import DesignWarning, ParamError
from designer.graph.hints import apply
from designer.graph.registry import engine_for, weight_layout
from designer.graph.memory import Setup, estimate

KINDS = ["MinGRU", "MinLSTM"]
GATES = {"MinGRU": 2, "MinLSTM": 3}


def warnings(g: Graph, layer: str = "rnn") -> list[DesignWarning]:
    return [p for p in g.problems() if isinstance(p, DesignWarning) and p.layer == layer]


def net(kind: str, **params) -> Graph:
    """data -> Embed 8 -> the layer -> InnerProduct V -> loss, V pinned to 20."""
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 12, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8, "input_dim": 20})
    g.add_layer(kind, "rnn", {"num_output": 16, **params})
    g.add_layer("InnerProduct", "ip1", {"num_output": 20, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for a, b in [("data.data", "embed.x"), ("embed.y", "rnn.x"), ("rnn.y", "ip1.x"),
                 ("ip1.y", "loss.logits"), ("data.label", "loss.label")]:
        (s, sp), (d, dp) = a.split("."), b.split(".")
        g.connect(s, sp, d, dp)
    g.pin_dims({"V": 20})
    return g


@pytest.mark.parametrize("kind", KINDS)
def test_the_spec_offers_the_scan_by_default_and_the_unrolled_net(kind):
    spec = registry.get(kind)
    assert spec.category == "Recurrent"
    assert spec.param("engine").choices == ("SCAN", "CAFFE")
    assert spec.param("engine").default == "SCAN"
    assert [p.name for p in spec.inputs] == ["x", "cont", "lengths"]
    for name in ("num_output", "num_layers", "dropout_ratio", "batch_first", "bidirectional",
                 "weight_filler", "bias_filler"):
        assert spec.has_param(name)
    with pytest.raises(ParamError, match="one of SCAN, CAFFE"):
        spec.param("engine").check("CUDNN")


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


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_follow_the_recurrent_layers(kind):
    g = net(kind)
    assert g.errors() == [] and g.output("rnn", "y").shape == (12, 4, 16)
    g.set_param("rnn", "bidirectional", True)
    assert g.output("rnn", "y").shape == (12, 4, 32)
    g.connect("data", "cont", "rnn", "cont")
    assert "rnn is bidirectional: its backward half reads each sequence from the end" in \
        str(g.errors()[0])
    g.disconnect(g.link_into("rnn", "cont"))
    g.set_param("rnn", "batch_first", True)
    assert "rnn reads (12, 4, 8) as (N, T, E) since batch_first is true" in str(g.errors()[0])


def test_ids_straight_into_the_layer_are_refused_in_words():
    g = net("MinGRU")
    g.disconnect(g.link_into("rnn", "x"))
    g.connect("data", "data", "rnn", "x")
    assert "token ids must go through an Embed layer first" in str(g.errors()[0])


def test_the_engines_and_their_tensors():
    assert weight_layout("SCAN") == "CAFFE"  # the scan holds the unrolled net's tensors
    assert engine_for("MinGRU", "cudnn") == "SCAN" and engine_for("MinLSTM", "persist") == "SCAN"
    assert engine_for("MinGRU", "caffe") == "CAFFE" and engine_for("LSTM", "cudnn") == "CUDNN"


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


@pytest.mark.parametrize("kind", KINDS)
def test_the_memory_estimate_knows_both_engines(kind):
    g = net(kind, num_layers=2)
    scan = estimate(g, Setup("cpu", "cudnn"))  # all fused: the scan
    unrolled = estimate(g, Setup("cpu", "caffe"))
    assert scan.layers["rnn"] > unrolled.layers["rnn"] > 0
    g.set_param("rnn", "engine", "CAFFE")
    assert estimate(g, Setup("cpu")).layers["rnn"] == unrolled.layers["rnn"]
