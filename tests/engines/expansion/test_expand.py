"""The unrolled net as data: MyCaffe's per-step layers with their real shapes."""
import pytest

from designer.engines.expansion.expand import expand, expand_params
from designer.graph import Graph


def lstm_params(**kw):
    return {"num_output": 512, "num_layers": 1, "dropout_ratio": 0.0, **kw}


def test_each_step_is_scale_inner_product_eltwise_and_lstm_unit():
    e = expand_params("LSTM", lstm_params(), 75, 25, 15, "lstm1")
    assert len(e.nodes) == 4 * 75 + 4
    for t in (1, 40, 75):
        assert [n.type for n in e.step_nodes(t)] == ["SCALE", "INNER_PRODUCT", "ELTWISE",
                                                     "LSTM_UNIT"]
    unit = e.step_nodes(3)[-1]
    assert [e.shapes[b] for b in unit.bottoms] == [(1, 25, 512), (1, 25, 2048), (1, 25)]
    assert e.shapes["W_xc_x"] == (75, 25, 2048) and e.shapes["h"] == (75, 25, 512)
    assert e.weights == {"W_xc": (2048, 15), "b_c": (2048,), "W_hc": (2048, 512)}
    assert e.nodes[0].name == "x_transform" and e.nodes[-1].type == "CONCAT"


def test_two_lstms_over_75_steps_are_over_600_layers():
    total = sum(len(expand_params("LSTM", lstm_params(), 75, 25, e).nodes) for e in (15, 512))
    assert total > 600
    stacked = expand_params("LSTM", lstm_params(num_layers=2, dropout_ratio=0.3), 75, 25, 15)
    assert len(stacked.nodes) > 600 and stacked.counts()["DROPOUT"] == 1


def test_steps_chain_through_h_and_c():
    e = expand_params("LSTM", lstm_params(num_output=4), 3, "N", 2)
    edges = {(a, b) for a, b, _ in e.edges()}
    assert ("unit_1", "h_conted_1") in edges and ("unit_1", "unit_2") in edges
    assert ("W_xc_x_slice", "gate_input_2") in edges and ("cont_slice", "unit_3") in edges


@pytest.mark.parametrize("kind,unit", [("GRU", "GRU_UNIT"), ("RNN", "TANH")])
def test_gru_and_rnn_unroll_analogously(kind, unit):
    e = expand_params(kind, {"num_output": 8}, 5, 2, 3)
    types = [n.type for n in e.step_nodes(2)]
    assert types[0] == "SCALE" and types[1] == "INNER_PRODUCT" and types[-1] == unit


def test_expand_reads_shapes_from_the_graph():
    g = Graph()
    g.add_layer("CharText", "data", {"corpus": "missing.txt", "seq_len": 10, "batch_size": 4})
    g.add_layer("Embed", "embed", {"num_output": 6, "input_dim": 30})
    g.add_layer("GRU", "gru", {"num_output": 8})
    g.connect("data", "data", "embed", "x")
    with pytest.raises(ValueError, match="connect its 'x' input first"):
        expand(g, "gru")
    g.connect("embed", "y", "gru", "x")
    e = expand(g, "gru", steps=3)
    assert e.steps == 3 and e.shapes["x"] == (3, 4, 6)
    with pytest.raises(ValueError, match="only LSTM, GRU, RNN"):
        expand(g, "embed")


def test_a_bidirectional_level_adds_a_backward_chain_from_step_t_down_to_1():
    e = expand_params("LSTM", lstm_params(num_output=4, bidirectional=True), 5, 2, 3, "bi")
    assert e.directions == 2 and e.chains == 2
    back = [n for n in e.nodes if n.direction == 1 and n.step is not None]
    assert [n.step for n in back[::4]] == [5, 4, 3, 2, 1]
    assert [n.type for n in e.step_nodes(5, direction=1)] == ["SCALE", "INNER_PRODUCT",
                                                             "ELTWISE", "LSTM_UNIT"]
    first = e.step_nodes(5, direction=1)[0]
    assert first.bottoms == ("h_0_reverse", "cont_5_reverse")  # the initial state enters at T
    edges = {(a, b) for a, b, _ in e.edges()}
    assert ("unit_3_reverse", "unit_2_reverse") in edges  # the cell runs backwards in time
    assert ("unit_5_reverse", "h_conted_5_reverse") in edges
    assert e.weights["W_xc_reverse"] == (16, 3) and e.weights["W_hc_reverse"] == (16, 4)
    join = next(n for n in e.nodes if n.name == "directions_concat")
    assert join.bottoms == ("h", "h_reverse") and join.params["axis"] == 2
    assert e.shapes[e.outputs[0]] == (5, 2, 8)
    assert e.outputs[1:] == ("h_5", "c_5", "h_1_reverse", "c_1_reverse")  # torch's order


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_lengths_add_a_mask_a_hold_per_step_and_zero_the_padded_outputs(kind):
    e = expand_params(kind, {"num_output": 4, "num_layers": 2, "bidirectional": True}, 3, 2, 5,
                      lengths=True)
    assert e.inputs[:3] == ("x", "cont", "lengths") and e.nodes[0].type == "SEQUENCE_MASK"
    assert e.counts()["HOLD"] == 2 * 2 * 3  # levels x directions x steps
    hold = next(n for n in e.nodes if n.name == "L0/hold_2")
    assert hold.bottoms[-1] == "L0/valid_2" and hold.tops[-1] == "L0/h_2"
    masks = [n for n in e.nodes if n.name.endswith("mask_padding")]
    assert [m.bottoms[1] for m in masks] == ["valid", "valid"]
    assert e.outputs[0] == "L1/h_masked" and e.shapes["L1/h_masked"] == (3, 2, 8)
    data = e.to_json()
    assert {n["direction"] for n in data["nodes"]} == {0, 1} and data["directions"] == 2
