"""The unrolled-net view draws exactly the expansion the CAFFE engine runs: time steps as
columns, real shapes, steps foldable, the number of steps adjustable, fast at 600+ nodes."""

import pytest

from designer.engines.expansion.expand import expand
from designer.graph import project as P
from designer.ui.unrolled import layout as U
from designer.ui.unrolled.items import StepGroup, UnrolledNode
from tests.conftest import PROJECTS, need_data


@pytest.fixture(scope="module")
def expansion():
    return expand(P.load(PROJECTS / "char-rnn-shakespeare.json").graph, "lstm1")


def nodes_of(view, kind):
    return [i for i in view.scene.items() if isinstance(i, UnrolledNode) and i.kind == kind]


def test_steps_are_columns_and_each_step_stacks_its_four_layers(expansion):
    lay = U.layout(expansion)
    for t in (1, 2, 75):
        names = [n.name for n in expansion.step_nodes(t, level=0)]
        xs = {lay.boxes[n].x for n in names}
        ys = [lay.boxes[n].y for n in names]
        assert len(xs) == 1 and ys == sorted(ys)
    assert lay.boxes["L0/unit_2"].x - lay.boxes["L0/unit_1"].x == U.COL_W
    assert lay.boxes["L1/unit_1"].y > lay.boxes["L0/h_concat"].y  # layer 2 below layer 1


def test_a_folded_step_is_one_narrow_box_and_its_nodes_are_hidden(expansion):
    full = U.layout(expansion)
    folded = U.layout(expansion, collapsed=set(range(4, 75)))
    assert folded.width < full.width / 2
    assert "L0/unit_10" in folded.hidden and "L0/unit_3" not in folded.hidden
    assert folded.anchor("L0/unit_10") is folded.groups[(0, 10)]
    assert U.edge_points(folded, folded.boxes, "L0/h_conted_9", "L0/transform_10") is None


def test_edges_run_straight_down_a_step_and_across_to_the_next(expansion):
    lay = U.layout(expansion)
    down = U.edge_points(lay, lay.boxes, "L0/transform_1", "L0/gate_input_1")
    assert len(down) == 2 and down[0][0] == down[1][0]
    across = U.edge_points(lay, lay.boxes, "L0/unit_1", "L0/unit_2")  # the cell state
    assert len(across) == 2 and across[0][1] == across[1][1]


@need_data("tinyshakespeare.txt")
def test_the_view_draws_every_node_of_the_expansion_with_real_shapes(char_rnn, expansion):
    view = char_rnn.show_unrolled("lstm1")
    view.expand_all()
    drawn = nodes_of(view, "node") + nodes_of(view, "rail")
    assert len(drawn) == len(expansion.nodes) == 609
    units = [i for i in drawn if i.node_type == "LSTM_UNIT"]
    assert len(units) == 150 and units[0].shape_text == "(1, 25, 512)"
    inputs = {i.label for i in nodes_of(view, "input")}
    assert inputs == {"x", "cont", "L0/h_0", "L0/c_0", "L1/h_0", "L1/c_0"}
    assert "609" in view.title.text() and "LSTM_UNIT&nbsp;150" in view.legend.text()
    tip = view.tooltip("L0/unit_3")
    assert "L0/gate_input_3" in tip and "(1, 25, 2048)" in tip


def test_steps_can_be_changed_and_folded(char_rnn):
    view = char_rnn.show_unrolled("lstm1", steps=5)
    assert view.exp.steps == 5 and view.steps_box.value() == 5
    assert len(nodes_of(view, "node")) == 2 * 5 * 4 + 2 * 1 + 1  # steps, x_transforms, dropout
    assert all(i.isVisible() for i in nodes_of(view, "node"))
    view.toggle_step(3)
    hidden = [i for i in nodes_of(view, "node") if not i.isVisible()]
    assert sorted(i.name for i in hidden) == sorted(
        f"L{lv}/{n}" for lv in (0, 1) for n in ("h_conted_2", "transform_3", "gate_input_3",
                                                "unit_3"))
    group = view.groups[(0, 3)]
    assert isinstance(group, StepGroup) and group.collapsed
    view.expand_all()
    assert all(i.isVisible() for i in nodes_of(view, "node"))
    view.set_steps(8)
    assert view.exp.steps == 8 and view.collapsed == set(range(4, 8))


def test_the_view_follows_the_layer(char_rnn, qtbot):
    w = char_rnn
    view = w.show_unrolled("lstm1", steps=3)
    w.doc.set_param("lstm1", "num_output", 64)
    qtbot.waitUntil(lambda: view.exp.hidden == 64, timeout=60_000)
    w.doc.rename("lstm1", "encoder")
    assert view.layer == "encoder" and "encoder" in w.unrolled
    assert w.tabs.tabText(w.tabs.indexOf(view)) == "Unrolled: encoder"
    w.doc.remove(["encoder"])
    assert "encoder" not in w.unrolled and w.tabs.count() == 1


