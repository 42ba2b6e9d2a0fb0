"""MinGRU and MinLSTM in the window: dropped from the palette, their engines in the form, their
unrolled net drawn step by step (a SCALE and a unit each), the lone-level warning's Fix."""
from designer.graph import Graph
from designer.graph.project import Project
from designer.ui.unrolled.items import UnrolledNode


def min_project(tmp_path, kind: str, levels: int = 1) -> str:
    g = Graph(project_dir=tmp_path)
    g.add_layer("MnistRows", "data", {"folder": "nowhere", "batch_size": 4})
    g.add_layer(kind, "rnn", {"num_output": 8, "num_layers": levels})
    g.connect("data", "data", "rnn", "x")
    g.connect("data", "label", "rnn", "lengths")
    Project(g, "min", "", {}, {}).save(tmp_path / "min.json")
    return tmp_path / "min.json"


def test_the_unrolled_view_draws_a_scale_and_a_unit_per_step(window, tmp_path):
    assert window.files.open_path(min_project(tmp_path, "MinLSTM", levels=2))
    view = window.show_unrolled("rnn", steps=4)
    types = [i.node_type for i in view.scene.items()
             if isinstance(i, UnrolledNode) and i.kind == "node"]
    assert types.count("MIN_LSTM_UNIT") == 8 and types.count("HOLD") == 8
    assert "INNER_PRODUCT" in types and types.count("INNER_PRODUCT") == 2  # input transforms
    assert "MIN_LSTM_UNIT" in view.tooltip("L1/unit_2")


def test_the_form_offers_the_scan_and_the_unrolled_net(window, tmp_path):
    assert window.files.open_path(min_project(tmp_path, "MinGRU"))
    spec = window.doc.graph.layer("rnn").spec
    assert spec.param("engine").choices == ("SCAN", "CAFFE")
    assert window.doc.graph.layer("rnn").get("engine") == "SCAN"


def test_the_lone_level_warning_is_mended_in_one_undoable_step(window, tmp_path):
    from designer.graph.errors import DesignWarning
    assert window.files.open_path(min_project(tmp_path, "MinGRU"))
    doc = window.doc
    (warning,) = [p for p in doc.graph.problems() if isinstance(p, DesignWarning)]
    assert warning.layer == "rnn" and warning.fix.param == "num_layers"
    doc.apply_fix(warning.fix)
    assert doc.graph.layer("rnn").get("num_layers") == 2
    doc.stack.undo()
    assert doc.graph.layer("rnn").get("num_layers") == 1
