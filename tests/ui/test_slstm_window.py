"""The sLSTM in the window: its engines in the form, its unrolled net drawn step by step (SCALE,
HEAD_INNER_PRODUCT, ELTWISE and SLSTM_UNIT each), the heads' error mended in one undoable step."""
from designer.graph import Graph
from designer.graph.project import Project
from designer.ui.unrolled.items import UnrolledNode


def slstm_project(tmp_path, heads: int = 2, levels: int = 1) -> str:
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4})
    g.add_layer("sLSTM", "rnn", {"num_output": 8, "num_heads": heads, "num_layers": levels,
                                 "batch_first": True})
    g.connect("data", "data", "rnn", "x")
    g.connect("data", "label", "rnn", "lengths")
    Project(g, "slstm", "", {}, {}).save(tmp_path / "slstm.json")
    return tmp_path / "slstm.json"


def test_the_unrolled_view_draws_each_step_with_its_head_product(window, tmp_path):
    assert window.files.open_path(slstm_project(tmp_path, levels=2))
    view = window.show_unrolled("rnn", steps=4)
    types = [i.node_type for i in view.scene.items()
             if isinstance(i, UnrolledNode) and i.kind == "node"]
    assert types.count("SLSTM_UNIT") == 8 and types.count("HEAD_INNER_PRODUCT") == 8
    assert types.count("HOLD") == 8 and types.count("INNER_PRODUCT") == 2  # input transforms
    assert "SLSTM_UNIT" in view.tooltip("L1/unit_2")


def test_the_form_offers_the_fused_engine_and_the_unrolled_net(window, tmp_path):
    assert window.files.open_path(slstm_project(tmp_path))
    spec = window.doc.graph.layer("rnn").spec
    assert spec.param("engine").choices == ("FUSED", "CAFFE")
    assert window.doc.graph.layer("rnn").get("engine") == "FUSED"


def test_a_head_count_that_does_not_divide_h_is_mended_in_one_undoable_step(window, tmp_path):
    assert window.files.open_path(slstm_project(tmp_path, heads=3))
    doc = window.doc
    (error,) = [p for p in doc.graph.problems() if p.fix is not None]
    assert error.layer == "rnn" and error.fix.param == "num_heads" and error.fix.value == 4
    doc.apply_fix(error.fix)
    assert doc.graph.layer("rnn").get("num_heads") == 4 and doc.graph.errors() == []
    doc.stack.undo()
    assert doc.graph.layer("rnn").get("num_heads") == 3


def test_the_initial_states_that_enter_one_unit_are_stacked_not_drawn_over_each_other(tmp_path):
    from designer.engines.expansion.expand import expand
    from designer.graph.project import load
    from designer.ui.unrolled.layout import input_name, layout
    graph = load(slstm_project(tmp_path)).graph
    lay = layout(expand(graph, "rnn", steps=3))
    states = [lay.boxes[input_name(s)] for s in ("h_0", "c_0", "n_0", "m_0")]
    tops = sorted(b.y for b in states)
    assert all(b - a >= 24 for a, b in zip(tops, tops[1:]))  # no two overlap
