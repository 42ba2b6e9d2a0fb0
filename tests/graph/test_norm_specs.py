"""BatchNorm and LayerNorm as the designer sees them: shapes over sequences and vectors, the
learned parameters and FLOPs, the memory estimate, and the Problems panel's warnings (a
BatchNorm on a batch of one, with its fix; channels not known yet)."""
import pytest

from designer.graph import Graph, hints, registry
from designer.graph.errors import DesignWarning
from designer.graph.memory import Setup, estimate


def series(batch: int = 4, first: bool = False, file: str = "nowhere.csv") -> Graph:
    """TimeSeries (two inputs, so C = 2 even before the file is read) -> LSTM 6."""
    g = Graph()
    g.add_layer("TimeSeries", "data", {"file": file, "inputs": "a,b", "target": "a",
                                       "seq_len": 5, "batch_size": batch})
    if first:  # a (N, T, E) view of the data, as a user's own layout would be
        g.add_layer("Reshape", "nte", {"shape": [0, 0, 0], "axis": 0, "num_axes": -1})
        g.connect("data", "data", "nte", "x")
    g.add_layer("LSTM", "lstm", {"num_output": 6, "batch_first": first})
    g.connect("nte" if first else "data", "y" if first else "data", "lstm", "x")
    return g


def add_norm(g: Graph, kind: str, name: str, src: str, **params) -> None:
    g.add_layer(kind, name, params)
    g.connect(src, "y", name, "x")


def test_both_are_in_the_catalogue_with_plain_help():
    for kind in ("BatchNorm", "LayerNorm"):
        spec = registry.get(kind)
        assert spec.category in registry.CATEGORY_ORDER
        tip = spec.tooltip()
        assert "eps" in tip and "affine" in tip and "mean 0 and variance 1" in tip
    assert "padded steps change neither" in registry.get("BatchNorm").help
    assert registry.get("BatchNorm").has_param("momentum")


@pytest.mark.parametrize("kind", ["BatchNorm", "LayerNorm"])
def test_sequences_and_vectors_keep_their_shape(kind):
    g = series()
    add_norm(g, kind, "norm", "lstm")
    g.add_layer("SequenceLast", "last")
    g.connect("norm", "y", "last", "x")
    add_norm(g, kind, "norm_last", "last")
    assert g.errors() == []
    assert g.output("norm", "y").shape == (5, 4, 6)
    assert g.output("norm_last", "y").shape == (4, 6)
    assert g.info("norm").params == 2 * 6 and g.info("norm_last").params == 2 * 6
    assert g.info("norm").flops == 5 * 6 * 7  # per sample: 5 steps x 6 channels x 7
    g.set_param("norm", "affine", False)
    assert g.info("norm").params == 0 and g.info("norm").flops == 5 * 6 * 5


def test_a_batch_first_sequence_needs_batch_first_and_is_told_the_fix():
    g = series(first=True)
    add_norm(g, "BatchNorm", "bn", "lstm", batch_first=True)
    assert g.errors() == [] and g.output("bn", "y").shape == (5, 4, 6)  # read as (N, T, C)
    g.set_param("bn", "batch_first", False)
    (problem,) = g.errors()
    assert problem.layer == "bn" and "axis 0 is the batch (N)" in str(problem)
    assert problem.fix.param == "batch_first" and problem.fix.value is True


def test_lengths_must_be_one_per_sequence_and_only_on_a_sequence(tmp_path):
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.csv", "batch_size": 4})
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.connect("data", "data", "lstm", "x")
    add_norm(g, "BatchNorm", "bn", "lstm")
    g.connect("data", "lengths", "bn", "lengths")
    assert g.errors() == []
    g.add_layer("SequenceLast", "last")
    g.connect("bn", "y", "last", "x")
    add_norm(g, "BatchNorm", "bn_last", "last")
    g.connect("data", "lengths", "bn_last", "lengths")
    (problem,) = g.errors()
    assert problem.layer == "bn_last" and "one vector per sequence has no padded steps" in \
        str(problem)


def test_a_batch_norm_on_a_batch_of_one_is_warned_and_fixed_by_a_bigger_batch():
    g = series(batch=1)
    add_norm(g, "BatchNorm", "bn", "lstm")
    (warning,) = [p for p in g.problems() if isinstance(p, DesignWarning)]
    assert warning.layer == "bn"
    text = str(warning)
    assert text.startswith("bn trains on a batch of one (N = 1)") and "LayerNorm" in text
    assert "set data's batch_size to" in text and "\n" not in text
    hints.apply(g, warning.fix)
    assert g.layer("data").get("batch_size") > 1
    assert not [p for p in g.problems() if isinstance(p, DesignWarning)]


