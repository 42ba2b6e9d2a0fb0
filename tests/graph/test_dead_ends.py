"""A layer whose output reaches no loss is computed and trained for nothing: the net stays
valid, but a warning says so, with the fix that removes it; unused state outputs are fine."""
from designer.graph import DesignWarning
from designer.graph.project import load
from tests.conftest import PROJECTS


def char_rnn():
    return load(PROJECTS / "char-rnn-shakespeare.json").graph


def dead_ends(graph) -> list:
    return [p for p in graph.problems() if isinstance(p, DesignWarning)
            and p.fix is not None and p.fix.text.startswith("remove ")]


def test_the_examples_have_no_dead_end_and_unused_state_outputs_are_fine():
    g = char_rnn()  # lstm1's h and c go nowhere: that is no dead end
    assert dead_ends(g) == [] and g.errors() == []


def test_a_layer_left_dangling_warns_with_its_parameters_and_a_fix_that_removes_it():
    g = char_rnn()
    g.add_layer("GRU", "gru", {"num_output": 512}, pos=(300, 330))
    g.connect("lstm1", "y", "gru", "x")
    assert g.errors() == []  # still valid: it trains, for nothing
    (warning,) = dead_ends(g)
    assert warning.layer == "gru"
    text = str(warning)
    assert text.startswith("gru's output reaches no loss") and "1.58 M parameters" in text
    assert "remove gru, or connect gru.y to a layer on the way to the loss" in text
    assert warning.fix.kind == "bypass" and warning.fix.layer == "gru"


def test_a_dangling_chain_warns_at_its_end_and_a_lone_layer_is_an_error_not_a_warning():
    g = char_rnn()
    g.add_layer("GRU", "gru", {"num_output": 16}, pos=(300, 330))
    g.add_layer("InnerProduct", "ip2", {"num_output": 4, "axis": 2}, pos=(300, 440))
    g.connect("lstm1", "y", "gru", "x")
    g.connect("gru", "y", "ip2", "x")
    assert [w.layer for w in dead_ends(g)] == ["ip2"]
    g.add_layer("LSTM", "alone", {"num_output": 8}, pos=(600, 0))
    assert [w.layer for w in dead_ends(g)] == ["ip2"] and g.errors()
