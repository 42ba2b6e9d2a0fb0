"""MiniRocket in the graph: its shapes in both layouts, the checks of its lengths and its batch
axis, its output size, the plan it shares with the builder and the exports (the dilations
and bias quantiles of aeon's MiniRocket, exactly), its FLOPs and its help."""
import math

import pytest

from designer.graph import registry
from designer.graph.errors import ParamError, ShapeError
from designer.graph.hints import apply
from designer.graph.layers import rocket as R
from designer.graph.model import Graph
from designer.graph.spec import InferContext, TensorInfo
from designer.graph.validate import problem_json
from tests.nets import lengths_cut_short


def classes(tmp_path, features: int = 200, lengths: bool = True) -> Graph:
    """SequenceClasses (3 channels, padded, a batch of 4) -> MiniRocket."""
    f = tmp_path / "x.ts"
    f.write_text("@dimensions 3\n@classLabel true a b\n@data\n1,2:3,4:5,6:a\n1:2:3:b\n")
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": str(f), "batch_size": 4})
    g.add_layer("MiniRocket", "rocket", {"num_features": features})
    g.connect("data", "data", "rocket", "x")
    if lengths:
        g.connect("data", "lengths", "rocket", "lengths")
    return g


def chars(tmp_path, text: str, **params) -> Graph:
    """A graph of one CharText layer, "data", over ``text``."""
    (tmp_path / "c.txt").write_text(text)
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": str(tmp_path / "c.txt"), **params})
    return g


def rows(batch_first: bool, rocket_first: bool, **params) -> Graph:
    """MNIST rows, (28, 5, 28) or batch-first (5, 28, 28) -> MiniRocket."""
    g = Graph()
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 5,
                                      "batch_first": batch_first})
    g.add_layer("MiniRocket", "rocket", {"batch_first": rocket_first, **params})
    g.connect("data", "data", "rocket", "x")
    return g


def test_each_sequence_becomes_one_vector_of_features(tmp_path):
    g = classes(tmp_path)
    assert g.info("rocket").problems == []
    out = g.output("rocket", "y")
    assert out.shape == (4, 168) and out.batch == 0 and out.dtype == "float"


@pytest.mark.parametrize("first", [False, True])
def test_both_layouts_give_n_by_f(first):
    g = rows(first, first, num_features=840)
    assert g.info("rocket").problems == []
    assert g.output("rocket", "y").shape == (5, 840)


@pytest.mark.parametrize("first", [False, True])
def test_a_wrong_layout_says_which_axis_is_the_batch(first):
    g = rows(first, not first)
    (e,) = g.info("rocket").problems
    layout = "(N, T, C)" if not first else "(T, N, C)"
    want = "true" if first else "false"
    assert isinstance(e, ShapeError)
    assert f"rocket reads {g.output('data', 'data')} as {layout}" in str(e)
    assert f"axis {0 if first else 1} is the batch (N)" in str(e)
    assert f"set batch_first to {want}" in str(e) and "\n" not in str(e)
    g.set_param("rocket", "batch_first", first)
    assert g.info("rocket").problems == []


def test_token_ids_are_refused_until_embedded(tmp_path):
    g = chars(tmp_path, "abc " * 20, seq_len=6, batch_size=3)
    g.add_layer("MiniRocket", "rocket", {"num_features": 168})
    g.connect("data", "data", "rocket", "x")
    (e,) = g.info("rocket").problems
    assert "real-valued features" in str(e) and "Embed" in str(e)


def test_lengths_must_be_one_per_sequence(tmp_path):
    g = classes(tmp_path, lengths=False)
    (e,) = lengths_cut_short(g, "rocket")
    assert "rocket expects one length per sequence, (4,) on 'lengths', but cut gives" in str(e)
    assert e.want == (4,)


def test_lengths_of_rank_two_are_refused(tmp_path):
    g = classes(tmp_path, lengths=False)
    g.add_layer("Reshape", "two", {"shape": [2, 2], "axis": 0})
    g.connect("data", "lengths", "two", "x")
    g.connect("two", "y", "rocket", "lengths")
    (e,) = g.info("rocket").problems
    assert "one length per sequence, (4,)" in str(e)


def test_fewer_features_than_kernels_are_refused_in_one_sentence_naming_the_layer(tmp_path):
    g = classes(tmp_path)
    with pytest.raises(ParamError) as e:
        g.set_param("rocket", "num_features", 50)
    assert str(e.value) == "rocket: num_features must be a whole number from 84 to 100000, " \
        "not 50"
    assert g.layer("rocket").get("num_features") == 200  # nothing was changed
    # the shape function says it too, for a value that reached it some other way
    spec = registry.get("MiniRocket")
    ctx = InferContext("rocket", spec, {**spec.defaults(), "num_features": 83},
                       [TensorInfo((10, 4, 3), "float", None, 1), None], ["data", None])
    with pytest.raises(ShapeError) as e:
        spec.infer(ctx)
    assert str(e.value) == "rocket makes num_features 83 features, fewer than one a kernel (84)"


