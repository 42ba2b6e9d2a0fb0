"""The graph model: every change validated, shapes re-inferred downstream, events emitted."""
import pytest

from designer.graph import (CycleError, DuplicateNameError, Graph, GraphError, ParamError,
                            PortError)
from tests.conftest import need_data
from tests.nets import char_net


def char_rnn(corpus="tinyshakespeare") -> Graph:
    return char_net("LSTM", {"num_output": 512, "num_layers": 2, "dropout_ratio": 0.3},
                    name="lstm1", steps=75, batch=25, embed=15, vocab=None, corpus=corpus)


def relus(names: str) -> Graph:
    """A graph of unconnected ReLU layers, one per letter of ``names``."""
    g = Graph()
    for n in names:
        g.add_layer("ReLU", n)
    return g


@need_data("tinyshakespeare.txt")
def test_char_rnn_shapes_and_counts_match_mycaffe():
    g = char_rnn()
    assert g.dims == {"T": 75, "N": 25, "V": 65}
    assert g.output("lstm1", "y").shape == (75, 25, 512)
    assert g.output("ip1", "y").shape == (75, 25, 65)
    # torch keeps two bias vectors per LSTM layer; the Caffe net one: 2 layers x 2048 values
    assert g.total_params() == 3_214_879 + 2 * 2048
    g.set_param("lstm1", "engine", "CAFFE")
    assert g.total_params() == 3_214_879
    assert g.errors() == []


def test_unknown_corpus_leaves_v_symbolic_with_a_warning():
    g = char_rnn(corpus="no-such-corpus.txt")
    assert g.output("ip1", "y").shape == (75, 25, "V")
    assert g.info("ip1").params is None
    assert g.errors() == []
    warnings = [str(p) for p in g.problems()]
    assert any("no-such-corpus.txt" in w and "RNN_DESIGNER_DATA" in w for w in warnings)


def test_parameter_change_reinfers_only_downstream_layers():
    g = char_rnn(corpus="missing.txt")
    g.add_layer("ReLU", "side")  # unrelated layer
    seen = []
    g.shapes_changed.connect(seen.append)
    g.set_param("embed", "num_output", 32)
    assert g.output("embed", "y").shape == (75, 25, 32)
    assert seen == [{"embed", "lstm1"}]  # lstm1's count changed; its output shape did not
    assert g.info("lstm1").params == 4 * 512 * (32 + 512) + 8 * 512 + 4 * 512 * 1024 + 8 * 512
    seen.clear()
    g.set_param("lstm1", "num_output", 256)
    assert seen == [{"lstm1", "ip1"}]  # the loss's input shape is symbolic in V: unchanged


def test_events_describe_each_change():
    g = Graph()
    log = []
    for sig in ("layer_added", "layer_removed", "link_added", "link_removed", "param_changed",
                "layer_moved", "layer_renamed"):
        getattr(g, sig).connect(lambda *a, s=sig: log.append((s,) + a))
    g.add_layer("ReLU", "a")
    g.add_layer("TanH", "b")
    link = g.connect("a", "y", "b", "x")
    g.set_param("a", "negative_slope", 0.1)
    g.move_layer("b", (10, 20))
    g.rename_layer("b", "c")
    g.disconnect(g.links()[0])
    g.remove_layer("a")
    kinds = [e[0] for e in log]
    assert kinds == ["layer_added", "layer_added", "link_added", "param_changed", "layer_moved",
                     "layer_renamed", "link_removed", "layer_removed"]
    assert log[3] == ("param_changed", "a", "negative_slope", 0.0, 0.1)
    assert str(link) == "a.y -> b.x"


def test_cycles_are_refused_with_the_loop_named():
    g = relus("abc")
    g.connect("a", "y", "b", "x")
    g.connect("b", "y", "c", "x")
    with pytest.raises(CycleError) as e:
        g.connect("c", "y", "a", "x")
    assert "a -> b -> c -> a" in str(e.value)
    with pytest.raises(CycleError):
        g.connect("a", "y", "a", "x")


def test_an_input_takes_one_link_and_ports_must_exist():
    g = relus("abc")
    g.connect("a", "y", "c", "x")
    with pytest.raises(PortError) as e:
        g.connect("b", "y", "c", "x")
    assert "already fed by a.y" in str(e.value)
    with pytest.raises(PortError):
        g.connect("a", "nope", "b", "x")


def test_unconnected_required_input_is_a_problem_on_that_layer():
    g = Graph()
    g.add_layer("LSTM", "lstm1")
    (p,) = g.errors()
    assert p.kind == "unconnected" and p.layer == "lstm1"
    assert "input 'x' is not connected" in str(p)


def test_shape_mismatch_names_both_layers_and_the_dims():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("Embed", "e1", {"num_output": 32})
    g.add_layer("Embed", "e2", {"num_output": 16})
    g.add_layer("Eltwise", "sum")
    g.connect("data", "data", "e1", "x")
    g.connect("data", "data", "e2", "x")
    g.connect("e1", "y", "sum", "a")
    g.connect("e2", "y", "sum", "b")
    (p,) = g.errors()
    # found on sum, told on e2: the layer whose one parameter mends it
    assert p.kind == "shape" and p.layer == "e2"
    assert str(p) == ("sum expects the same shape as 'a' (75, 25, 32) on 'b', but e2 gives "
                      "(75, 25, 16) (dim 2 is 32 vs 16); set e2's num_output to 32 (e2 then "
                      "gives (75, 25, 32))")
    assert (p.fix.kind, p.fix.layer, p.fix.param, p.fix.value) == ("set", "e2", "num_output", 32)
    g.set_param("e2", "num_output", 32)
    assert g.errors() == []