def one_sequence_of_four(lengths: bool = False) -> Graph:
    """SequenceClasses (batch 4) -> Slice keeping the first sequence -> LSTM -> BatchNorm
    (eps set, lengths connected or not) -> ReLU: a batch of one no batch_size can raise."""
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.ts", "batch_size": 4})
    g.add_layer("Slice", "first", {"axis": 1, "slice_point": 1})
    g.connect("data", "data", "first", "x")
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.connect("first", "a", "lstm", "x")
    add_norm(g, "BatchNorm", "bn", "lstm", eps=1e-3, momentum=0.2)
    if lengths:
        g.add_layer("Slice", "first_length", {"axis": 0, "slice_point": 1})
        g.connect("data", "lengths", "first_length", "x")
        g.connect("first_length", "a", "bn", "lengths")
    g.add_layer("ReLU", "relu")
    g.connect("bn", "y", "relu", "x")
    return g


@pytest.mark.parametrize("lengths", [False, True])
def test_a_batch_of_one_no_batch_size_can_raise_is_fixed_by_a_layer_norm(lengths):
    g = one_sequence_of_four(lengths)
    assert g.errors() == []
    (warning,) = [p for p in g.problems() if isinstance(p, DesignWarning)]
    assert str(warning) == (
        "bn trains on a batch of one (N = 1): its statistics are those of a single sequence, "
        "unlike the running statistics it uses at evaluation; replace bn with a LayerNorm, "
        "which needs no batch")
    assert (warning.fix.kind, warning.fix.text) == ("replace", "replace bn with a LayerNorm")
    order = g.names()
    hints.apply(g, warning.fix)
    bn = g.layer("bn")
    assert bn.type == "LayerNorm" and bn.params == {"eps": 1e-3}  # momentum is BatchNorm's
    assert g.names() == order  # it keeps its place
    assert [str(k) for k in g.links_into("bn") + g.links_out_of("bn")] == [
        "lstm.y -> bn.x", "bn.y -> relu.x"]  # a LayerNorm takes no lengths
    assert g.errors() == [] and g.output("relu", "y").shape == ("T", 1, 6)
    assert not [p for p in g.problems() if isinstance(p, DesignWarning)]


def test_a_layer_norm_on_a_batch_of_one_is_fine():
    g = series(batch=1)
    add_norm(g, "LayerNorm", "ln", "lstm")
    assert not [p for p in g.problems() if isinstance(p, DesignWarning)]


def test_channels_not_known_yet_are_said_on_the_layer():
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": "nowhere.csv", "batch_size": 4})
    g.add_layer("LayerNorm", "ln")
    g.connect("data", "data", "ln", "x")
    (warning,) = [p for p in g.problems() if isinstance(p, DesignWarning)]
    assert warning.layer == "ln" and "known only once the data is read" in str(warning)
    assert g.info("ln").params is None  # its scale's size waits on the data too


def char_net() -> Graph:
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 24, "batch_size": 8})
    g.add_layer("Embed", "embed", {"num_output": 32, "input_dim": 40})
    g.connect("data", "data", "embed", "x")
    add_norm(g, "BatchNorm", "bn", "embed")
    add_norm(g, "LayerNorm", "ln", "bn")
    g.add_layer("InnerProduct", "ip1", {"num_output": 40, "axis": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    g.connect("ln", "y", "ip1", "x")
    g.connect("ip1", "y", "loss", "logits")
    g.connect("data", "label", "loss", "label")
    g.pin_dims({"V": 40})
    return g


def test_the_memory_estimate_has_an_entry_for_each():
    est = estimate(char_net(), Setup("cpu"))
    values = 24 * 8 * 32
    # the input kept for backward; BatchNorm: the batch's mean and 1/std and the running
    # mean and variance (buffers: no gradient, no optimizer state), C floats each
    assert est.layers["bn"] == 4 * values + 4 * 4 * 32
    # LayerNorm: each step's mean and 1/std
    assert est.layers["ln"] == 4 * values + 2 * 4 * 24 * 8
    assert est.weights == 4 * char_net().total_params()