@pytest.mark.parametrize("asked", [84, 100, 167, 168, 1000, 9996, 10000])
def test_the_features_are_num_features_rounded_down_to_a_multiple_of_84(tmp_path, asked):
    g = classes(tmp_path, asked)
    assert R.features(asked) == 84 * (asked // 84)
    assert g.output("rocket", "y").shape == (4, 84 * (asked // 84))


def test_it_learns_no_parameters(tmp_path):
    assert classes(tmp_path).info("rocket").params == 0


def test_flops_for_known_steps(tmp_path):
    # T = 10, C = 3, 168 features (2 a kernel): dilations(10) = [1], both features there; per
    # step 84 kernels x 2 x 9 taps x 3 channels, then a comparison and a sum a feature
    g = classes(tmp_path)
    assert g.info("rocket").flops is None  # T is known only once the data is read
    g.pin_dims({"T": 10})
    assert R.dilations(10, 168, 32) == ([1], [2])
    assert g.info("rocket").flops == 10 * (84 * 2 * 9 * 3 + 2 * 168)
    # MNIST rows: T = 28, C = 28 (a kernel sums over at most 9), dilations 1 and 3
    g = rows(True, True, num_features=168)
    assert R.dilations(28, 168, 32) == ([1, 3], [1, 1])
    assert g.info("rocket").flops == 28 * (2 * 84 * 2 * 9 * 9 + 2 * 168)


def test_the_help_says_what_it_does_and_that_nothing_trains_through_it():
    spec = registry.get("MiniRocket")
    assert spec.category == "Sequence"
    assert [p.name for p in spec.inputs] == ["x", "lengths"] and spec.inputs[1].optional
    tip = spec.tooltip()
    for words in ("MiniRocket", "Dempster", "84 kernels", "No gradient flows back",
                  "first training batch", "BatchNorm and an InnerProduct", "lengths"):
        assert words in tip
    for p in spec.params:
        assert p.name in tip and p.help


# -- the plan, against aeon's own arithmetic ---------------------------------------------------

def _aeon():
    return pytest.importorskip(
        "aeon.transformations.collection.convolution_based._minirocket",
        reason="aeon (the 'peers' extra) is not installed")


LENGTHS = [9, 10, 12, 16, 17, 25, 28, 50, 64, 100, 129, 251, 300, 427, 500, 521, 1000, 1024,
           1639, 2000, 5000]


def exact_logspace(start, stop, num, base=10.0):
    """numpy's logspace with each power from libm (``float ** float``), as numpy computes it
    where it has no AVX-512 power of its own."""
    import numpy as np
    return np.array([base ** float(v) for v in np.linspace(start, stop, num)])


@pytest.mark.parametrize("num_features, max_dilations",
                         [(84, 32), (168, 32), (840, 32), (1000, 32), (9996, 32), (10000, 32),
                          (9996, 8), (20000, 64), (2000, 1)])
def test_the_dilations_are_aeons(monkeypatch, num_features, max_dilations):
    """aeon's own plan, its powers rounded as libm rounds them: numpy's AVX-512 power makes
    2 ** log2(3) 2.9999999999999996, so on such a CPU aeon runs sequences whose (T - 1) / 8 is
    3, 6, 65... at the dilation below (see the next test)."""
    aeon = _aeon()
    monkeypatch.setattr(aeon.np, "logspace", exact_logspace)
    for steps in LENGTHS + list(range(9, 600)):
        used, per = R.dilations(steps, num_features, max_dilations)
        want_d, want_n = aeon._fit_dilations(steps, num_features, max_dilations)
        assert used == want_d.tolist() and per == want_n.tolist(), steps
        assert sum(per) == num_features // 84


def test_a_dilation_that_is_a_whole_number_is_kept_whatever_numpys_power_says():
    # 25 steps: the top dilation is 2 ** log2(24 / 8) = 3, exactly; 521 steps: 65
    assert R.dilations(25, 168, 32) == ([1, 3], [1, 1])
    assert R.dilations(521, 168, 32) == ([1, 65], [1, 1])


def test_short_sequences_run_at_dilation_one():
    # aeon asks for 9 steps at least; the layer reads shorter ones at dilation 1
    for steps in range(1, 9):
        assert R.dilations(steps, 840, 32) == ([1], [10])


@pytest.mark.parametrize("n", [1, 2, 10, 84, 168, 9996])
def test_the_quantiles_are_aeons(n):
    aeon = _aeon()
    got, want = R.quantiles(n), aeon._quantiles(n)
    assert len(got) == len(want) == n
    assert max(abs(a - float(b)) for a, b in zip(got, want)) < 1e-6
    assert all(0 < q < 1 for q in got)
    assert math.isclose(got[0], (math.sqrt(5) - 1) / 2)


# -- the Problems panel: layers that learn, before a layer that passes no gradient back --------

def head(g: Graph, src: str, port: str = "y", lengths: bool = False) -> Graph:
    """``src`` -> MiniRocket -> BatchNorm -> InnerProduct K -> SoftmaxWithLoss."""
    g.add_layer("MiniRocket", "rocket", {"num_features": 168})
    g.add_layer("BatchNorm", "bn")
    g.add_layer("InnerProduct", "ip", {"num_output": 2})
    g.add_layer("SoftmaxWithLoss", "loss")
    for link in ((src, port, "rocket", "x"), ("rocket", "y", "bn", "x"), ("bn", "y", "ip", "x"),
                 ("ip", "y", "loss", "logits"), ("data", "label", "loss", "label")):
        g.connect(*link)
    if lengths:
        g.connect("data", "lengths", "rocket", "lengths")
    return g


def rocket_warnings(g: Graph) -> list:
    return [p for p in g.problems() if p.layer == "rocket"]


def sequences(tmp_path) -> Graph:
    f = tmp_path / "x.ts"
    f.write_text("@dimensions 3\n@classLabel true a b\n@data\n1,2:3,4:5,6:a\n1:2:3:b\n")
    g = Graph()
    g.add_layer("SequenceClasses", "data", {"file": str(f), "batch_size": 4})
    return g


def test_reading_the_data_directly_is_not_warned_about(tmp_path):
    g = head(sequences(tmp_path), "data", "data", lengths=True)
    assert g.errors() == [] and rocket_warnings(g) == []


def test_an_lstm_before_it_never_trains_and_the_fix_reads_the_data(tmp_path):
    g = sequences(tmp_path)
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.connect("data", "data", "lstm", "x")
    head(g, "lstm")
    (w,) = rocket_warnings(g)
    assert str(w) == ("rocket passes no gradient back, so lstm's weights never train; "
                      "connect data.data to rocket.x instead")
    assert "\n" not in str(w) and ". " not in str(w)  # one sentence
    assert problem_json(w)["severity"] == "warning"
    assert problem_json(w)["fix"] == {"kind": "rewire", "layer": "rocket",
                                      "text": "connect data.data to rocket.x instead"}
    apply(g, w.fix)
    assert g.link_into("rocket", "x").src == "data" and rocket_warnings(g) == []


def test_embedded_tokens_name_the_embedding_and_every_learned_layer_before_it(tmp_path):
    g = chars(tmp_path, "hello world " * 20, seq_len=12, batch_size=4)
    g.add_layer("Embed", "embed", {"num_output": 4})
    g.connect("data", "data", "embed", "x")
    head(g, "embed")
    g.set_param("ip", "axis", 1)
    (w,) = rocket_warnings(g)
    assert str(w) == "rocket passes no gradient back, so embed's weights never train"
    assert w.fix is None  # token ids cannot be read directly
    g.add_layer("GRU", "gru", {"num_output": 5})
    g.disconnect(g.link_into("rocket", "x"))
    g.connect("embed", "y", "gru", "x")
    g.connect("gru", "y", "rocket", "x")
    (w,) = rocket_warnings(g)
    assert str(w) == ("rocket passes no gradient back, so gru's weights never train, nor "
                      "do embed's")


def test_a_layer_that_also_reaches_the_loss_another_way_trains_and_is_not_named(tmp_path):
    g = sequences(tmp_path)
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.connect("data", "data", "lstm", "x")
    head(g, "lstm")
    g.add_layer("SequenceLast", "last")
    g.add_layer("InnerProduct", "ip2", {"num_output": 2})
    g.add_layer("SoftmaxWithLoss", "loss2")
    for link in (("lstm", "y", "last", "x"), ("last", "y", "ip2", "x"),
                 ("ip2", "y", "loss2", "logits"), ("data", "label", "loss2", "label")):
        g.connect(*link)
    assert rocket_warnings(g) == []


def test_no_warning_before_anything_learns_from_its_features(tmp_path):
    g = sequences(tmp_path)
    g.add_layer("LSTM", "lstm", {"num_output": 6})
    g.add_layer("MiniRocket", "rocket", {"num_features": 168})
    g.connect("data", "data", "lstm", "x")
    g.connect("lstm", "y", "rocket", "x")
    assert rocket_warnings(g) == []  # no loss follows it yet


# -- the memory estimate -----------------------------------------------------------------------

def test_it_keeps_nothing_for_backward_but_holds_its_buffers_and_its_forward_peak(tmp_path):
    from designer.graph.memory import Setup, estimate
    from designer.graph.memory_layers import Context, rule
    g = head(sequences(tmp_path), "data", "data", lengths=True)
    g.pin_dims({"T": 40})
    est = estimate(g, Setup("cpu"))
    params = {"num_features": 168, "max_dilations": 32, "seed": 0, "batch_first": False}
    k = rule(Context("MiniRocket", params, [((40, 4, 3), "float"), ((4,), "index")],
                     [((4, 168), "float")], "cpu", "CUDNN", 4), 0)
    assert k.inputs == [] and k.outputs == [] and k.backward == 0
    # its own buffers: 32 x 84 x 3 channel masks, 168 biases, the plan, the length, the flag
    assert k.extra == 4 * (32 * 84 * 3 + 168) + 2 * 8 * 32 + 8 + 1
    assert est.layers["rocket"] == k.extra
    assert k.forward > 4 * 4 * 84 * 40  # one dilation's responses at least
    g.set_param("rocket", "num_features", 336)
    assert estimate(g, Setup("cpu")).layers["rocket"] == k.extra + 4 * 168