def test_token_ids_into_an_lstm_are_explained():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("LSTM", "lstm1")
    g.connect("data", "data", "lstm1", "x")
    (p,) = g.errors()
    assert "lstm1 expects real-valued features on 'x', but data gives (75, 25) ids" in str(p)
    assert "Embed" in str(p)


def test_a_problem_upstream_does_not_cascade():
    g = Graph()
    g.add_layer("LSTM", "lstm1")
    g.add_layer("InnerProduct", "ip1")
    g.connect("lstm1", "y", "ip1", "x")
    assert [p.layer for p in g.errors()] == ["lstm1"]


def test_bad_parameter_values_are_refused_with_the_range():
    g = Graph()
    g.add_layer("LSTM", "lstm1")
    with pytest.raises(ParamError) as e:
        g.set_param("lstm1", "dropout_ratio", 1.5)
    assert str(e.value) == "lstm1: dropout_ratio must be a number from 0 to below 1, not 1.5"
    with pytest.raises(GraphError) as e:
        g.set_param("lstm1", "num_ouput", 3)
    assert "did you mean num_output" in str(e.value)
    assert g.layer("lstm1").get("dropout_ratio") == 0.0


def test_related_parameters_are_checked_together():
    g = Graph()
    g.add_layer("ReLU", "a")
    g.add_layer("Clip", "clip", {"min": 2.0, "max": 1.0})
    g.connect("a", "y", "clip", "x")
    assert any("min must be below max" in str(p) for p in g.errors())


def test_duplicate_names_are_refused_and_names_made_unique():
    g = Graph()
    g.add_layer("LSTM", "lstm1")
    with pytest.raises(DuplicateNameError):
        g.add_layer("GRU", "lstm1")
    assert g.add_layer("LSTM").name == "lstm"
    assert g.add_layer("LSTM").name == "lstm2"
    with pytest.raises(DuplicateNameError):
        g.rename_layer("lstm", "lstm1")


def test_rename_keeps_links_and_order():
    g = char_rnn(corpus="missing.txt")
    g.rename_layer("lstm1", "rnn")
    assert g.names() == ["data", "embed", "rnn", "ip1", "loss"]
    assert {str(link) for link in g.links_into("rnn")} == {"embed.y -> rnn.x"}
    assert g.output("rnn", "y").shape == (75, 25, 512)


def test_remove_returns_what_undo_needs():
    g = char_rnn(corpus="missing.txt")
    layer, links = g.remove_layer("lstm1")
    assert layer.name == "lstm1" and {str(x) for x in links} == {"embed.y -> lstm1.x",
                                                                 "lstm1.y -> ip1.x"}
    assert any(p.layer == "ip1" and p.kind == "unconnected" for p in g.errors())
    g.add_layer(layer.type, layer.name, layer.params, layer.pos)
    for link in links:
        g.connect(link.src, link.src_port, link.dst, link.dst_port)
    assert g.errors() == []


def test_connect_problem_explains_without_changing_anything():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("LSTM", "lstm1")
    g.add_layer("Embed", "embed")
    assert "real-valued" in g.connect_problem("data", "data", "lstm1", "x")
    assert g.connect_problem("data", "data", "embed", "x") is None
    assert g.links() == []


def test_reshape_and_inner_product_axis():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 10, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 8})
    g.add_layer("Reshape", "flat", {"shape": [-1, 8], "axis": 0, "num_axes": -1})
    g.add_layer("InnerProduct", "ip", {"num_output": 3, "axis": 1})
    g.connect("data", "data", "embed", "x")
    g.connect("embed", "y", "flat", "x")
    g.connect("flat", "y", "ip", "x")
    assert g.output("flat", "y").shape == (40, 8)
    assert g.output("ip", "y").shape == (40, 3)
    assert g.info("ip").params == 8 * 3 + 3


def test_a_layer_can_be_put_back_where_it_was():
    g = char_rnn(corpus="missing.txt")
    i = g.index_of("lstm1")
    layer, links = g.remove_layer("lstm1")
    g.add_layer(layer.type, layer.name, layer.params, layer.pos, index=i)
    for link in links:
        g.connect(link.src, link.src_port, link.dst, link.dst_port)
    assert g.names() == ["data", "embed", "lstm1", "ip1", "loss"]
    assert [str(k) for k in g.links()] == [
        "data.data -> embed.x", "data.label -> loss.label", "embed.y -> lstm1.x",
        "lstm1.y -> ip1.x", "ip1.y -> loss.logits"]


def test_a_port_is_not_called_good_while_its_layer_lacks_another_input():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("Embed", "embed")
    g.add_layer("LSTM", "lstm1")
    g.connect("data", "data", "embed", "x")
    verdict = g.connect_verdict("data", "cont", "lstm1", "cont")
    assert verdict.problem is None and not verdict.ok
    assert "lstm1 still needs 'x'" in verdict.pending
    g.connect("embed", "y", "lstm1", "x")
    assert g.connect_verdict("data", "cont", "lstm1", "cont").ok


def test_what_a_port_takes_is_checked_even_before_the_layer_is_complete():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt"})
    g.add_layer("LSTM", "lstm1")
    # ids into the continuation flags: wrong whatever x turns out to be
    assert "real-valued" in g.connect_problem("data", "label", "lstm1", "cont")
    assert g.links() == []


def test_a_cont_of_the_wrong_length_is_refused_once_x_is_there():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 10})
    g.add_layer("CharText", "other", {"corpus": "missing.txt", "seq_len": 7})
    g.add_layer("Embed", "embed")
    g.add_layer("LSTM", "lstm1")
    g.connect("data", "data", "embed", "x")
    g.connect("embed", "y", "lstm1", "x")
    assert "continuation flags of shape (10, 25)" in g.connect_problem(
        "other", "cont", "lstm1", "cont")
