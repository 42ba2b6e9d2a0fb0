"""SequencePool in the graph: its shapes, parameter and FLOP counts, and the warning (with a
one-click fix) when it pools padded sequences without their lengths."""
import pytest

from designer.graph import registry
from designer.graph.hints import apply
from designer.graph.model import Graph
from designer.graph.validate import problem_json
from tests.nets import lengths_cut_short


def classifier(tmp_path, method="attention", units=0, lengths=True) -> Graph:
    f = tmp_path / "x.ts"
    f.write_text("@dimensions 3\n@classLabel true a b\n@data\n1,2:3,4:5,6:a\n1:2:3:b\n")
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": str(f), "batch_size": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 8})
    g.add_layer("Dropout", "drop", {"dropout_ratio": 0.1})
    g.add_layer("SequencePool", "pool", {"method": method, "attention_units": units})
    g.add_layer("InnerProduct", "ip", {"num_output": "K"})
    g.add_layer("SoftmaxWithLoss", "loss")
    for link in (("data", "data", "lstm", "x"), ("data", "lengths", "lstm", "lengths"),
                 ("lstm", "y", "drop", "x"), ("drop", "y", "pool", "x"),
                 ("pool", "y", "ip", "x"), ("ip", "y", "loss", "logits"),
                 ("data", "label", "loss", "label")):
        g.connect(*link)
    if lengths:
        g.connect("data", "lengths", "pool", "lengths")
    return g


def test_the_spec_offers_the_three_methods_and_says_what_each_does():
    spec = registry.get("SequencePool")
    assert spec.param("method").choices == ("mean", "max", "attention")
    assert [p.name for p in spec.inputs] == ["x", "lengths"] and spec.inputs[1].optional
    tip = spec.tooltip()
    for words in ("mean averages", "max keeps", "weigh the informative steps",
                  "length 0 gives zeros", "padded steps"):
        assert words in tip


def test_each_sequence_becomes_one_vector(tmp_path):
    g = classifier(tmp_path)
    assert g.errors() == []
    out = g.output("pool", "y")
    assert out.shape == (4, 8) and out.batch == 0


def test_batch_first_reads_n_t_h_and_a_wrong_layout_says_which_axis_is_the_batch():
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 5, "batch_first": True})
    g.add_layer("SequencePool", "pool", {"method": "max"})
    g.connect("data", "data", "pool", "x")
    (e,) = g.info("pool").problems
    assert "axis 0 is the batch (N)" in str(e) and "set batch_first to true" in str(e)
    g.set_param("pool", "batch_first", True)
    assert g.info("pool").problems == [] and g.output("pool", "y").shape == (5, 28)


def test_lengths_must_be_one_per_sequence(tmp_path):
    g = classifier(tmp_path, lengths=False)
    (e,) = lengths_cut_short(g, "pool")
    assert "one length per sequence, (4,)" in str(e)


@pytest.mark.parametrize("method, units, params", [("mean", 0, 0), ("max", 0, 0),
                                                   ("attention", 0, 8),
                                                   ("attention", 5, 8 * 5 + 5 + 5)])
def test_only_attention_learns_parameters(tmp_path, method, units, params):
    g = classifier(tmp_path, method, units)
    assert g.info("pool").params == params


def test_flops_per_sample_grow_with_the_steps_and_the_scorer(tmp_path):
    g = classifier(tmp_path, "mean")
    g.pin_dims({"T": 10})
    assert g.info("pool").flops == 10 * 8 + 8  # the sum, then the division
    g.set_param("pool", "method", "max")
    assert g.info("pool").flops == 10 * 8
    g.set_param("pool", "method", "attention")
    assert g.info("pool").flops == 10 * (2 * 8 + 3 + 2 * 8)
    g.set_param("pool", "attention_units", 4)
    assert g.info("pool").flops == 10 * (2 * 8 * 4 + 4 * 4 + 3 + 2 * 8)


@pytest.mark.parametrize("method, words", [("attention", "get attention weights too"),
                                           ("mean", "are averaged in"),
                                           ("max", "can win the max")])
def test_pooling_padded_sequences_without_their_lengths_is_told_with_a_fix(tmp_path, method,
                                                                          words):
    g = classifier(tmp_path, method, lengths=False)
    (w,) = [p for p in g.problems() if p.layer == "pool"]
    text = str(w)
    assert words in text and "connect data.lengths to pool.lengths" in text
    assert "\n" not in text and text.count(". ") == 0  # one sentence
    assert problem_json(w)["fix"] == {"kind": "connect", "layer": "pool",
                                      "text": "connect data.lengths to pool.lengths"}
    apply(g, w.fix)
    assert g.link_into("pool", "lengths").src == "data"
    assert [p for p in g.problems() if p.layer == "pool"] == []


def test_sequences_of_one_length_are_not_warned_about():
    g = Graph()
    g.add_layer("TimeSeries", "data", {"file": "nowhere.csv", "inputs": "a,b", "target": "a",
                                       "seq_len": 6, "batch_size": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 5})
    g.add_layer("SequencePool", "pool")
    g.connect("data", "data", "lstm", "x")
    g.connect("lstm", "y", "pool", "x")
    assert [p for p in g.problems() if p.layer == "pool"] == []