def test_only_recurrent_layers_with_an_input_unroll(char_rnn):
    w = char_rnn
    with pytest.raises(ValueError, match="ip1 is an InnerProduct layer"):
        w.show_unrolled("ip1")
    w.doc.remove([], [next(k for k in w.doc.graph.links() if k.dst == "lstm1")])
    with pytest.raises(ValueError, match="has no input sequence yet"):
        w.show_unrolled("lstm1")


@need_data("tinyshakespeare.txt")
def test_600_nodes_are_laid_out_and_drawn(char_rnn, qtbot):
    w = char_rnn
    view = w.show_unrolled("lstm1")  # bench_ui.py times this; a unit test checks it happens
    view.expand_all()
    view.canvas.viewport().repaint()
    assert len(view.exp.nodes) >= 600
    assert len(view.canvas.scene().items()) >= 600


@pytest.fixture(scope="module")
def both_ways():
    """Two bidirectional LSTM levels over padded sequences, 5 steps."""
    from designer.engines.expansion.expand import expand_params
    return expand_params("LSTM", {"num_output": 8, "num_layers": 2, "bidirectional": True,
                                  "dropout_ratio": 0.1}, 5, 4, 3, "bi", lengths=True)


def test_each_direction_is_its_own_band_and_the_backward_one_runs_right_to_left(both_ways):
    lay = U.layout(both_ways)
    assert [c[2] for c in lay.captions] == [
        "LAYER 1 OF 2 \u00b7 FORWARD", "LAYER 1 OF 2 \u00b7 BACKWARD, STEP T TO 1",
        "LAYER 2 OF 2 \u00b7 FORWARD", "LAYER 2 OF 2 \u00b7 BACKWARD, STEP T TO 1"]
    assert lay.backward == {1, 3}
    fwd, back = lay.boxes["L0/unit_2"], lay.boxes["L0/unit_2_reverse"]
    assert back.x == fwd.x and back.y > lay.boxes["L0/h_concat"].y  # same column, band below
    assert lay.boxes["L1/unit_1"].y > lay.boxes["L0/h_concat_reverse"].y
    # the cell state runs leftwards, straight along its row
    left = U.edge_points(lay, lay.boxes, "L0/unit_3_reverse", "L0/unit_2_reverse")
    assert left[0][0] > left[-1][0] and left[0][1] == left[-1][1]
    # and the hidden state round the gutter to the right of the step it enters
    up = U.edge_points(lay, lay.boxes, "L0/hold_3_reverse", "L0/h_conted_3_reverse")
    assert lay.boxes["L0/hold_2_reverse"].right < up[1][0] < lay.boxes["L0/hold_3_reverse"].x
    # the backward chain's initial state enters on the right of step T
    assert lay.boxes["in:L0/h_0_reverse"].x > lay.boxes["L0/unit_5_reverse"].right
    assert lay.boxes["in:L0/h_0"].x == U.INPUT_X


def test_the_once_per_layer_nodes_stack_under_the_backward_band(both_ways):
    lay = U.layout(both_ways)
    tail = [lay.boxes[n] for n in ("L0/directions_concat", "L0/mask_padding", "L0/dropout")]
    assert len({b.x for b in tail}) == 1 and tail[0].y < tail[1].y < tail[2].y
    assert tail[0].y > lay.boxes["L0/x_transform_reverse"].bottom
    assert lay.boxes["L1/x_transform"].y > tail[2].bottom
    # the valid-step flags reach the mask round the nodes between them, not through them
    path = U.edge_points(lay, lay.boxes, "valid", "L1/mask_padding")
    assert all(x < U.ONCE_X for x, _ in path[1:-1])
    assert all(lay.kinds[n] == "rail" for n in ("L0/valid_slice", "L1/valid_slice_reverse"))


def test_the_view_draws_the_backward_chain(window, tmp_path):
    from designer.graph import Graph
    from designer.graph.project import Project
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4})
    g.add_layer("GRU", "gru", {"num_output": 8, "bidirectional": True})
    g.connect("data", "data", "gru", "x")
    g.connect("data", "label", "gru", "lengths")
    Project(g, "bi", "", {}, {}).save(tmp_path / "bi.json")
    assert window.files.open_path(tmp_path / "bi.json")
    view = window.show_unrolled("gru", steps=4)
    holds = [i for i in nodes_of(view, "node") if i.node_type == "HOLD"]
    assert len(holds) == 8
    backward = [g for (band, _), g in view.groups.items() if band == 1]
    assert len(backward) == 4 and all(g.backward for g in backward)
    assert "both directions" in view.title.text() and "padded by lengths" in view.title.text()
    assert "backward chain" in view.tooltip("unit_2_reverse")
    inputs = {i.label for i in nodes_of(view, "input")}
    assert inputs == {"x", "cont", "lengths", "h_0", "h_0_reverse"}
